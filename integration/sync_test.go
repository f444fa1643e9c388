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
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// The SAP landscape sync end to end (issue 12): through the API, on the embedded Temporal
// server, against both simulated systems; checked against Postgres.

type syncRunJSON struct {
	ID         string          `json:"id"`
	Mode       string          `json:"mode"`
	Trigger    string          `json:"trigger"`
	Status     string          `json:"status"`
	Error      string          `json:"error"`
	Generation int64           `json:"generation"`
	Phases     json.RawMessage `json:"phases"`
	Counts     struct {
		Entries       int64            `json:"entries"`
		Tables        int64            `json:"tables"`
		Functions     int64            `json:"functions"`
		BAPIs         int64            `json:"bapis"`
		CustomObjects int64            `json:"custom_objects"`
		Relationships int64            `json:"relationships"`
		CleanCore     map[string]int64 `json:"clean_core"`
	} `json:"counts"`
}

// startSync starts a sync. A run's row is final a moment before its workflow closes: a 409
// in that moment is retried, as a client would.
func (e *env) startSync(connID, mode string) (string, int) {
	var out struct {
		RunID string `json:"run_id"`
	}
	var code int
	for range 100 {
		if code = e.do("POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": connID, "mode": mode}, &out); code != http.StatusConflict {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out.RunID, code
}

// awaitSync polls a run until it is no longer running.
func (e *env) awaitSync(runID string, timeout time.Duration) syncRunJSON {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var out struct {
			Run syncRunJSON `json:"run"`
		}
		code := e.do("GET", "/api/workspaces/"+e.ws+"/sync-runs/"+runID, nil, &out)
		if code == http.StatusOK && out.Run.Status != "running" {
			return out.Run
		}
		require.True(e.t, time.Now().Before(deadline), "sync run %s still %q (HTTP %d) after %s", runID, out.Run.Status, code, timeout)
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) indexRows(connID, sql string) int64 {
	e.t.Helper()
	var n int64
	require.NoError(e.t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), sql, connID).Scan(&n))
	return n
}

func TestSyncBothSimulatedSystemsThroughTheAPI(t *testing.T) {
	t.Parallel()
	e, ecc, s4 := sapEnv(t, nil)
	ws := e.dial0Workspace()

	// Bad input first: nothing starts.
	var errBody map[string]any
	assert.Equal(t, http.StatusBadRequest, e.do("POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": ecc.ID, "mode": "weekly"}, &errBody))
	assert.Equal(t, "invalid_mode", errBody["code"])
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": "7d4f3c1e-0000-4000-8000-000000000000", "mode": "full"}, nil))
	assert.Equal(t, http.StatusBadRequest, e.do("POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": "nope"}, nil))

	// A delta without an index is a full.
	eccRun, code := e.startSync(ecc.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	// One at a time: a second manual start while it runs answers 409 with the running run.
	var conflict map[string]any
	if code := e.do("POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": ecc.ID, "mode": "full"}, &conflict); code == http.StatusConflict {
		assert.Equal(t, "sync_running", conflict["code"])
		assert.Equal(t, eccRun, conflict["running"].(map[string]any)["run_id"])
	}
	s4Run, code := e.startSync(s4.ID, "full")
	require.Equal(t, http.StatusAccepted, code)

	eccDone := e.awaitSync(eccRun, 3*time.Minute)
	s4Done := e.awaitSync(s4Run, 3*time.Minute)
	for _, r := range []syncRunJSON{eccDone, s4Done} {
		require.Equal(t, "succeeded", r.Status, "run %s: %s %s", r.ID, r.Error, r.Phases)
		assert.Equal(t, "full", r.Mode)
		assert.Equal(t, "manual", r.Trigger)
		assert.Positive(t, r.Counts.CustomObjects)
		assert.Positive(t, r.Counts.Tables)
		assert.Positive(t, r.Counts.BAPIs)
		assert.Positive(t, r.Counts.Relationships)
		assert.NotEmpty(t, r.Counts.CleanCore, "custom objects have Clean Core levels")
	}

	// Every custom object the simulator has is in the index exactly once.
	sys, _ := e.stack.Landscape.System("ECC")
	var live struct {
		Total int `json:"total"`
	}
	sysPage, err := sys.Call(context.Background(), "index/custom_objects", sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{"limit":1}`))
	require.NoError(t, err)
	raw, _ := json.Marshal(sysPage)
	require.NoError(t, json.Unmarshal(raw, &live))
	q := `SELECT count(*) FROM workspace_sap_index i JOIN workspace_sap_graph g ON g.connection_id = i.connection_id AND g.generation = i.generation
		WHERE i.connection_id = $1 AND i.phase = 'custom_objects'`
	assert.EqualValues(t, live.Total, e.indexRows(ecc.ID, q))
	assert.Zero(t, e.indexRows(ecc.ID, `SELECT count(*) FROM (SELECT object_type, object_name FROM workspace_sap_index i JOIN workspace_sap_graph g
		ON g.connection_id = i.connection_id AND g.generation = i.generation WHERE i.connection_id = $1 AND i.phase = 'custom_objects'
		GROUP BY 1, 2 HAVING count(*) > 1) d`), "no object twice")
	assert.Zero(t, e.indexRows(ecc.ID, `SELECT count(*) FROM workspace_sap_index i JOIN workspace_sap_graph g ON g.connection_id = i.connection_id
		WHERE i.connection_id = $1 AND i.generation <> g.generation`), "the old generations are gone")

	// The workspace stream told its clients.
	evs := ws.until(10*time.Second, func(ev event) bool { return ev.Type == "sync_finished" && ev.RunID == eccRun })
	var sawProgress bool
	for _, ev := range evs {
		sawProgress = sawProgress || ev.Type == "sync_progress"
	}
	assert.True(t, sawProgress, "sync_progress events on the workspace topic")

	// GET /index shows both ready; the schedules exist with their next run times.
	var idx struct {
		Data []struct {
			ConnectionID string `json:"connection_id"`
			Status       string `json:"status"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/index", nil, &idx))
	require.Len(t, idx.Data, 2)
	for _, c := range idx.Data {
		assert.Equal(t, "ready", c.Status)
	}
	var sched struct {
		Data []struct {
			Mode     string      `json:"mode"`
			Paused   bool        `json:"paused"`
			NextRuns []time.Time `json:"next_runs"`
			Missing  bool        `json:"missing"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/sync-schedules?connection_id="+ecc.ID, nil, &sched))
	require.Len(t, sched.Data, 2)
	for _, s := range sched.Data {
		assert.False(t, s.Missing)
		assert.NotEmpty(t, s.NextRuns, s.Mode)
	}

	// The dashboard diff of ECC and S/4: objects only in one, objects that differ.
	var diff struct {
		Counts struct {
			OnlyLeft  int64 `json:"only_left"`
			OnlyRight int64 `json:"only_right"`
			Changed   int64 `json:"changed"`
			Same      int64 `json:"same"`
		} `json:"counts"`
		Data []map[string]any `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/dashboard/diff?left="+ecc.ID+"&right="+s4.ID+"&kind=only_left", nil, &diff))
	assert.Positive(t, diff.Counts.OnlyLeft, "ECC has objects S/4 lacks")
	assert.Positive(t, diff.Counts.OnlyRight, "S/4 has objects ECC lacks")
	assert.Positive(t, diff.Counts.Same+diff.Counts.Changed, "both have the common standard objects")
	// The Clean Core page grades ECC's custom code A–D with reasons.
	var cc struct {
		Summary struct {
			Objects int64 `json:"objects"`
			Levels  []struct {
				Level   string `json:"level"`
				Objects int64  `json:"objects"`
			} `json:"levels"`
		} `json:"summary"`
		Data []map[string]any `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/clean-core?connection_id="+ecc.ID, nil, &cc))
	assert.EqualValues(t, eccDone.Counts.CustomObjects, cc.Summary.Objects)
	assert.NotEmpty(t, cc.Data, "objects with findings")

	// The agent searches the index (sap_search_index reads it, not the live system).
	agent := e.createAgent("index search")
	as := e.dial(agent.ID, "")
	as.next(5 * time.Second) // init
	done := toolEvents(t, turn(t, e, as, agent.ID, "search the index of ECC for BAPI_SALES*"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, "source: index")
	assert.Contains(t, done[0].Result, "BAPI_SALESORDER_CREATEFROMDAT2")
	done = toolEvents(t, turn(t, e, as, agent.ID, "search the index of ECC for customer master general data"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, "KNA1", "a question finds the table by its description")

	// A delta with nothing changed is recorded as skipped.
	noop, code := e.startSync(ecc.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	assert.Equal(t, "skipped", e.awaitSync(noop, time.Minute).Status)

	// A transport changes one object: the delta applies exactly that.
	require.NoError(t, sys.ActivateObject("PROG", "ZSYNC_NEW_REPORT", "Report added by a transport", "ZFI",
		"REPORT zsync_new_report.\nSELECT SINGLE * FROM bkpf INTO @DATA(ls_bkpf) WHERE bukrs = '1000'.\nUPDATE bseg SET sgtxt = 'x' WHERE belnr = ls_bkpf-belnr.\n"))
	delta, code := e.startSync(ecc.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	d := e.awaitSync(delta, 2*time.Minute)
	require.Equal(t, "succeeded", d.Status, d.Error)
	assert.Equal(t, "delta", d.Mode)
	assert.EqualValues(t, live.Total+1, e.indexRows(ecc.ID, q))
	var level string
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT level FROM clean_core_analysis a JOIN workspace_sap_graph g
		ON g.connection_id = a.connection_id AND g.generation = a.generation WHERE a.connection_id = $1 AND object_name = 'ZSYNC_NEW_REPORT'`, ecc.ID).Scan(&level))
	assert.Equal(t, "D", level, "it updates BSEG, an SAP table")
	// Its technical doc, written during the delta, is readable.
	var doc struct {
		Title    string `json:"title"`
		Markdown string `json:"markdown"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/docs/object/PROG%20ZSYNC_NEW_REPORT?connection_id="+ecc.ID, nil, &doc))
	assert.NotEmpty(t, doc.Markdown)
}

// dial0Workspace opens the workspace's event stream.
func (e *env) dial0Workspace() *socket {
	e.t.Helper()
	return e.dialPath("/api/workspaces/" + e.ws + "/ws")
}

func TestSyncBadInputAndTenancy(t *testing.T) {
	t.Parallel()
	e, ecc, _ := sapEnv(t, nil)
	// Another workspace's connection is not found from this one.
	var other struct {
		ID string `json:"id"`
	}
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces", map[string]any{"org_id": e.org, "name": "Other"}, &other))
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/workspaces/"+other.ID+"/index", map[string]any{"connection_id": ecc.ID, "mode": "full"}, nil))
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/workspaces/"+other.ID+"/sync-runs?connection_id="+ecc.ID, nil, nil))
	// A member who is not an admin may read but not start.
	bob := e.tokenFor("bob")
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	assert.Equal(t, http.StatusForbidden, e.doAs(bob, "POST", "/api/workspaces/"+e.ws+"/index", map[string]any{"connection_id": ecc.ID}, nil))
	assert.Equal(t, http.StatusOK, e.doAs(bob, "GET", "/api/workspaces/"+e.ws+"/index", nil, nil))
	// Schedule settings are validated; a bad one changes nothing.
	var body map[string]any
	assert.Equal(t, http.StatusBadRequest, e.do("PATCH", "/api/workspaces/"+e.ws+"/connections/"+ecc.ID, map[string]any{"sync_full_cron": "every sunday"}, &body))
	assert.Equal(t, "invalid_schedule", body["code"])
	assert.Equal(t, http.StatusBadRequest, e.do("PATCH", "/api/workspaces/"+e.ws+"/connections/"+ecc.ID, map[string]any{"sync_timezone": "Mars/Olympus"}, nil))
	assert.Equal(t, http.StatusBadRequest, e.do("POST", "/api/workspaces/"+e.ws+"/sync-schedules/"+ecc.ID+"/hourly/pause", nil, nil))
	assert.Equal(t, http.StatusBadRequest, e.do("POST", "/api/workspaces/"+e.ws+"/sync-schedules/"+ecc.ID+"/full/explode", nil, nil))
	// Pause, then the schedule says so; a new cron moves the next run.
	var s struct {
		Paused   bool        `json:"paused"`
		Cron     string      `json:"cron"`
		NextRuns []time.Time `json:"next_runs"`
	}
	require.Equal(t, http.StatusOK, e.do("POST", "/api/workspaces/"+e.ws+"/sync-schedules/"+ecc.ID+"/full/pause", map[string]any{"note": "quarter close"}, &s))
	assert.True(t, s.Paused)
	require.Equal(t, http.StatusOK, e.do("PATCH", "/api/workspaces/"+e.ws+"/connections/"+ecc.ID, map[string]any{"sync_full_cron": "30 4 * * 6", "sync_timezone": "Europe/Berlin"}, nil))
	var list struct {
		Data []struct {
			Mode     string      `json:"mode"`
			Cron     string      `json:"cron"`
			Paused   bool        `json:"paused"`
			TimeZone string      `json:"time_zone"`
			NextRuns []time.Time `json:"next_runs"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/sync-schedules?connection_id="+ecc.ID, nil, &list))
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, sc := range list.Data {
		if sc.Mode != "full" {
			continue
		}
		assert.Equal(t, "30 4 * * 6", sc.Cron)
		assert.True(t, sc.Paused, "an update keeps the pause")
		require.NotEmpty(t, sc.NextRuns)
		local := sc.NextRuns[0].In(berlin)
		assert.Equal(t, time.Saturday, local.Weekday())
		assert.Equal(t, 4, local.Hour())
		assert.Equal(t, 30, local.Minute())
	}
}

// A connection deleted during its sync: the sync is cancelled, its schedules and index rows go.
func TestDeletingAConnectionCancelsItsSyncAndRemovesItsIndex(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.SAPSimLandscapeObjects = 40_000 })
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	runID, code := e.startSync(conn.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	require.Eventually(t, func() bool {
		return e.indexRows(conn.ID, `SELECT count(*) FROM workspace_sap_index WHERE connection_id = $1`) > 0
	}, time.Minute, 100*time.Millisecond, "the sync writes rows")
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/workspaces/"+e.ws+"/connections/"+conn.ID, nil, nil))
	for _, table := range []string{"workspace_sap_index", "sap_search_entries", "workspace_sap_graph", "sap_sync_runs", "clean_core_analysis"} {
		assert.Zero(t, e.indexRows(conn.ID, `SELECT count(*) FROM `+table+` WHERE connection_id = $1`), table)
	}
	// The workflow ended (cancelled, or failed on the deleted connection) instead of retrying
	// against a deleted connection forever.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := e.stack.Deps.Temporal.GetWorkflow(ctx, "sync/"+conn.ID, runID).Get(ctx, nil)
	require.NoError(t, ctx.Err(), "the sync workflow is still running: %v", err)
	_, err = e.stack.Deps.Temporal.ScheduleClient().GetHandle(ctx, "sync/"+conn.ID+"/full").Describe(ctx)
	assert.Error(t, err, "the schedule is deleted")
	assert.Zero(t, e.indexRows(conn.ID, `SELECT count(*) FROM workspace_sap_index WHERE connection_id = $1`), "nothing written after the delete")
}

// Cancel keeps the previous generation in use and removes the build.
func TestCancelledSyncKeepsThePreviousIndex(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.SAPSimLandscapeObjects = 40_000 })
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	first, _ := e.startSync(conn.ID, "full")
	require.Equal(t, "succeeded", e.awaitSync(first, 5*time.Minute).Status)
	var gen int64
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT generation FROM workspace_sap_graph WHERE connection_id = $1`, conn.ID).Scan(&gen))
	before := e.indexRows(conn.ID, `SELECT count(*) FROM workspace_sap_index WHERE connection_id = $1`)

	second, _ := e.startSync(conn.ID, "full")
	require.Eventually(t, func() bool {
		return e.indexRows(conn.ID, `SELECT count(*) FROM workspace_sap_index WHERE connection_id = $1`) > before
	}, time.Minute, 50*time.Millisecond, "the second build writes rows")
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/workspaces/"+e.ws+"/sync-runs/"+second+"/cancel", nil, nil))
	r := e.awaitSync(second, time.Minute)
	assert.Equal(t, "cancelled", r.Status)
	var after int64
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT generation FROM workspace_sap_graph WHERE connection_id = $1`, conn.ID).Scan(&after))
	assert.Equal(t, gen, after, "readers still see the first index")
	assert.Equal(t, before, e.indexRows(conn.ID, `SELECT count(*) FROM workspace_sap_index WHERE connection_id = $1`), "the build is removed")
	assert.Equal(t, http.StatusConflict, e.do("POST", "/api/workspaces/"+e.ws+"/sync-runs/"+second+"/cancel", nil, nil))
}
