package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	s1, err := bus.Publish(ctx, topic, Event{ID: "e1", Type: "status", Fields: map[string]any{"status": "active"}})
	require.NoError(t, err)
	s2, err := bus.Publish(ctx, topic, Event{ID: "e2", Type: "stream", Fields: map[string]any{"delta": "Hel"}})
	require.NoError(t, err)
	again, err := bus.Publish(ctx, topic, Event{ID: "e1", Type: "status", Fields: map[string]any{"status": "active"}})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 1}, []int64{s1, s2, again}, "a retried publish keeps its first seq")

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
		var body map[string]any
		require.NoError(t, json.Unmarshal(live[i].JSON, &body))
		assert.Equal(t, float64(want), body["seq"])
	}
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, live, 2)
	assert.Empty(t, sub.Take(), "republished event delivered twice")

	last, err := bus.LastSeq(ctx, topic)
	require.NoError(t, err)
	assert.Equal(t, int64(2), last)
	logged, complete, err := bus.Since(ctx, topic, 0)
	require.NoError(t, err)
	assert.True(t, complete)
	require.Len(t, logged, 2)
	assert.JSONEq(t, `"Hel"`, mustField(t, logged[1].JSON, "delta"))
}

func TestSinceReportsATrimmedLog(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{LogMaxLen: 5})
	topic := AgentTopic("a2")
	for i := 0; i < 300; i++ {
		_, err := bus.Publish(ctx, topic, Event{Type: "stream", Fields: map[string]any{"delta": "x"}})
		require.NoError(t, err)
	}
	_, complete, err := bus.Since(ctx, topic, 1)
	require.NoError(t, err)
	assert.False(t, complete, "events after seq 1 were trimmed: the client must resynchronise")
	tail, complete, err := bus.Since(ctx, topic, 298)
	require.NoError(t, err)
	assert.True(t, complete)
	require.Len(t, tail, 2)
	assert.Equal(t, int64(300), tail[1].Seq)
	none, complete, err := bus.Since(ctx, topic, 300)
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Empty(t, none)
}

func TestPublishRejectsEventsWithoutType(t *testing.T) {
	bus := newBus(t, Options{})
	_, err := bus.Publish(context.Background(), AgentTopic("a3"), Event{ID: "x"})
	require.Error(t, err)
}

func TestPeekSeq(t *testing.T) {
	n, err := PeekSeq([]byte(`{"seq":1234,"type":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1234), n)
	_, err = PeekSeq([]byte(`{"type":"x","seq":1}`))
	assert.Error(t, err)
}

func mustField(t *testing.T, raw []byte, field string) string {
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &body))
	return string(body[field])
}

func TestSinceDetectsARestartedCounter(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("a4")
	for i := 0; i < 3; i++ {
		_, err := bus.Publish(ctx, topic, Event{Type: "stream", Fields: map[string]any{"delta": "x"}})
		require.NoError(t, err)
	}
	_, complete, err := bus.Since(ctx, topic, 3)
	require.NoError(t, err)
	assert.True(t, complete)
	_, complete, err = bus.Since(ctx, topic, 50)
	require.NoError(t, err)
	assert.False(t, complete, "a client ahead of the counter saw events Redis no longer has")
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
				s, err := bus.Publish(ctx, topic, Event{Type: "stream", Fields: map[string]any{"delta": "x"}})
				assert.NoError(t, err)
				seqs <- s
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
	logged, complete, err := bus.Since(ctx, topic, 0)
	require.NoError(t, err)
	assert.True(t, complete)
	assert.Len(t, logged, publishers*each)
}

func TestPublishAfterCloseFails(t *testing.T) {
	bus := newBus(t, Options{})
	_, err := bus.Publish(context.Background(), AgentTopic("x"), Event{Type: "status"})
	require.NoError(t, err)
	bus.Close()
	_, err = bus.Publish(context.Background(), AgentTopic("x"), Event{Type: "status"})
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
		_, err := bus.Publish(ctx, topic, Event{Type: "stream", Fields: map[string]any{"delta": "x"}})
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
