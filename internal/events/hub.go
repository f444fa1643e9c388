package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Hub gives one API process a single Redis subscription per topic that has local clients,
// reference-counted, and fans each event out to those clients without letting any of them
// slow the others: a listener whose buffer is full is marked overflowed and dropped.
type Hub struct {
	bus *Bus
	ps  *redis.PubSub

	mu        sync.Mutex
	listeners map[string]map[*Listener]struct{} // by Redis channel
	confirm   map[string][]chan struct{}        // subscriptions waiting for Redis' confirmation
	closed    bool
}

// Listener is one local client's view of a topic. Its queue grows only while the client is
// behind, so an idle connection holds no buffer.
type Listener struct {
	Ready    chan struct{} // signalled when Take has events
	Overflow chan struct{} // closed when the client fell too far behind (limit events queued)
	Resync   chan struct{} // signalled when the Redis subscription was re-established: check the log for a gap
	channel  string
	once     sync.Once

	mu    sync.Mutex
	queue []Raw
	limit int
}

// Take returns the queued live events in publish order and empties the queue.
func (l *Listener) Take() []Raw {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue
	l.queue = nil
	return q
}

func (l *Listener) deliver(raw Raw) {
	l.mu.Lock()
	full := len(l.queue) >= l.limit
	if !full {
		l.queue = append(l.queue, raw)
	}
	l.mu.Unlock()
	if full {
		l.once.Do(func() { close(l.Overflow) })
		return
	}
	select {
	case l.Ready <- struct{}{}:
	default:
	}
}

// NewHub starts the hub's subscription loop; Close stops it.
func (b *Bus) NewHub() *Hub {
	h := &Hub{bus: b, ps: b.rdb.Subscribe(context.Background()), listeners: map[string]map[*Listener]struct{}{}, confirm: map[string][]chan struct{}{}}
	go h.run()
	return h
}

func (h *Hub) run() {
	for msg := range h.ps.ChannelWithSubscriptions(redis.WithChannelSize(4096)) {
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			h.mu.Lock()
			waiting := h.confirm[m.Channel]
			delete(h.confirm, m.Channel)
			if len(waiting) == 0 {
				// Not asked for now: go-redis re-subscribed after a reconnect, and events
				// published meanwhile were lost. Listeners fill the gap from the log.
				for l := range h.listeners[m.Channel] {
					select {
					case l.Resync <- struct{}{}:
					default:
					}
				}
			}
			h.mu.Unlock()
			for _, c := range waiting {
				close(c)
			}
		case *redis.Message:
			pos, err := PeekCursor([]byte(m.Payload))
			if err != nil {
				continue
			}
			raw := Raw{Seq: pos.Seq, Epoch: pos.Epoch, JSON: []byte(m.Payload)}
			h.mu.Lock()
			for l := range h.listeners[m.Channel] {
				l.deliver(raw)
			}
			h.mu.Unlock()
		}
	}
}

// Subscribe adds a listener that may queue up to size events. It returns once Redis confirmed the
// topic's subscription, so every event published afterwards reaches the listener (or its
// overflow), and the caller may read the log without missing anything in between.
func (h *Hub) Subscribe(ctx context.Context, topic string, size int) (*Listener, error) {
	channel := h.bus.keys(topic).channel
	l := &Listener{Ready: make(chan struct{}, 1), limit: size, Overflow: make(chan struct{}), Resync: make(chan struct{}, 1), channel: channel}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errors.New("events: hub closed")
	}
	set, active := h.listeners[channel]
	if !active {
		set = map[*Listener]struct{}{}
		h.listeners[channel] = set
	}
	set[l] = struct{}{}
	var wait chan struct{}
	if !active || len(h.confirm[channel]) > 0 {
		wait = make(chan struct{})
		h.confirm[channel] = append(h.confirm[channel], wait)
	}
	h.mu.Unlock()
	if wait == nil {
		return l, nil
	}
	if !active {
		if err := h.ps.Subscribe(ctx, channel); err != nil {
			h.Unsubscribe(l)
			return nil, fmt.Errorf("events: subscribe: %w", err)
		}
	}
	select {
	case <-wait:
		return l, nil
	case <-ctx.Done():
		h.Unsubscribe(l)
		return nil, fmt.Errorf("events: subscribe: %w", ctx.Err())
	}
}

// Unsubscribe removes a listener; the topic's Redis subscription ends with its last listener.
func (h *Hub) Unsubscribe(l *Listener) {
	h.mu.Lock()
	set := h.listeners[l.channel]
	delete(set, l)
	last := len(set) == 0 && set != nil
	if last {
		delete(h.listeners, l.channel)
	}
	h.mu.Unlock()
	if last {
		_ = h.ps.Unsubscribe(context.Background(), l.channel)
	}
}

// Topics is the number of topics with local listeners (one Redis subscription each).
func (h *Hub) Topics() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.listeners)
}

// Close ends the subscription loop.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	return h.ps.Close()
}

// Tail returns up to n of the newest logged events of a topic, oldest first. The log holds
// one epoch (a new epoch starts with an empty log).
func (b *Bus) Tail(ctx context.Context, topic string, n int64) ([]Raw, error) {
	entries, err := b.rdb.XRevRangeN(ctx, b.keys(topic).log, "+", "-", n).Result()
	if err != nil {
		return nil, err
	}
	out, err := raws(entries)
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// WorkspaceTopic names a workspace's topic (sync progress and other workspace-wide events).
func WorkspaceTopic(workspaceID string) string { return "workspace:" + workspaceID }
