package connector

import "context"

// CallSlots are a system's max_concurrent_calls: how many calls SAP gets from the connector at
// once. The server holds one for each protocol call. A backend's own SAP calls count against the
// same slots: the parallel reads of a protocol call share the call's slot (while it waits for
// them) with free ones of the pool (Take), and work outside any protocol call (sapbackend's
// read-ahead) runs only when a slot is free (TryHold).
type CallSlots struct{ pool chan struct{} }

// NewCallSlots makes n slots (at least one).
func NewCallSlots(n int) *CallSlots { return &CallSlots{pool: make(chan struct{}, max(1, n))} }

// Cap is how many calls may run at once.
func (s *CallSlots) Cap() int { return cap(s.pool) }

type heldKey struct{}

// held is a slot taken from slots that its holder lends to its own reads (lent is full while
// one of them uses it).
type held struct {
	slots *CallSlots
	lent  chan struct{}
}

// holding marks ctx as running under one slot of s that the caller already took.
func (s *CallSlots) holding(ctx context.Context) context.Context {
	return context.WithValue(ctx, heldKey{}, &held{slots: s, lent: make(chan struct{}, 1)})
}

// TryHold takes a free slot for work outside any protocol call; ok is false when none is free.
// The returned context lends the slot to the work's reads (Take); release gives it back.
func (s *CallSlots) TryHold(ctx context.Context) (_ context.Context, release func(), ok bool) {
	select {
	case s.pool <- struct{}{}:
		return s.holding(ctx), func() { <-s.pool }, true
	default:
		return ctx, nil, false
	}
}

// Take waits for a slot for one SAP call: the slot ctx's holder holds (a protocol call, or
// TryHold's work) when none of its other reads uses it, else a free one of the pool.
func (s *CallSlots) Take(ctx context.Context) (release func(), err error) {
	var lent chan struct{} // nil: ctx holds no slot of s, and a nil channel never receives
	if h, ok := ctx.Value(heldKey{}).(*held); ok && h.slots == s {
		lent = h.lent
	}
	select {
	case lent <- struct{}{}:
		return func() { <-lent }, nil
	case s.pool <- struct{}{}:
		return func() { <-s.pool }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SlotSharer is a Backend that calls SAP on its own: NewServer gives it its system's CallSlots
// before it serves, so those calls count against max_concurrent_calls with the protocol calls.
type SlotSharer interface {
	ShareCallSlots(*CallSlots)
}
