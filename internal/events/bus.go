// Package events is the event bus between the workers that produce conversation events and
// the API processes that relay them to clients. Each topic (an agent, later a workspace) has
// a strictly increasing seq, a bounded log in a Redis Stream for resume, and a pub/sub
// channel for live delivery; one Lua script does all three atomically.
package events

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options bound what a topic keeps.
type Options struct {
	Prefix    string        // key prefix, e.g. "sapagent:"
	LogMaxLen int64         // events kept per topic log (approximate trim)
	LogTTL    time.Duration // a topic's log expires this long after its last event
	DedupTTL  time.Duration // how long a re-published event ID is recognised
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
	return &Bus{rdb: rdb, opts: opts, pipe: newPipeline(rdb)}
}

// AgentTopic names the topic of one conversation.
func AgentTopic(agentID string) string { return "agent:" + agentID }

// Event is what producers hand to Publish. Fields are flattened into the wire object next to
// "seq", "type" and "id" (docs/events.md).
type Event struct {
	ID     string         // stable across retries of the same logical event; dedup key
	Type   string         // protocol type: status, stream, message, ...
	Fields map[string]any // type-specific payload
}

//go:embed publish.lua
var publishLua string

var publishScript = redis.NewScript(publishLua)

func (b *Bus) keys(topic string) (seqKey, logKey, channel, dedupPrefix string) {
	// The hash tag keeps a topic's keys in one cluster slot, as the script requires.
	base := b.opts.Prefix + "{" + topic + "}"
	return base + ":seq", base + ":log", base + ":live", base + ":ev:"
}

// Publish appends the event to the topic's log and notifies live subscribers, returning its
// seq. Publishing an event ID seen within DedupTTL returns the original seq and adds nothing.
func (b *Bus) Publish(ctx context.Context, topic string, ev Event) (int64, error) {
	if ev.Type == "" {
		return 0, errors.New("events: event without type")
	}
	body := make(map[string]any, len(ev.Fields)+3)
	for k, v := range ev.Fields {
		body[k] = v
	}
	body["type"] = ev.Type
	body["id"] = ev.ID
	body["ts"] = time.Now().UTC().Format(time.RFC3339Nano)
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("events: encode %s: %w", ev.Type, err)
	}
	seqKey, logKey, channel, dedupPrefix := b.keys(topic)
	dedupKey := ""
	if ev.ID != "" {
		dedupKey = dedupPrefix + ev.ID
	}
	res, err := b.pipe.run(ctx, []string{seqKey, logKey, dedupKey},
		channel, string(raw), b.opts.LogMaxLen, int64(b.opts.LogTTL/time.Second), int64(b.opts.DedupTTL/time.Second))
	if err != nil {
		return 0, fmt.Errorf("events: publish %s: %w", ev.Type, err)
	}
	return res, nil
}

// Close stops the publish pipeline; call it before closing the Redis client.
func (b *Bus) Close() { b.pipe.close() }

// Raw is one event as it travels on the wire, with its seq parsed out.
type Raw struct {
	Seq  int64
	JSON []byte
}

// LastSeq is the newest seq of a topic (0 when nothing was published).
func (b *Bus) LastSeq(ctx context.Context, topic string) (int64, error) {
	seqKey, _, _, _ := b.keys(topic)
	n, err := b.rdb.Get(ctx, seqKey).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// Since returns the logged events with seq > after, oldest first, and whether the log still
// reaches back to after+1 (false: events were trimmed and the client must resynchronise).
func (b *Bus) Since(ctx context.Context, topic string, after int64) ([]Raw, bool, error) {
	_, logKey, _, _ := b.keys(topic)
	entries, err := b.rdb.XRange(ctx, logKey, "("+strconv.FormatInt(after, 10)+"-0", "+").Result()
	if err != nil {
		return nil, false, err
	}
	out := make([]Raw, 0, len(entries))
	for _, e := range entries {
		seq, err := streamSeq(e.ID)
		if err != nil {
			return nil, false, err
		}
		s, _ := e.Values["e"].(string)
		out = append(out, Raw{Seq: seq, JSON: []byte(s)})
	}
	last, err := b.LastSeq(ctx, topic)
	if err != nil {
		return nil, false, err
	}
	// Incomplete when events after `after` were trimmed, and when the topic's counter is behind
	// the client (Redis lost its data and restarted numbering): both need a fresh snapshot.
	complete := last >= after && (len(out) == 0 || out[0].Seq == after+1)
	return out, complete, nil
}

func streamSeq(id string) (int64, error) {
	ms, _, _ := strings.Cut(id, "-")
	return strconv.ParseInt(ms, 10, 64)
}

// PeekSeq reads the seq of a wire event without decoding the rest. The script always writes
// it first: {"seq":N,...}.
func PeekSeq(raw []byte) (int64, error) {
	const head = `{"seq":`
	if len(raw) < len(head) || string(raw[:len(head)]) != head {
		return 0, errors.New("events: no seq")
	}
	end := len(head)
	for end < len(raw) && raw[end] >= '0' && raw[end] <= '9' {
		end++
	}
	return strconv.ParseInt(string(raw[len(head):end]), 10, 64)
}

// Ping checks Redis answers.
func (b *Bus) Ping(ctx context.Context) error { return b.rdb.Ping(ctx).Err() }
