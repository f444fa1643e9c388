package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events/frames"
)

// newBus talks to the real Redis under a random prefix, so runs never collide.
func newBus(t *testing.T, opts Options) *Bus {
	url := os.Getenv("TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	o, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	opts.Prefix = "sapagent-test-" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), opts.Prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	return New(rdb, opts)
}

func TestPublishNumbersEventsAndIgnoresRepublishedIDs(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("a1")
	hub := bus.NewHub()
	defer hub.Close()
	sub, err := hub.Subscribe(ctx, topic, 16)
	require.NoError(t, err)
	defer hub.Unsubscribe(sub)

	s1, err := bus.Publish(ctx, topic, Event{ID: "e1", Frame: frames.Status{Status: "active"}})
	require.NoError(t, err)
	s2, err := bus.Publish(ctx, topic, Event{ID: "e2", Frame: frames.Stream{MessageID: "m", Delta: "Hel", N: 1}})
	require.NoError(t, err)
	again, err := bus.Publish(ctx, topic, Event{ID: "e1", Frame: frames.Status{Status: "active"}})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 1}, []int64{s1.Seq, s2.Seq, again.Seq}, "a retried publish keeps its first seq")
	require.NotEmpty(t, s1.Epoch)
	assert.Equal(t, []string{s1.Epoch, s1.Epoch}, []string{s2.Epoch, again.Epoch}, "one epoch while Redis keeps the topic")

	var live []Raw
	deadline := time.After(2 * time.Second)
	for len(live) < 2 {
		select {
		case <-sub.Ready:
			live = append(live, sub.Take()...)
		case <-deadline:
			t.Fatalf("live events missing, got %d", len(live))
		}
	}
	for i, want := range []int64{1, 2} {
		assert.Equal(t, want, live[i].Seq)
		assert.Equal(t, s1.Epoch, live[i].Epoch)
		var body map[string]any
		require.NoError(t, json.Unmarshal(live[i].JSON, &body))
		assert.Equal(t, float64(want), body["seq"])
		assert.Equal(t, s1.Epoch, body["epoch"], "every event names its epoch")
	}
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, live, 2)
	assert.Empty(t, sub.Take(), "republished event delivered twice")

	head, err := bus.Head(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, Cursor{Epoch: s1.Epoch, Seq: 2}, head)
	logged, _, complete, err := bus.Since(ctx, topic, Cursor{Epoch: s1.Epoch})
	require.NoError(t, err)
	assert.True(t, complete)
	require.Len(t, logged, 2)
	assert.JSONEq(t, `"Hel"`, mustField(t, logged[1].JSON, "delta"))
}

func TestSinceReportsATrimmedLog(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{LogMaxLen: 5})
	topic := AgentTopic("a2")
	var pos Cursor
	for i := 0; i < 300; i++ {
		var err error
		pos, err = bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "x", N: 1}})
		require.NoError(t, err)
	}
	at := func(seq int64) Cursor { return Cursor{Epoch: pos.Epoch, Seq: seq} }
	_, _, complete, err := bus.Since(ctx, topic, at(1))
	require.NoError(t, err)
	assert.False(t, complete, "events after seq 1 were trimmed: the client must resynchronise")
	tail, head, complete, err := bus.Since(ctx, topic, at(298))
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Equal(t, at(300), head)
	require.Len(t, tail, 2)
	assert.Equal(t, int64(300), tail[1].Seq)
	none, _, complete, err := bus.Since(ctx, topic, at(300))
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Empty(t, none)

	// The log expires a day after the last event while the counter lives on: a cursor from
	// before the expiry cannot be served from the (empty) log.
	require.NoError(t, bus.rdb.Del(ctx, bus.keys(topic).log).Err())
	_, _, complete, err = bus.Since(ctx, topic, at(298))
	require.NoError(t, err)
	assert.False(t, complete, "events 299 and 300 are gone with the log")
}

func TestPublishRejectsEventsWithoutType(t *testing.T) {
	bus := newBus(t, Options{})
	_, err := bus.Publish(context.Background(), AgentTopic("a3"), Event{ID: "x"})
	require.Error(t, err)
}

func TestPeekCursor(t *testing.T) {
	c, err := PeekCursor([]byte(`{"seq":1234,"epoch":"k3v9","type":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, Cursor{Epoch: "k3v9", Seq: 1234}, c)
	c, err = PeekCursor([]byte(`{"seq":7,"type":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, Cursor{Seq: 7}, c, "an event logged before epochs has none")
	_, err = PeekCursor([]byte(`{"type":"x","seq":1}`))
	assert.Error(t, err)
}

func TestCursorText(t *testing.T) {
	for text, want := range map[string]Cursor{"k3v9:12": {Epoch: "k3v9", Seq: 12}, "0": {}, "42": {Seq: 42}, "abc:0": {Epoch: "abc"}} {
		got, err := ParseCursor(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
		assert.Equal(t, text, got.String())
	}
	for _, bad := range []string{"", ":5", "K3:5", "a:b", "a:-1", "-1", "a:1:2", "a b:1", "x:", strings.Repeat("a", 33) + ":1"} {
		_, err := ParseCursor(bad)
		assert.Error(t, err, bad)
	}
}

func mustField(t *testing.T, raw []byte, field string) string {
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &body))
	return string(body[field])
}

// loseTopic deletes a topic's keys, as a Redis that restarted without its data would have lost them.
func loseTopic(t *testing.T, bus *Bus, topic string, keep ...string) {
	k := bus.keys(topic)
	for _, key := range []string{k.seq, k.epoch, k.log} {
		if !slices.Contains(keep, key) {
			require.NoError(t, bus.rdb.Del(context.Background(), key).Err())
		}
	}
}

func TestANewEpochStartsWhenRedisLosesTheTopic(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("a4")
	first, err := bus.Head(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(0), first.Seq)
	require.NotEmpty(t, first.Epoch, "a topic gets its epoch before its first event")
	again, err := bus.Head(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	for i := 0; i < 3; i++ {
		pos, err := bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "x", N: 1}})
		require.NoError(t, err)
		assert.Equal(t, Cursor{Epoch: first.Epoch, Seq: int64(i + 1)}, pos, "publishing continues the epoch the API handed out")
	}
	_, _, complete, err := bus.Since(ctx, topic, Cursor{Epoch: first.Epoch, Seq: 3})
	require.NoError(t, err)
	assert.True(t, complete)

	loseTopic(t, bus, topic)
	for i := 0; i < 5; i++ {
		_, err := bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "y", N: 1}})
		require.NoError(t, err)
	}
	head, err := bus.Head(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(5), head.Seq, "numbering restarted")
	assert.NotEqual(t, first.Epoch, head.Epoch, "so did the epoch")
	// The new counter is past the old cursor and the log holds seq 4 and 5, yet they are not
	// what that client missed.
	logged, got, complete, err := bus.Since(ctx, topic, Cursor{Epoch: first.Epoch, Seq: 3})
	require.NoError(t, err)
	assert.False(t, complete, "a cursor from another epoch must get a fresh init")
	assert.Empty(t, logged)
	assert.Equal(t, head, got)
	_, _, complete, err = bus.Since(ctx, topic, Cursor{Seq: 3})
	require.NoError(t, err)
	assert.False(t, complete, "a cursor without epoch can never be confirmed")
	logged, _, complete, err = bus.Since(ctx, topic, Cursor{Epoch: head.Epoch, Seq: 3})
	require.NoError(t, err)
	assert.True(t, complete)
	require.Len(t, logged, 2)
	assert.Equal(t, head.Epoch, logged[1].Epoch)
	tail, err := bus.Tail(ctx, topic, 100)
	require.NoError(t, err)
	require.Len(t, tail, 5, "the log holds the new epoch only")
	assert.Equal(t, head.Epoch, tail[0].Epoch)
}

// Redis may evict one key of a topic and not the others (maxmemory): a lost counter starts a
// new epoch with a fresh log (its stream IDs would otherwise refuse seq 1); a lost epoch
// alone starts a new epoch that continues the counter.
func TestPartlyLostTopicsStartAConsistentEpoch(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("a5")
	publish := func(id string) Cursor {
		pos, err := bus.Publish(ctx, topic, Event{ID: id, Frame: frames.Status{Status: "active"}})
		require.NoError(t, err)
		return pos
	}
	e1 := publish("e1")
	publish("e2")
	k := bus.keys(topic)

	loseTopic(t, bus, topic, k.epoch, k.log) // only the counter is gone
	e3 := publish("e3")
	assert.Equal(t, int64(1), e3.Seq)
	assert.NotEqual(t, e1.Epoch, e3.Epoch)
	tail, err := bus.Tail(ctx, topic, 10)
	require.NoError(t, err)
	require.Len(t, tail, 1, "the old numbering's log was dropped")
	// The dedup key of e1 survived, but e1 was published in the lost epoch: clients of the new
	// one never saw it, so a retry publishes it again.
	again := publish("e1")
	assert.Equal(t, Cursor{Epoch: e3.Epoch, Seq: 2}, again)
	assert.Equal(t, again, publish("e1"), "within one epoch a retry is still recognised")

	loseTopic(t, bus, topic, k.seq, k.log) // only the epoch is gone
	e4 := publish("e4")
	assert.Equal(t, int64(3), e4.Seq, "the counter continues")
	assert.NotEqual(t, e3.Epoch, e4.Epoch)
	_, _, complete, err := bus.Since(ctx, topic, Cursor{Epoch: e3.Epoch, Seq: 2})
	require.NoError(t, err)
	assert.False(t, complete)
}

// A topic published to before epochs existed has a counter, a log of events without epoch and
// dedup keys holding bare seqs; it gets an epoch that continues its numbering.
func TestTopicsFromBeforeEpochsContinueTheirNumbering(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("a6")
	k := bus.keys(topic)
	require.NoError(t, bus.rdb.Set(ctx, k.seq, 7, 0).Err())
	require.NoError(t, bus.rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.log, ID: "7-0", Values: []string{"e", `{"seq":7,"type":"status","id":"old","status":"idle"}`}}).Err())
	require.NoError(t, bus.rdb.Set(ctx, k.dedupPrefix+"old", "7", time.Minute).Err())

	pos, err := bus.Publish(ctx, topic, Event{ID: "old", Frame: frames.Status{Status: "idle"}})
	require.NoError(t, err)
	assert.Equal(t, int64(7), pos.Seq, "the retry of an event logged before epochs is recognised")
	pos, err = bus.Publish(ctx, topic, Event{ID: "new", Frame: frames.Status{Status: "active"}})
	require.NoError(t, err)
	assert.Equal(t, int64(8), pos.Seq)
	require.NotEmpty(t, pos.Epoch)
	tail, err := bus.Tail(ctx, topic, 10)
	require.NoError(t, err)
	require.Len(t, tail, 2)
	assert.Equal(t, "", tail[0].Epoch)
	assert.Equal(t, pos.Epoch, tail[1].Epoch)
	// A worker older than epochs still publishes on the same counter during a rolling upgrade.
	require.NoError(t, bus.rdb.Incr(ctx, k.seq).Err())
	require.NoError(t, bus.rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.log, ID: "9-0", Values: []string{"e", `{"seq":9,"type":"status","id":"late","status":"idle"}`}}).Err())
	logged, head, complete, err := bus.Since(ctx, topic, pos)
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Equal(t, Cursor{Epoch: pos.Epoch, Seq: 9}, head)
	require.Len(t, logged, 1)
}

// Concurrent publishers share pipelines; every event still gets its own seq, none is lost,
// and a flushed script cache (Redis restarted) is recovered from transparently.
func TestConcurrentPublishesShareRoundTripsWithoutLosingSeqs(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("busy")
	require.NoError(t, bus.rdb.ScriptFlush(ctx).Err())

	const publishers, each = 50, 40
	seqs := make(chan int64, publishers*each)
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				pos, err := bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "x", N: 1}})
				assert.NoError(t, err)
				seqs <- pos.Seq
			}
		}()
	}
	wg.Wait()
	close(seqs)
	seen := map[int64]bool{}
	for s := range seqs {
		assert.False(t, seen[s], "seq %d handed out twice", s)
		seen[s] = true
	}
	for s := int64(1); s <= publishers*each; s++ {
		assert.True(t, seen[s], "seq %d missing", s)
	}
	head, err := bus.Head(ctx, topic)
	require.NoError(t, err)
	logged, _, complete, err := bus.Since(ctx, topic, Cursor{Epoch: head.Epoch})
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Len(t, logged, publishers*each)
}

func TestPublishAfterCloseFails(t *testing.T) {
	bus := newBus(t, Options{})
	_, err := bus.Publish(context.Background(), AgentTopic("x"), Event{Frame: frames.Status{Status: "idle"}})
	require.NoError(t, err)
	bus.Close()
	_, err = bus.Publish(context.Background(), AgentTopic("x"), Event{Frame: frames.Status{Status: "idle"}})
	require.Error(t, err)
}

// A listener that is not read queues up to its limit, then is told it overflowed; the hub
// never blocks on it.
func TestListenerOverflowsAtItsLimit(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	hub := bus.NewHub()
	defer hub.Close()
	topic := AgentTopic("slow")
	slow, err := hub.Subscribe(ctx, topic, 3)
	require.NoError(t, err)
	fast, err := hub.Subscribe(ctx, topic, 100)
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		_, err := bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "x", N: 1}})
		require.NoError(t, err)
	}
	select {
	case <-slow.Overflow:
	case <-time.After(2 * time.Second):
		t.Fatal("slow listener never overflowed")
	}
	assert.Len(t, slow.Take(), 3)
	var got []Raw
	for deadline := time.Now().Add(2 * time.Second); len(got) < 5 && time.Now().Before(deadline); {
		got = append(got, fast.Take()...)
		time.Sleep(10 * time.Millisecond)
	}
	assert.Len(t, got, 5, "the fast listener gets every event")
}
