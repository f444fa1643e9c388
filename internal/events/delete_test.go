package events

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events/frames"
)

func TestDeleteTopicRemovesEveryKeyOfTheTopicOnly(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	gone, kept := AgentTopic("a1"), AgentTopic("a10")
	for _, topic := range []string{gone, kept} {
		for _, id := range []string{"e1", "e2", "e3"} {
			_, err := bus.Publish(ctx, topic, Event{ID: id, Frame: frames.TitleUpdate{Title: "secret figures"}})
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
	assert.Equal(t, []string{bus.keys(gone).deleted}, keysOf(gone), "only the tombstone is left")
	assert.Len(t, keysOf(kept), 6, "another topic keeps its events")
	require.NoError(t, bus.DeleteTopic(ctx, gone), "idempotent")

}

// A late event (a cancelled activity that publishes after the deletion's final sweep) is
// refused and brings back nothing: before, it recreated a seq counter and an epoch that never
// expired, and logged the event's content for a day.
func TestPublishAfterDeleteTopicIsRefusedAndLeavesNoKeys(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{})
	topic := AgentTopic("late")
	_, err := bus.Publish(ctx, topic, Event{ID: "e1", Frame: frames.TitleUpdate{Title: "secret figures"}})
	require.NoError(t, err)
	require.NoError(t, bus.DeleteTopic(ctx, topic))

	_, err = bus.Publish(ctx, topic, Event{ID: "e2", Frame: frames.Stream{MessageID: "m", Delta: "late secret", N: 1}})
	assert.ErrorIs(t, err, ErrTopicDeleted)
	_, err = bus.Publish(ctx, topic, Event{Frame: frames.Status{Status: "idle"}})
	assert.ErrorIs(t, err, ErrTopicDeleted)
	_, err = bus.Head(ctx, topic)
	assert.ErrorIs(t, err, ErrTopicDeleted, "a socket's head read recreates nothing either")

	keys, err := bus.rdb.Keys(ctx, globEscape(bus.opts.Prefix+"{"+topic+"}")+"*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{bus.keys(topic).deleted}, keys, "only the tombstone is left")
	ttl, err := bus.rdb.TTL(ctx, bus.keys(topic).deleted).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 23*time.Hour, "the tombstone outlives any activity that could still publish")
	assert.LessOrEqual(t, ttl, 24*time.Hour, "and then goes too")
}

// Every key a topic has expires: a topic nobody publishes to (or deletes) any more does not
// stay in Redis for ever.
func TestEveryKeyOfATopicExpires(t *testing.T) {
	ctx := context.Background()
	bus := newBus(t, Options{LogTTL: time.Hour, CounterTTL: 48 * time.Hour})
	topic := AgentTopic("forgotten")
	first, err := bus.Publish(ctx, topic, Event{ID: "e1", Frame: frames.Status{Status: "active"}})
	require.NoError(t, err)
	_, err = bus.Publish(ctx, topic, Event{Frame: frames.Stream{MessageID: "m", Delta: "x", N: 1}})
	require.NoError(t, err)
	head, err := bus.Head(ctx, AgentTopic("only-read"))
	require.NoError(t, err)
	require.NotEmpty(t, head.Epoch)

	for _, tp := range []string{topic, AgentTopic("only-read")} {
		keys, err := bus.rdb.Keys(ctx, globEscape(bus.opts.Prefix+"{"+tp+"}")+"*").Result()
		require.NoError(t, err)
		require.NotEmpty(t, keys)
		for _, k := range keys {
			ttl, err := bus.rdb.TTL(ctx, k).Result()
			require.NoError(t, err)
			assert.Greater(t, ttl, time.Duration(0), "%s expires", k)
		}
	}
	ttl, err := bus.rdb.TTL(ctx, bus.keys(topic).seq).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 47*time.Hour, "the counter lives CounterTTL after the last event")

	// Once the counter and epoch expired, numbering starts in a new epoch: an old cursor is
	// never mistaken for the new numbering.
	require.NoError(t, bus.rdb.Del(ctx, bus.keys(topic).seq, bus.keys(topic).epoch).Err())
	next, err := bus.Publish(ctx, topic, Event{ID: "e3", Frame: frames.Status{Status: "idle"}})
	require.NoError(t, err)
	assert.NotEqual(t, first.Epoch, next.Epoch)
	assert.Equal(t, int64(1), next.Seq)
}
