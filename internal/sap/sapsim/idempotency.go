package sapsim

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// What a system remembers of keyed writes (docs/connector-protocol.md, "Idempotent writes").
const (
	idempotencyCapacity = 10_000         // keys per system; the least recently used go first
	idempotencyTTL      = 24 * time.Hour // a key not seen for this long is forgotten
)

// remembered is one keyed write: its request body's hash and, once it has run, its answer.
type remembered struct {
	scope  string
	body   [sha256.Size]byte
	done   chan struct{} // closed when the first call has finished
	answer json.RawMessage
	seen   time.Time
	elem   *list.Element
}

// memo is a system's memory of keyed writes, scoped by connector key, SAP user and key. Only
// calls that succeeded are remembered: a refused call changed nothing and may be retried.
type memo struct {
	mu       sync.Mutex
	entries  map[string]*remembered
	order    *list.List // front: most recently used
	capacity int
	now      func() time.Time
}

func newMemo() *memo {
	return &memo{entries: map[string]*remembered{}, order: list.New(), capacity: idempotencyCapacity, now: time.Now}
}

// idempotencyScope is the memo key of a request, or "" when it carries no Idempotency-Key.
func idempotencyScope(cred Credentials, u user) string {
	if cred.IdempotencyKey == "" {
		return ""
	}
	return cred.ConnectorKey + "\x00" + u.name + "\x00" + cred.IdempotencyKey
}

// do runs a keyed write once: a repeated scope with the same body gets the first answer
// (waiting for it while the first call still runs), one with another body is refused.
func (m *memo) do(ctx context.Context, scope string, body []byte, run func() (any, error)) (any, error) {
	sum := sha256.Sum256(body)
	for {
		m.mu.Lock()
		now := m.now()
		m.expire(now)
		r, ok := m.entries[scope]
		if !ok {
			r = &remembered{scope: scope, body: sum, done: make(chan struct{}), seen: now}
			r.elem = m.order.PushFront(r)
			m.entries[scope] = r
			m.evict()
			m.mu.Unlock()
			out, err := run()
			m.finish(r, out, err)
			return out, err
		}
		if r.body != sum {
			m.mu.Unlock()
			return nil, errorf(http.StatusUnprocessableEntity, sap.ErrIdempotencyKeyReused, "",
				"this Idempotency-Key was already used for a different request; a new request needs a new key")
		}
		r.seen = now
		m.order.MoveToFront(r.elem)
		m.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, errorf(http.StatusGatewayTimeout, sap.ErrTimeout, "", "the first call with this Idempotency-Key is still running")
		}
		if r.answer != nil {
			return r.answer, nil
		}
		// The first call failed and was forgotten: this one runs.
	}
}

// finish records the first call's answer, or forgets the key when it failed.
func (m *memo) finish(r *remembered, out any, err error) {
	var raw json.RawMessage
	if err == nil {
		raw, err = json.Marshal(out)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		r.answer = raw
	} else {
		m.remove(r)
	}
	close(r.done)
}

// forget drops keys whose effect did not last (their staged changes were rolled back or
// their session expired), so a retry runs again instead of answering from memory.
func (m *memo) forget(scopes []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, scope := range scopes {
		if r, ok := m.entries[scope]; ok {
			m.remove(r)
		}
	}
}

// remove drops r if it is still the entry of its scope; callers hold m.mu.
func (m *memo) remove(r *remembered) {
	if m.entries[r.scope] == r {
		delete(m.entries, r.scope)
		m.order.Remove(r.elem)
	}
}

// expire drops keys not seen for idempotencyTTL (the least recently used are at the back).
func (m *memo) expire(now time.Time) {
	for e := m.order.Back(); e != nil; e = m.order.Back() {
		r := e.Value.(*remembered)
		if now.Sub(r.seen) < idempotencyTTL {
			return
		}
		m.remove(r)
	}
}

// evict keeps at most capacity keys, dropping the least recently used finished ones.
func (m *memo) evict() {
	for e := m.order.Back(); e != nil && len(m.entries) > m.capacity; {
		prev := e.Prev()
		r := e.Value.(*remembered)
		select {
		case <-r.done:
			m.remove(r)
		default: // still running: its caller is waiting for it
		}
		e = prev
	}
}
