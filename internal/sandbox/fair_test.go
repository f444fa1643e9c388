package sandbox

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grantOrder queues the owners' scripts behind a full queue, then frees places one at a time
// and returns whose script got each.
func grantOrder(t *testing.T, q *fairQueue, hold []Owner, owners []Owner) []string {
	t.Helper()
	var held []func()
	for _, o := range hold {
		r, err := q.acquire(context.Background(), o)
		require.NoError(t, err)
		held = append(held, r)
	}
	got := make(chan string, len(owners))
	for i, o := range owners {
		name := fmt.Sprintf("%s/%s#%d", o.Org, o.User, i)
		go func() {
			r, err := q.acquire(context.Background(), o)
			if assert.NoError(t, err) {
				got <- name
				r() // done at once: the next place goes to the next in line
			}
		}()
		// Each arrives after the previous is in line (the order of arrival matters).
		require.Eventually(t, func() bool { return q.waiting() == i+1 }, 5*time.Second, time.Millisecond)
	}
	// Freeing one place lets the whole line through, one script at a time.
	held[0]()
	var order []string
	for range owners {
		select {
		case n := <-got:
			order = append(order, n)
		case <-time.After(5 * time.Second):
			t.Fatalf("stuck after %v", order)
		}
	}
	for _, r := range held[1:] {
		r()
	}
	return order
}

func TestTheFairQueueServesOrganizationsThenUsersInTurnAndEachUserInOrder(t *testing.T) {
	q := newFairQueue(1, 1, 1)
	a1, a2, b1 := Owner{Org: "A", User: "u1"}, Owner{Org: "A", User: "u2"}, Owner{Org: "B", User: "v1"}
	order := grantOrder(t, q, []Owner{{Org: "X", User: "x"}}, []Owner{a1, a1, a1, a1, a2, b1, b1})
	assert.Equal(t, []string{
		"A/u1#0", "B/v1#5", // organizations in turn
		"A/u2#4", "B/v1#6", // within A, the next user
		"A/u1#1", "A/u1#2", "A/u1#3", // then u1's line, in order
	}, order)
}

func TestTheFairQueueHoldsPerOrganizationAndPerUserLimits(t *testing.T) {
	q := newFairQueue(4, 3, 2)
	a1 := Owner{Org: "A", User: "u1"}
	var rel []func()
	for range 2 {
		r, err := q.acquire(context.Background(), a1)
		require.NoError(t, err)
		rel = append(rel, r)
	}
	// u1's third script waits although two places are free.
	queued := make(chan int, 1)
	third := make(chan func(), 1)
	go func() {
		r, err := q.acquire(context.Background(), Owner{Org: "A", User: "u1", Queued: func(p int) { queued <- p }})
		if assert.NoError(t, err) {
			third <- r
		}
	}()
	assert.Equal(t, 1, <-queued, "first in line")
	// A colleague takes the third place of the organization; another organization the fourth.
	r, err := q.acquire(context.Background(), Owner{Org: "A", User: "u2"})
	require.NoError(t, err)
	rel = append(rel, r)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = q.acquire(ctx, Owner{Org: "A", User: "u3"})
	require.ErrorContains(t, err, "waiting for a free sandbox", "the organization is at its limit")
	r, err = q.acquire(context.Background(), Owner{Org: "B", User: "v1"})
	require.NoError(t, err)
	rel = append(rel, r)
	assert.Equal(t, 1, q.waiting(), "the cancelled script left the line")

	rel[0]() // one of u1's ends: its third starts
	select {
	case r := <-third:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("u1's third script did not start")
	}
	for _, r := range rel[1:] {
		r()
	}
	assert.Equal(t, 0, q.running)
	assert.Empty(t, q.orgRun)
	assert.Empty(t, q.userRun)
	assert.Equal(t, 2, q.peak("A", "u1"), "u1 never held more than her limit")
	assert.Equal(t, 1, q.peak("A", "u2"))
	assert.Equal(t, 0, q.peak("A", "u3"), "the script that gave up never ran")
}

func TestAScriptGivingUpInLineLeavesNoTrace(t *testing.T) {
	q := newFairQueue(1, 1, 1)
	r, err := q.acquire(context.Background(), Owner{Org: "A", User: "u"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	started := false
	go func() {
		_, err := q.acquire(ctx, Owner{Org: "B", User: "v", Started: func() { started = true }})
		done <- err
	}()
	require.Eventually(t, func() bool { return q.waiting() == 1 }, 5*time.Second, time.Millisecond)
	cancel(errors.New("the user pressed stop"))
	err = <-done
	require.ErrorContains(t, err, "the user pressed stop")
	assert.False(t, started)
	assert.Equal(t, 0, q.waiting())
	assert.Empty(t, q.orgs)
	r()
	r() // releasing twice counts once
	assert.Equal(t, 0, q.running)
	r2, err := q.acquire(context.Background(), Owner{Org: "B", User: "v"})
	require.NoError(t, err)
	r2()
}

func TestQueuePositionsFollowTheServingOrder(t *testing.T) {
	q := newFairQueue(1, 1, 1)
	r, err := q.acquire(context.Background(), Owner{Org: "X", User: "x"})
	require.NoError(t, err)
	defer r()
	positions := make(chan int, 8)
	enqueue := func(o Owner) {
		n := q.waiting()
		o.Queued = func(p int) { positions <- p }
		go func() {
			if r, err := q.acquire(context.Background(), o); err == nil {
				r()
			}
		}()
		require.Eventually(t, func() bool { return q.waiting() == n+1 }, 5*time.Second, time.Millisecond)
	}
	a := Owner{Org: "A", User: "u"}
	for range 3 {
		enqueue(a)
	}
	assert.Equal(t, 1, <-positions)
	assert.Equal(t, 2, <-positions)
	assert.Equal(t, 3, <-positions)
	enqueue(Owner{Org: "B", User: "v"})
	assert.Equal(t, 2, <-positions, "another organization's script comes right after A's first")
}
