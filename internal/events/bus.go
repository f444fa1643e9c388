// Package events is the event bus between the workers that produce conversation events and
// the API processes that relay them to clients. Each topic (an agent, a workspace) has a
// strictly increasing seq within an epoch, a bounded log in a Redis Stream for resume, and a
// pub/sub channel for live delivery; one Lua script does all three atomically. A new epoch
// starts whenever the topic's counter is missing (new topic, or Redis lost its data), so a
// resume cursor from the old numbering is recognised instead of being read as the new one.
package events

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sapagent/sapagent/internal/events/frames"
)

// Options bound what a topic keeps.
type Options struct {
	Prefix    string        // key prefix, e.g. "sapagent:"
	LogMaxLen int64         // events kept per topic log (approximate trim)
	LogTTL    time.Duration // a topic's log expires this long after its last event
	DedupTTL  time.Duration // how long a re-published event ID is recognised
	// CounterTTL: a topic's seq counter and epoch expire this long after it was last used (at
	// least LogTTL); its next event then starts a new epoch, as after a Redis data loss.
	CounterTTL time.Duration
}

// Bus publishes and subscribes; safe for concurrent use.
type Bus struct {
	rdb  *redis.Client
	opts Options
	pipe *pipeline
}

// New wraps a Redis client.
func New(rdb *redis.Client, opts Options) *Bus {
	if opts.LogMaxLen <= 0 {
		opts.LogMaxLen = 10000
	}
	if opts.LogTTL <= 0 {
		opts.LogTTL = 24 * time.Hour
	}
	if opts.DedupTTL <= 0 {
		opts.DedupTTL = time.Hour
	}
	if opts.CounterTTL <= 0 {
		opts.CounterTTL = DefaultCounterTTL
	}
	opts.CounterTTL = max(opts.CounterTTL, opts.LogTTL)
	return &Bus{rdb: rdb, opts: opts, pipe: newPipeline(rdb)}
}

// DefaultCounterTTL keeps a topic's numbering for a month after its last event.
const DefaultCounterTTL = 30 * 24 * time.Hour

// ErrTopicDeleted: the topic was deleted (DeleteTopic) and publishes nothing any more.
var ErrTopicDeleted = errors.New("events: the topic was deleted")

// AgentTopic names the topic of one conversation.
func AgentTopic(agentID string) string { return "agent:" + agentID }

// Event is what producers hand to Publish: a frame of the protocol (package frames) and the
// producer's ID for it. The wire object is the frame's fields after "seq", "epoch", "type",
// "id" and "ts" (docs/events.md).
type Event struct {
	ID    string // stable across retries of the same logical event; dedup key
	Frame frames.Frame
}

// encode writes the event as the script expects it: an object without seq and epoch.
func (ev Event) encode(now time.Time) ([]byte, error) {
	if ev.Frame == nil || ev.Frame.FrameType() == "" {
		return nil, errors.New("events: event without type")
	}
	fields, err := json.Marshal(ev.Frame)
	if err != nil {
		return nil, fmt.Errorf("events: encode %s: %w", ev.Frame.FrameType(), err)
	}
	if len(fields) < 2 || fields[0] != '{' {
		return nil, fmt.Errorf("events: a %s frame is not a JSON object", ev.Frame.FrameType())
	}
	head, err := json.Marshal(struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		TS   string `json:"ts"`
	}{ev.Frame.FrameType(), ev.ID, now.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return nil, err
	}
	if string(fields) == "{}" {
		return head, nil
	}
	// {"type":…,"id":…,"ts":…} + {fields} → {"type":…,"id":…,"ts":…,fields}
	out := make([]byte, 0, len(head)+len(fields))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	return append(out, fields[1:]...), nil
}

//go:embed publish.lua
var publishLua string

var publishScript = redis.NewScript(publishLua)

type topicKeys struct {
	seq, epoch, log, channel, dedupPrefix, deleted string
}

func (b *Bus) keys(topic string) topicKeys {
	// The hash tag keeps a topic's keys in one cluster slot, as the script requires.
	base := b.opts.Prefix + "{" + topic + "}"
	return topicKeys{seq: base + ":seq", epoch: base + ":epoch", log: base + ":log", channel: base + ":live", dedupPrefix: base + ":ev:", deleted: base + ":deleted"}
}

// newEpoch is the epoch the script starts when a topic has none. Random, so a topic whose
// data Redis lost never gets its old epoch back.
func newEpoch() string { return strconv.FormatUint(rand.Uint64(), 36) }

// Publish appends the event to the topic's log and notifies live subscribers, returning its
// position. Publishing an event ID seen within DedupTTL (in the same epoch) returns the
// original position and adds nothing.
func (b *Bus) Publish(ctx context.Context, topic string, ev Event) (Cursor, error) {
	raw, err := ev.encode(time.Now())
	if err != nil {
		return Cursor{}, err
	}
	k := b.keys(topic)
	dedupKey := ""
	if ev.ID != "" {
		dedupKey = k.dedupPrefix + ev.ID
	}
	res, err := b.pipe.run(ctx, []string{k.seq, k.epoch, k.log, dedupKey, k.deleted},
		k.channel, string(raw), b.opts.LogMaxLen, int64(b.opts.LogTTL/time.Second), int64(b.opts.DedupTTL/time.Second), newEpoch(), b.counterTTL())
	if err != nil {
		return Cursor{}, fmt.Errorf("events: publish %s: %w", ev.Frame.FrameType(), scriptError(err))
	}
	return res, nil
}

// Close stops the publish pipeline; call it before closing the Redis client.
func (b *Bus) Close() { b.pipe.close() }

// Raw is one event as it travels on the wire, with its position parsed out.
type Raw struct {
	Seq   int64
	Epoch string // "" only for events logged before epochs existed
	JSON  []byte
}

// Cursor is a position in a topic: an epoch and a seq within it. Its text form, the resume
// cursor clients send back, is "<epoch>:<seq>".
type Cursor struct {
	Epoch string
	Seq   int64
}

// String is the cursor's wire form; a cursor without epoch prints as a bare seq.
func (c Cursor) String() string {
	if c.Epoch == "" {
		return strconv.FormatInt(c.Seq, 10)
	}
	return c.Epoch + ":" + strconv.FormatInt(c.Seq, 10)
}

// ParseCursor reads "<epoch>:<seq>", or a bare "<seq>" from clients older than epochs: that
// one has no epoch, so it can never be confirmed and resumes nothing (the client gets init).
func ParseCursor(s string) (Cursor, error) {
	epoch, seq, found := strings.Cut(s, ":")
	if !found {
		epoch, seq = "", s
	} else if !validEpoch(epoch) {
		return Cursor{}, errors.New("events: bad cursor epoch")
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n < 0 {
		return Cursor{}, errors.New("events: bad cursor seq")
	}
	return Cursor{Epoch: epoch, Seq: n}, nil
}

func validEpoch(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}

// Head is the topic's current position: its epoch and newest seq (0 when nothing was
// published in this epoch). A topic without an epoch (new, or its data lost) gets one now,
// so every cursor the API hands out names an epoch.
func (b *Bus) Head(ctx context.Context, topic string) (Cursor, error) {
	k := b.keys(topic)
	res, err := publishScript.Run(ctx, b.rdb, []string{k.seq, k.epoch, k.log, "", k.deleted}, k.channel, "", 0, 0, 0, newEpoch(), b.counterTTL()).Slice()
	if err != nil {
		return Cursor{}, fmt.Errorf("events: head: %w", scriptError(err))
	}
	return scriptCursor(res)
}

func (b *Bus) counterTTL() int64 { return int64(b.opts.CounterTTL / time.Second) }

// scriptError is ErrTopicDeleted for the script's refusal of a deleted topic.
func scriptError(err error) error {
	if redis.HasErrorPrefix(err, "TOPIC_DELETED") {
		return ErrTopicDeleted
	}
	return err
}

// scriptCursor reads the script's {seq, epoch} reply.
func scriptCursor(res []any) (Cursor, error) {
	if len(res) != 2 {
		return Cursor{}, fmt.Errorf("events: unexpected script reply %v", res)
	}
	seq, ok1 := res[0].(int64)
	epoch, ok2 := res[1].(string)
	if !ok1 || !ok2 {
		return Cursor{}, fmt.Errorf("events: unexpected script reply %v", res)
	}
	return Cursor{Epoch: epoch, Seq: seq}, nil
}

// Since returns the logged events after `from`, oldest first, the topic's head, and whether
// they are exactly what the client missed. Not complete (the client must resynchronise with a
// fresh init) when `from` has no epoch or another epoch than the topic's (Redis lost its data
// and numbering restarted), or when events after `from` were trimmed or expired from the log.
func (b *Bus) Since(ctx context.Context, topic string, from Cursor) ([]Raw, Cursor, bool, error) {
	k := b.keys(topic)
	var rng *redis.XMessageSliceCmd
	var head *redis.SliceCmd
	// One MULTI: the log and the head are read at the same instant.
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		rng = p.XRange(ctx, k.log, "("+strconv.FormatInt(from.Seq, 10)+"-0", "+")
		head = p.MGet(ctx, k.seq, k.epoch)
		return nil
	})
	if err != nil {
		return nil, Cursor{}, false, err
	}
	var h Cursor
	if v := head.Val(); len(v) == 2 {
		if s, ok := v[0].(string); ok {
			h.Seq, _ = strconv.ParseInt(s, 10, 64)
		}
		h.Epoch, _ = v[1].(string)
	}
	if from.Epoch == "" || from.Epoch != h.Epoch || h.Seq < from.Seq {
		return nil, h, false, nil
	}
	out, err := raws(rng.Val())
	if err != nil {
		return nil, h, false, err
	}
	for _, r := range out {
		// No epoch: written by a publisher older than epochs, which counts on the same counter.
		if r.Epoch != h.Epoch && r.Epoch != "" {
			return nil, h, false, nil
		}
	}
	// Nothing logged after `from` is complete only when nothing was published after it.
	complete := len(out) == 0 && h.Seq == from.Seq || len(out) > 0 && out[0].Seq == from.Seq+1
	return out, h, complete, nil
}

func raws(entries []redis.XMessage) ([]Raw, error) {
	out := make([]Raw, len(entries))
	for i, e := range entries {
		seq, err := streamSeq(e.ID)
		if err != nil {
			return nil, err
		}
		s, _ := e.Values["e"].(string)
		out[i] = Raw{Seq: seq, JSON: []byte(s)}
		if pos, err := PeekCursor(out[i].JSON); err == nil {
			out[i].Epoch = pos.Epoch
		}
	}
	return out, nil
}

func streamSeq(id string) (int64, error) {
	ms, _, _ := strings.Cut(id, "-")
	return strconv.ParseInt(ms, 10, 64)
}

// PeekCursor reads the seq and epoch of a wire event without decoding the rest. The script
// always writes them first: {"seq":N,"epoch":"E",...} (events logged before epochs existed
// have only the seq; their epoch is "").
func PeekCursor(raw []byte) (Cursor, error) {
	const head, epochHead = `{"seq":`, `,"epoch":"`
	if len(raw) < len(head) || string(raw[:len(head)]) != head {
		return Cursor{}, errors.New("events: no seq")
	}
	end := len(head)
	for end < len(raw) && raw[end] >= '0' && raw[end] <= '9' {
		end++
	}
	seq, err := strconv.ParseInt(string(raw[len(head):end]), 10, 64)
	if err != nil {
		return Cursor{}, err
	}
	c := Cursor{Seq: seq}
	rest := raw[end:]
	if len(rest) >= len(epochHead) && string(rest[:len(epochHead)]) == epochHead {
		rest = rest[len(epochHead):]
		if n := bytes.IndexByte(rest[:min(len(rest), 40)], '"'); n > 0 {
			c.Epoch = string(rest[:n])
		}
	}
	return c, nil
}

// Ping checks Redis answers.
func (b *Bus) Ping(ctx context.Context) error { return b.rdb.Ping(ctx).Err() }
