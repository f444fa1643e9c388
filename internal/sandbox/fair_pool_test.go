//go:build linux

package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/script"
)

// One member's message with 12 parallel scripts (issue 18, finding 3) made another
// organization's one-line script wait for all of them. Now the other organization's script
// and a colleague's start at once, the member runs at most MaxPerUser at a time, and her
// waiting scripts are told they are queued.
func TestOneUsersBatchDoesNotHoldUpAnotherOrganizationsScript(t *testing.T) {
	p := newPool(t, Options{Size: 4})
	waitPids(t, p, 4)
	const scriptTime = 500 * time.Millisecond
	helpers := []script.Helper{{Name: "work", Parameters: `{"type":"object"}`}}
	var mu sync.Mutex
	running, most := map[string]int{}, map[string]int{}
	startedAt := map[string]time.Time{}
	work := func(ctx context.Context, _ int, _ string, args map[string]any) (any, error) {
		user, _ := args["user"].(string)
		mu.Lock()
		running[user]++
		most[user] = max(most[user], running[user])
		if _, ok := startedAt[user]; !ok {
			startedAt[user] = time.Now()
		}
		mu.Unlock()
		defer func() { mu.Lock(); running[user]--; mu.Unlock() }()
		select {
		case <-time.After(scriptTime):
			return "done", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	var queued, started atomic.Int32
	positions := make(chan int, 12)
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := Owner{Org: "acme", User: "mallory",
				Queued: func(pos int) { queued.Add(1); positions <- pos }, Started: func() { started.Add(1) }}
			_, err := p.RunFor(context.Background(), o, `work(user="mallory")`, helpers, work, script.Limits{})
			assert.NoError(t, err)
		}()
	}
	require.Eventually(t, func() bool { return p.queue.waiting() == 10 }, 10*time.Second, time.Millisecond)

	// Another organization's one-line script does not wait for the batch.
	begin := time.Now()
	res, err := p.RunFor(context.Background(), Owner{Org: "globex", User: "bob"}, "result = 1", nil, nil, script.Limits{})
	wait := time.Since(begin)
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Value)
	t.Logf("another organization's one-line script took %s behind a batch of 12 scripts of %s", wait, scriptTime)
	assert.Less(t, wait, scriptTime/2, "it starts at once, not after the batch")

	// Nor does a colleague's, in the same organization.
	begin = time.Now()
	_, err = p.RunFor(context.Background(), Owner{Org: "acme", User: "carol"}, `work(user="carol")`, helpers, work, script.Limits{})
	require.NoError(t, err)
	mu.Lock()
	colleagueWait := startedAt["carol"].Sub(begin)
	mu.Unlock()
	assert.Less(t, colleagueWait, scriptTime/2, "a colleague's script starts at once")

	wg.Wait()
	assert.Equal(t, 2, most["mallory"], "one user runs at most MaxPerUser scripts at once")
	assert.EqualValues(t, 10, queued.Load(), "every script that waited was told so")
	assert.EqualValues(t, 10, started.Load())
	close(positions)
	seen := map[int]bool{}
	for pos := range positions {
		seen[pos] = true
	}
	for pos := 1; pos <= 10; pos++ {
		assert.True(t, seen[pos], "position %d reported", pos)
	}
}

// A script waiting in line gives up while its whole time limit still fits before the caller's
// deadline (the tool activity's), with an error saying why, rather than being timed out there
// and run again.
func TestAScriptGivesUpWaitingWhileItsTimeStillFitsTheDeadline(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	waitPids(t, p, 1)
	h := &parentHelpers{}
	blocked, unblock := context.WithCancel(context.Background())
	defer unblock()
	go func() {
		_, _ = p.RunFor(blocked, Owner{Org: "a", User: "u"}, "block()", testHelpers, h.call, script.Limits{})
	}()
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.calls) == 1 }, 10*time.Second, time.Millisecond)

	limits := script.Limits{Timeout: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), limits.Timeout+killGrace+time.Second+300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.RunFor(ctx, Owner{Org: "b", User: "v"}, "result = 1", nil, nil, limits)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the script sandboxes stayed busy with other scripts too long")
	assert.Less(t, time.Since(start), time.Second, "it gave up when the rest of its time no longer fitted")
	assert.NoError(t, ctx.Err(), "before the caller's deadline")
}
