package events

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events/frames"
)

// A Redis that accepts connections and never answers holds a publisher no longer than its ctx
// allows (issue 18: an unbounded publish held a sent message's 202 until the API gave up).
func TestPublishReturnsAtTheCallersDeadlineWhenRedisHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	t.Cleanup(func() { _ = rdb.Close() })
	bus := New(rdb, Options{Prefix: "hung:"})
	t.Cleanup(bus.Close)

	for i := 0; i < 3; i++ { // the first goes out at once, the others queue behind it
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		_, err := bus.Publish(ctx, AgentTopic("a"), Event{ID: "e", Frame: frames.Status{Status: "active"}})
		cancel()
		assert.Error(t, err)
		assert.Less(t, time.Since(start), time.Second, "publish %d waited past its deadline", i)
	}
}
