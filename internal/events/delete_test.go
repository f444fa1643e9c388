package events

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeleteTopicRemovesEveryKeyOfTheTopicOnly(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	gone, kept := AgentTopic("a1"), AgentTopic("a10")
	for _, topic := range []string{gone, kept} {
		for _, id := range []string{"e1", "e2", "e3"} {
			_, err := bus.Publish(ctx, topic, Event{ID: id, Type: "message", Fields: map[string]any{"content": "secret figures"}})
			require.NoError(t, err)
		}
	}
	keysOf := func(topic string) []string {
		keys, err := bus.rdb.Keys(ctx, globEscape(bus.opts.Prefix+"{"+topic+"}")+"*").Result()
		require.NoError(t, err)
		return keys
	}
	require.Len(t, keysOf(gone), 6, "seq, epoch, log and three dedup keys")

	require.NoError(t, bus.DeleteTopic(ctx, gone))
	assert.Empty(t, keysOf(gone))
	assert.Len(t, keysOf(kept), 6, "another topic keeps its events")
	require.NoError(t, bus.DeleteTopic(ctx, gone), "idempotent")

	c, err := bus.Publish(ctx, gone, Event{ID: "e1", Type: "status"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Seq, "a publish after deletion starts afresh")
}
