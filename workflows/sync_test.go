package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sapagent/sapagent/internal/tools"
)

// syncFakes stand in for the sync's activities (registered through the typed contracts, so
// they cannot drift from the real ones) and remember what the workflow asked of them.
type syncFakes struct {
	mu    sync.Mutex
	start SyncStart
	probe ProbeResult
	// phaseErrs are returned by a phase's first attempts, in order (then it succeeds).
	phaseErrs map[string][]error
	// during runs inside the named phase's activity (a query, a cancel) before it answers.
	during map[string]func(ctx context.Context) error

	calls    []string
	phases   []PhaseInput
	probes   []ProbeInput
	attempts map[string]int
	finishes []FinishInput
	skipped  []SyncInput
}

func newSyncFakes(systemType, mode string) *syncFakes {
	return &syncFakes{
		start:     SyncStart{RunID: "run-1", SystemType: systemType, Mode: mode, Generation: 2, Build: 3, ChangeSeq: 40},
		probe:     ProbeResult{LatestSeq: 57},
		phaseErrs: map[string][]error{},
		during:    map[string]func(context.Context) error{},
		attempts:  map[string]int{},
	}
}

func (f *syncFakes) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *syncFakes) phase(kind string) func(context.Context, PhaseInput) (PhaseResult, error) {
	return func(ctx context.Context, in PhaseInput) (PhaseResult, error) {
		f.mu.Lock()
		f.attempts[in.Phase]++
		var err error
		if errs := f.phaseErrs[in.Phase]; len(errs) > 0 {
			err, f.phaseErrs[in.Phase] = errs[0], errs[1:]
		}
		during := f.during[in.Phase]
		f.mu.Unlock()
		if err != nil {
			return PhaseResult{}, err
		}
		if during != nil {
			if err := during(ctx); err != nil {
				return PhaseResult{}, err
			}
		}
		f.mu.Lock()
		f.phases = append(f.phases, in)
		f.mu.Unlock()
		f.note(kind + " " + in.Phase)
		if in.Phase == "s4_extensions" && in.SystemType != "S4HANA" {
			return PhaseResult{Skipped: "S/4HANA only"}, nil
		}
		return PhaseResult{Items: int64(len(in.Phase))}, nil
	}
}

func (f *syncFakes) register(env *testsuite.TestWorkflowEnvironment) {
	RegisterWorkflows(env, tools.Default())
	StartSyncRun.Register(env, func(_ context.Context, in SyncInput) (SyncStart, error) {
		f.note("start " + in.Mode)
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.start, nil
	})
	ProbeChanges.Register(env, func(_ context.Context, in ProbeInput) (ProbeResult, error) {
		f.note(fmt.Sprintf("probe full=%v after=%d", in.Full, in.AfterSeq))
		f.mu.Lock()
		defer f.mu.Unlock()
		f.probes = append(f.probes, in)
		return f.probe, nil
	})
	IndexPhase.Register(env, f.phase("index"))
	EnrichPhase.Register(env, f.phase("enrich"))
	FinishSyncRun.Register(env, func(ctx context.Context, in FinishInput) error {
		f.note("finish " + in.Status.Status)
		f.mu.Lock()
		defer f.mu.Unlock()
		if ctx.Err() != nil {
			return fmt.Errorf("finish ran on a cancelled context: %w", ctx.Err())
		}
		f.finishes = append(f.finishes, in)
		return nil
	})
	RecordSkippedSync.Register(env, func(_ context.Context, in SyncInput) error {
		f.note("record skipped " + in.Trigger)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.skipped = append(f.skipped, in)
		return nil
	})
}

func syncEnv(f *syncFakes) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	f.register(env)
	return env
}

func syncInput(mode string) SyncInput {
	return SyncInput{WorkspaceID: "ws-1", ConnectionID: "conn-1", Mode: mode, Trigger: "manual", RequestedBy: "alice"}
}

func syncResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) SyncStatus {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st SyncStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	return st
}

func phaseNames(ps []PhaseStatus) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name + ":" + p.Status
	}
	return out
}

// A full sync probes only where the change log stands, runs every index phase of its system
// type (S/4 extensions on S/4HANA only) into the build generation from the start, then the
// enrichment steps, and finishes as succeeded with the build and the probed position.
func TestFullSyncRunsEveryPhaseOfItsSystemThenFinishes(t *testing.T) {
	for _, tc := range []struct {
		systemType string
		index      []string
	}{
		{"ECC", []string{"custom_objects", "relationships", "custom_code", "catalog_context", "enhancements"}},
		{"S4HANA", []string{"custom_objects", "relationships", "custom_code", "catalog_context", "enhancements", "s4_extensions"}},
	} {
		t.Run(tc.systemType, func(t *testing.T) {
			f := newSyncFakes(tc.systemType, "full")
			env := syncEnv(f)
			env.ExecuteWorkflow(SAPSync, syncInput("full"))
			st := syncResult(t, env)

			want := []string{"start full", "probe full=true after=40"}
			for _, p := range tc.index {
				want = append(want, "index "+p)
			}
			want = append(want, "enrich clean_core", "enrich docs", "enrich embeddings", "finish succeeded")
			assert.Equal(t, want, f.calls)
			for _, in := range f.phases {
				assert.Equal(t, int64(3), in.Generation, "%s writes the build generation", in.Phase)
				assert.Zero(t, in.AfterSeq, "%s of a full reads everything", in.Phase)
				assert.Equal(t, "full", in.Mode)
				assert.Equal(t, "run-1", in.RunID)
				assert.Equal(t, tc.systemType, in.SystemType)
			}

			require.Len(t, f.finishes, 1)
			fin := f.finishes[0]
			assert.Equal(t, SyncSucceeded, fin.Status.Status)
			assert.Equal(t, int64(3), fin.Build)
			assert.Equal(t, int64(57), fin.LatestSeq, "the next delta starts where the change log stood")
			assert.Equal(t, "ws-1", fin.WorkspaceID)
			assert.Empty(t, fin.Status.Error)

			assert.Equal(t, SyncSucceeded, st.Status)
			assert.Equal(t, SyncSucceeded, st.Phase)
			assert.Equal(t, int64(3), st.Generation)
			assert.Equal(t, "run-1", st.RunID)
			wantPhases := []string{"probe:done"}
			for _, p := range tc.index {
				wantPhases = append(wantPhases, p+":done")
			}
			wantPhases = append(wantPhases, "clean_core:done", "docs:done", "embeddings:done", "switch:done")
			assert.Equal(t, wantPhases, phaseNames(st.Phases))
			assert.Equal(t, int64(len("custom_objects")), st.Phases[1].Items)
		})
	}
}

// A delta with no changes since the index's position is recorded as skipped: no phase runs.
func TestDeltaWithoutChangesIsSkipped(t *testing.T) {
	f := newSyncFakes("ECC", "delta")
	f.probe = ProbeResult{Changes: 0, LatestSeq: 40}
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("delta"))
	st := syncResult(t, env)
	assert.Equal(t, []string{"start delta", "probe full=false after=40", "finish skipped"}, f.calls)
	assert.Empty(t, f.phases, "no index or enrichment phase runs")
	require.Len(t, f.finishes, 1)
	assert.Equal(t, SyncSkipped, f.finishes[0].Status.Status)
	assert.Equal(t, SyncSkipped, st.Status)
	assert.Equal(t, "nothing changed since the last sync", st.Error)
}

// A delta with changes hands every phase the index's start position, so the connector lists
// only objects changed after it, and finishes at the probed position.
func TestDeltaWithChangesReadsOnlyAfterTheIndexPosition(t *testing.T) {
	f := newSyncFakes("ECC", "delta")
	f.probe = ProbeResult{Changes: 3, LatestSeq: 63}
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("delta"))
	st := syncResult(t, env)
	require.Len(t, f.phases, 8, "five index phases and three enrichment steps")
	for _, in := range f.phases {
		assert.Equal(t, int64(40), in.AfterSeq, in.Phase)
		assert.Equal(t, "delta", in.Mode)
	}
	require.Len(t, f.probes, 1)
	assert.Equal(t, int64(40), f.probes[0].AfterSeq)
	assert.False(t, f.probes[0].Full)
	require.Len(t, f.finishes, 1)
	assert.Equal(t, int64(63), f.finishes[0].LatestSeq)
	assert.Equal(t, SyncSucceeded, st.Status)
	assert.Equal(t, int64(3), st.Changes)
}

// A phase failing with a retryable error is retried by Temporal; the run still succeeds.
func TestRetryableIndexFailureIsRetried(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	f.phaseErrs["relationships"] = []error{errors.New("connector unavailable"), errors.New("postgres down")}
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("full"))
	st := syncResult(t, env)
	assert.Equal(t, 3, f.attempts["relationships"], "two failures, then success")
	assert.Equal(t, 1, f.attempts["custom_code"], "the next phase runs once")
	assert.Equal(t, SyncSucceeded, st.Status)
	require.Len(t, f.finishes, 1)
	assert.Equal(t, SyncSucceeded, f.finishes[0].Status.Status)
}

// A refusal no retry changes fails the run at once with its message; the run is still
// finished (the build removed, the run recorded) and the workflow itself completes.
func TestRefusedPhaseFailsTheRunWithItsMessage(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	f.phaseErrs["custom_code"] = []error{temporal.NewNonRetryableApplicationError("index custom_code: not authorized for S_DEVELOP", ErrTypeSyncRefused, nil)}
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("full"))
	st := syncResult(t, env)
	assert.Equal(t, 1, f.attempts["custom_code"], "a refusal is not retried")
	assert.Zero(t, f.attempts["catalog_context"], "no phase runs after it")
	require.Len(t, f.finishes, 1)
	fin := f.finishes[0]
	assert.Equal(t, SyncFailed, fin.Status.Status)
	assert.Equal(t, "index custom_code: not authorized for S_DEVELOP", fin.Status.Error, "the message without Temporal's decoration")
	assert.Equal(t, int64(3), fin.Build, "finish removes the unfinished build")
	assert.Equal(t, SyncFailed, st.Status)
	assert.Equal(t, fin.Status.Error, st.Error)
	assert.Equal(t, []string{"probe:done", "custom_objects:done", "relationships:done", "custom_code:failed", "catalog_context:pending",
		"enhancements:pending", "clean_core:pending", "docs:pending", "embeddings:pending", "switch:pending"}, phaseNames(st.Phases))
}

// Cancelling during a phase finishes the run as cancelled, on a context the cancellation does
// not reach, and ends the workflow as cancelled; no later phase starts. The running phase
// learns of the cancel through its heartbeat, as IndexPhase does. (The test environment
// resolves a cancelled activity at once; that the real workflow waits for the phase to stop
// before it finishes — WaitForCancellation — is what integration's cancel test covers.)
func TestCancelDuringAPhaseFinishesTheRunAsCancelled(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	env := syncEnv(f)
	finishing := make(chan struct{})
	sawCancel := make(chan error, 1)
	f.during["relationships"] = func(ctx context.Context) error {
		env.CancelWorkflow()
		select {
		case <-finishing:
		case <-time.After(10 * time.Second):
		}
		activity.RecordHeartbeat(ctx, "cursor-2")
		select {
		case <-ctx.Done():
			sawCancel <- ctx.Err()
		case <-time.After(10 * time.Second):
			sawCancel <- errors.New("the phase's context was not cancelled")
		}
		return ctx.Err()
	}
	FinishSyncRun.Register(env, func(ctx context.Context, in FinishInput) error {
		f.note("finish " + in.Status.Status)
		f.mu.Lock()
		defer f.mu.Unlock()
		if ctx.Err() != nil {
			return fmt.Errorf("finish ran on a cancelled context: %w", ctx.Err())
		}
		f.finishes = append(f.finishes, in)
		close(finishing)
		return nil
	})
	env.ExecuteWorkflow(SAPSync, syncInput("full"))
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, temporal.IsCanceledError(err), "the workflow ends as cancelled: %v", err)
	select {
	case err := <-sawCancel:
		assert.ErrorIs(t, err, context.Canceled, "the running phase saw the cancellation")
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled phase did not return")
	}
	assert.Zero(t, f.attempts["custom_code"], "no phase starts after the cancel")
	require.Len(t, f.finishes, 1, "finish runs although the workflow was cancelled")
	fin := f.finishes[0]
	assert.Equal(t, SyncCancelled, fin.Status.Status)
	assert.Equal(t, "cancelled", fin.Status.Error)
	assert.Equal(t, int64(3), fin.Build, "the build is removed")
	assert.Equal(t, []string{"probe:done", "custom_objects:done", "relationships:cancelled", "custom_code:pending"}, phaseNames(fin.Status.Phases)[:4])
	assert.Equal(t, "finish cancelled", f.calls[len(f.calls)-1])
}

// The progress query shows the phases with their statuses while a phase runs.
func TestProgressQueryWhileAPhaseRuns(t *testing.T) {
	f := newSyncFakes("S4HANA", "full")
	env := syncEnv(f)
	var during SyncStatus
	var queryErr error
	f.during["custom_code"] = func(context.Context) error {
		during, queryErr = ask(env, SyncProgress)
		return nil
	}
	env.ExecuteWorkflow(SAPSync, syncInput("full"))
	syncResult(t, env)
	require.NoError(t, queryErr)
	assert.Equal(t, SyncRunning, during.Status)
	assert.Equal(t, "custom_code", during.Phase)
	assert.Equal(t, "run-1", during.RunID)
	assert.Equal(t, []string{"probe:done", "custom_objects:done", "relationships:done", "custom_code:running", "catalog_context:pending",
		"enhancements:pending", "s4_extensions:pending", "clean_core:pending", "docs:pending", "embeddings:pending", "switch:pending"}, phaseNames(during.Phases))
	assert.Equal(t, int64(len("relationships")), during.Phases[2].Items)
}

// A scheduled sync starts the sync as a child under the connection's workflow ID and answers
// its outcome.
func TestScheduledSyncRunsTheSyncAsAChild(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSyncScheduled, SyncInput{WorkspaceID: "ws-1", ConnectionID: "conn-1", Mode: "full"})
	st := syncResult(t, env)
	assert.Equal(t, SyncSucceeded, st.Status)
	assert.Equal(t, "schedule", st.Trigger)
	assert.Equal(t, "run-1", st.RunID)
	assert.Empty(t, f.skipped)
	require.Len(t, f.finishes, 1)
	assert.Equal(t, "schedule", f.finishes[0].Status.Trigger)
}

// One at a time: when a workflow already runs under the connection's sync ID, the scheduled
// start is refused by Temporal and recorded as skipped instead of waiting or failing. The test
// environment refuses a child whose ID is taken by a running workflow, here the scheduled
// workflow itself (started under sync/<connection>).
func TestScheduledSyncWhileOneRunsIsRecordedAsSkipped(t *testing.T) {
	f := newSyncFakes("ECC", "delta")
	env := syncEnv(f)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: SyncWorkflowID("conn-1")})
	env.ExecuteWorkflow(SAPSyncScheduled, SyncInput{WorkspaceID: "ws-1", ConnectionID: "conn-1", Mode: "delta"})
	st := syncResult(t, env)
	assert.Equal(t, SyncSkipped, st.Status)
	assert.Equal(t, "another sync of this connection was running", st.Error)
	assert.Equal(t, []string{"record skipped schedule"}, f.calls, "no sync step ran")
	require.Len(t, f.skipped, 1)
	assert.Equal(t, SyncInput{WorkspaceID: "ws-1", ConnectionID: "conn-1", Mode: "delta", Trigger: "schedule"}, f.skipped[0])
}

// A delta asked for where there is no index yet runs as the full StartSyncRun says it is.
func TestDeltaWithoutAnIndexRunsAsAFull(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	f.start.Generation, f.start.ChangeSeq = 0, 0
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("delta"))
	st := syncResult(t, env)
	assert.Equal(t, "full", st.Mode)
	require.Len(t, f.probes, 1)
	assert.True(t, f.probes[0].Full, "only where the change log stands")
	require.Len(t, f.phases, 8)
	for _, in := range f.phases {
		assert.Equal(t, "full", in.Mode)
		assert.Zero(t, in.AfterSeq)
	}
	assert.Equal(t, SyncSucceeded, st.Status)
}

// Enrich-only reads nothing from the connector: no probe, no index phase; the enrichment steps
// run over the generation readers see.
func TestEnrichOnlyRunsOnlyTheEnrichmentSteps(t *testing.T) {
	f := newSyncFakes("S4HANA", "enrich-only")
	f.start.Build = f.start.Generation
	env := syncEnv(f)
	env.ExecuteWorkflow(SAPSync, syncInput("enrich-only"))
	st := syncResult(t, env)
	assert.Equal(t, []string{"start enrich-only", "enrich clean_core", "enrich docs", "enrich embeddings", "finish succeeded"}, f.calls)
	for _, in := range f.phases {
		assert.Equal(t, int64(2), in.Generation, in.Phase)
	}
	assert.Equal(t, []string{"clean_core:done", "docs:done", "embeddings:done", "switch:done"}, phaseNames(st.Phases))
	require.Len(t, f.finishes, 1)
	assert.Equal(t, int64(40), f.finishes[0].LatestSeq, "the change-log position is kept")
}

// An activity's waiting signal shows in the progress query and the Temporal UI's details
// ("waiting for SAP: …, attempt N, since …"); the phase's end clears it.
func TestWaitingSignalShowsInTheProgressAndTheDetails(t *testing.T) {
	f := newSyncFakes("ECC", "full")
	env := syncEnv(f)
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var during SyncStatus
	var details string
	var queryErr error
	f.during["relationships"] = func(context.Context) error {
		env.SignalWorkflow(SyncWaitingChanged.Name, SyncWaiting{Reason: "SYSTEM_UNAVAILABLE: the connector is unreachable", Phase: "relationships", Attempt: 4, Since: since})
		var err error
		for i := 0; i < 100 && err == nil && during.Waiting == nil; i++ { // the signal is delivered on the workflow's own loop
			time.Sleep(10 * time.Millisecond)
			during, err = ask(env, SyncProgress)
		}
		if err == nil {
			details, err = currentDetails(env)
		}
		queryErr = err
		return nil
	}
	env.ExecuteWorkflow(SAPSync, syncInput("full"))
	st := syncResult(t, env)
	require.NoError(t, queryErr)
	require.NotNil(t, during.Waiting, "the query shows the wait")
	assert.Equal(t, int32(4), during.Waiting.Attempt)
	assert.Equal(t, "relationships", during.Waiting.Phase)
	assert.Contains(t, details, "waiting for SAP: SYSTEM_UNAVAILABLE: the connector is unreachable, attempt 4, since 2026-11-27T10:00:00Z")
	assert.Nil(t, st.Waiting, "the phase's end cleared the wait")
	assert.Equal(t, SyncSucceeded, st.Status)
}

// currentDetails reads what the Temporal UI shows as the workflow's current details.
func currentDetails(env *testsuite.TestWorkflowEnvironment) (string, error) {
	v, err := env.QueryWorkflow("__temporal_workflow_metadata")
	if err != nil {
		return "", err
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		return "", err
	}
	return md.GetCurrentDetails(), nil
}
