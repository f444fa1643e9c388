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

	sys, _ := e.stack.Deps.Landscape.System("ECC")
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
		v, err := e.stack.Deps.Temporal.QueryWorkflow(ctx, workflows.SyncWorkflowID(conn.ID), cancelled, workflows.QuerySyncProgress)
		if err != nil {
			return false
		}
		var st workflows.SyncStatus
		if v.Get(&st) != nil {
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
