package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapindex"
)

func (f *syncFixture) setDown(down bool) {
	f.pages.mu.Lock()
	defer f.pages.mu.Unlock()
	f.pages.down = down
}

// A phase whose connector is down records on its run what it waits for — the connector's
// message without the key, the phase, the attempt, since when — keeps "since" while the wait
// goes on, and clears it with the first page that arrives again.
func TestIndexPhaseRecordsItsWaitForTheConnectorAndClearsIt(t *testing.T) {
	old := syncPageTries
	syncPageTries = 2
	t.Cleanup(func() { syncPageTries = old })
	f := newSyncFixture(t, sapsim.Options{GeneratedObjects: 100})
	ctx := context.Background()
	const phase = sapindex.PhaseCustomObjects

	f.setDown(true)
	_, err := f.a.IndexPhase(ctx, f.input(phase))
	require.Error(t, err)
	assert.True(t, retryable(err), "an outage is retried")
	run, err := f.a.index().GetSyncRun(ctx, f.ws, f.runID)
	require.NoError(t, err)
	require.NotNil(t, run.Waiting, "the run says it waits")
	assert.Equal(t, "SYSTEM_UNAVAILABLE: SAP system ECC is down for maintenance (key [redacted])", run.Waiting.Reason)
	assert.Equal(t, phase, run.Waiting.Phase)
	assert.Equal(t, int32(1), run.Waiting.Attempt)
	assert.WithinDuration(t, time.Now(), run.Waiting.Since, 10*time.Second)
	since := run.Waiting.Since

	_, err = f.a.IndexPhase(ctx, f.input(phase))
	require.Error(t, err)
	run, err = f.a.index().GetSyncRun(ctx, f.ws, f.runID)
	require.NoError(t, err)
	require.NotNil(t, run.Waiting)
	assert.Equal(t, since, run.Waiting.Since, "the same wait keeps its start")

	f.setDown(false)
	_, err = f.a.IndexPhase(ctx, f.input(phase))
	require.NoError(t, err)
	run, err = f.a.index().GetSyncRun(ctx, f.ws, f.runID)
	require.NoError(t, err)
	assert.Nil(t, run.Waiting, "pages arrive again: the wait is over")
}

// A refusal is no wait: the run fails with it at once.
func TestRefusedPhaseRecordsNoWait(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{})
	w := f.a.syncWaiter(f.runID, f.ws.String(), f.conn.String(), "full", "custom_objects")
	err := connectorError("index custom_objects", &sap.Error{Status: 403, ErrorDetail: sap.ErrorDetail{Code: sap.ErrAuthorization, Message: "no"}})
	require.Same(t, err, w.failed(context.Background(), err))
	run, rerr := f.a.index().GetSyncRun(context.Background(), f.ws, f.runID)
	require.NoError(t, rerr)
	assert.Nil(t, run.Waiting)
}

func TestWaitingReasonIsSafeToShow(t *testing.T) {
	long := strings.Repeat("é", 300)
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"connector answer": {&sap.Error{Status: 503, ErrorDetail: sap.ErrorDetail{Code: "SYSTEM_UNAVAILABLE", Message: "RFC\ndown"}},
			"SYSTEM_UNAVAILABLE: RFC down"},
		"wrapped": {fmt.Errorf("index custom_objects: %w", &sap.Error{Status: 503, ErrorDetail: sap.ErrorDetail{Code: "TIMEOUT", Message: "slow"}}),
			"TIMEOUT: slow"},
		"token-like": {errors.New("connector said: token=AbCdEf0123456789AbCdEf0123456789 rejected"), "connector said: [redacted] rejected"},
		"empty":      {errors.New(" \x00 "), "the connector failed"},
	} {
		assert.Equal(t, c.want, waitingReason(c.err), name)
	}
	got := waitingReason(errors.New(long))
	assert.LessOrEqual(t, len(got), maxWaitingReason+len("…"))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")), "cut at a character boundary")
}

// Attempts come at most about 11 s apart: each minute of a long wait signals the workflow at
// least once and at most twice, so its history grows by a few events a minute at most.
func TestWaitingSignalsAFewTimesAMinute(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	perMinute := map[int]int{}
	for at := 4 * time.Second; at < 30*time.Minute; at += 11 * time.Second {
		if dueSignal(since, since.Add(at), time.Minute) {
			perMinute[int(at/time.Minute)]++
		}
	}
	for m := range 30 {
		assert.True(t, perMinute[m] >= 1 && perMinute[m] <= 2, "minute %d: %d signals", m, perMinute[m])
	}
}
