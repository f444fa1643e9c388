package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/workflows"
)

// TestSyncHistories runs the four shapes of SAPSync on the simulated ECC through the API — a
// full, a delta with nothing changed (skipped), a delta with one changed object and a cancelled
// full — and records their histories for the replay test (UPDATE_HISTORIES=1, see
// recordHistory), so every later change to the workflow is checked against real runs.
func TestSyncHistories(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) { o.OfflineLLM.Rules = devstack.DemoRules() })
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	// The run row is final a moment before the workflow closes: wait for the workflow, so the
	// history is whole and the next start is not refused as overlapping.
	record := func(runID, name string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.stack.Deps.Temporal.GetWorkflow(ctx, workflows.SyncWorkflowID(conn.ID), runID).Get(ctx, nil)
		require.NoError(t, ctx.Err(), "the sync workflow did not close")
		recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, workflows.SyncWorkflowID(conn.ID), runID, name)
	}

	full, code := e.startSync(conn.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	fr := e.awaitSync(full, 3*time.Minute)
	require.Equal(t, "succeeded", fr.Status)
	record(full, "sync_full_v1")
	// The stored run shows every step done, the switch included.
	var phases []workflows.PhaseStatus
	require.NoError(t, json.Unmarshal(fr.Phases, &phases))
	require.NotEmpty(t, phases)
	for _, p := range phases {
		assert.Contains(t, []string{"done", "skipped"}, p.Status, "phase %s of a succeeded run", p.Name)
	}
	assert.Equal(t, workflows.StepSwitch, phases[len(phases)-1].Name)

	noop, code := e.startSync(conn.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "skipped", e.awaitSync(noop, time.Minute).Status)
	record(noop, "sync_delta_skipped_v1")

	sys, _ := e.stack.Landscape.System("ECC")
	require.NoError(t, sys.ActivateObject("PROG", "ZSYNC_HISTORY", "Report added by a transport", "ZFI", "REPORT zsync_history.\nSELECT SINGLE * FROM t001 INTO @DATA(ls_t001).\n"))
	delta, code := e.startSync(conn.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	d := e.awaitSync(delta, 2*time.Minute)
	require.Equal(t, "succeeded", d.Status, d.Error)
	require.Equal(t, "delta", d.Mode)
	record(delta, "sync_delta_v1")

	// Cancel while a phase runs (the progress query says which).
	cancelled, code := e.startSync(conn.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	var phase string
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := workflows.SyncProgress.Ask(ctx, e.stack.Deps.Temporal, workflows.SyncWorkflowID(conn.ID), cancelled)
		if err != nil {
			return false
		}
		phase = st.Phase
		return st.Phase != "starting" && st.Phase != workflows.StepProbe
	}, time.Minute, 5*time.Millisecond, "the second full reaches a phase")
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/workspaces/"+e.ws+"/sync-runs/"+cancelled+"/cancel", nil, nil))
	r := e.awaitSync(cancelled, time.Minute)
	assert.Equal(t, "cancelled", r.Status, "cancelled during %s", phase)
	t.Logf("cancelled during phase %s", phase)
	record(cancelled, "sync_cancelled_v1")
}

// One at a time on the real server: a scheduled sync triggered while a manual one runs starts
// SAPSyncScheduled, whose child is refused under the connection's sync ID; it records a
// skipped run and the manual one goes on. Triggered again once the manual one finished, the
// child runs. Both shapes of SAPSyncScheduled are recorded for the replay test.
func TestScheduledSyncSkipsWhileAManualOneRuns(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = devstack.DemoRules()
		c.SAPSimLatency = 300 * time.Millisecond // the manual sync runs long enough to overlap
	})
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := e.stack.Deps.Temporal
	schedule := c.ScheduleClient().GetHandle(ctx, "sync/"+conn.ID+"/delta")
	// lastAction is the scheduled workflow the schedule started last, once it closed.
	lastAction := func(n int) (string, string) {
		var wfID, runID string
		require.Eventually(t, func() bool {
			d, err := schedule.Describe(ctx)
			if err != nil || len(d.Info.RecentActions) < n {
				return false
			}
			a := d.Info.RecentActions[len(d.Info.RecentActions)-1].StartWorkflowResult
			wfID, runID = a.WorkflowID, a.FirstExecutionRunID
			return true
		}, time.Minute, 50*time.Millisecond, "the schedule started its workflow")
		return wfID, runID
	}

	manual, code := e.startSync(conn.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, http.StatusOK, e.do("POST", "/api/workspaces/"+e.ws+"/sync-schedules/"+conn.ID+"/delta/trigger", nil, nil))
	wfID, runID := lastAction(1)
	var st workflows.SyncStatus
	require.NoError(t, c.GetWorkflow(ctx, wfID, runID).Get(ctx, &st))
	assert.Equal(t, workflows.SyncSkipped, st.Status)
	assert.Equal(t, "another sync of this connection was running", st.Error)
	var status, trigger, errText string
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(ctx, `SELECT status, trigger, error FROM sap_sync_runs WHERE workflow_run_id = $1`, runID).Scan(&status, &trigger, &errText))
	assert.Equal(t, []string{"skipped", "schedule", "another sync of this connection was running"}, []string{status, trigger, errText})
	recordHistory(t, c, e.stack.Deps.Codec, wfID, runID, "sync_scheduled_skipped_v1")

	require.Equal(t, "succeeded", e.awaitSync(manual, 3*time.Minute).Status, "the manual sync went on")
	require.NoError(t, c.GetWorkflow(ctx, workflows.SyncWorkflowID(conn.ID), manual).Get(ctx, nil))

	require.Equal(t, http.StatusOK, e.do("POST", "/api/workspaces/"+e.ws+"/sync-schedules/"+conn.ID+"/delta/trigger", nil, nil))
	wfID, runID = lastAction(2)
	require.NoError(t, c.GetWorkflow(ctx, wfID, runID).Get(ctx, &st))
	assert.Equal(t, "schedule", st.Trigger)
	assert.Equal(t, workflows.SyncSkipped, st.Status, "the child ran: a delta with nothing changed")
	assert.Equal(t, "nothing changed since the last sync", st.Error)
	recordHistory(t, c, e.stack.Deps.Codec, wfID, runID, "sync_scheduled_v1")
}
