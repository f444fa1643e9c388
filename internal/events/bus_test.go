package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
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

	for _, want := range []int64{1, 2} {
		select {
		case ev := <-sub.C:
			assert.Equal(t, want, ev.Seq)
			var body map[string]any
			require.NoError(t, json.Unmarshal(ev.JSON, &body))
			assert.Equal(t, float64(want), body["seq"])
		case <-time.After(2 * time.Second):
			t.Fatal("live event missing")
		}
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("republished event delivered twice: %s", ev.JSON)
	case <-time.After(100 * time.Millisecond):
	}

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
