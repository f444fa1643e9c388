package integration

// Faults in the middle of the SAP landscape sync (issue 12 "Bad input and faults"): the worker
// killed mid-phase, Postgres down for 30 s mid-phase, the connector failing half its calls.
// Each run must resume from the cursor committed with its last page, never from the start of a
// phase, and end with every object of the simulator in the index exactly once.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// syncFaultSim is the landscape of the kill and outage tests: 5,000 generated standard
// objects (the catalog phase spans six pages) and 250 custom ones, each call taking 150 ms, so
// the test sees a phase between pages; small enough that the docs a sync writes stay few.
var syncFaultSim = sapsim.Options{GeneratedObjects: 5_000, Latency: 150 * time.Millisecond}

// countedPhases are the phases whose rows are checked against the simulator's totals.
var countedPhases = []string{"custom_objects", "relationships", "catalog_context"}

func (tp *topology) startSync(connID, mode string) string {
	tp.t.Helper()
	var out struct {
		RunID string `json:"run_id"`
	}
	tp.mustDo(0, "POST", "/api/workspaces/"+tp.ws+"/index", map[string]any{"connection_id": connID, "mode": mode}, &out, http.StatusAccepted)
	require.NotEmpty(tp.t, out.RunID)
	return out.RunID
}

// awaitSync polls the run through the API until it is no longer running; answers other than
// 200 (a 503 while Postgres is down) are tolerated and returned for the caller to check.
func (tp *topology) awaitSync(runID string, timeout time.Duration) (syncRunJSON, []httpCall) {
	tp.t.Helper()
	deadline := time.Now().Add(timeout)
	var odd []httpCall
	for {
		var out struct {
			Run syncRunJSON `json:"run"`
		}
		c := tp.doWithin(10*time.Second, 0, "GET", "/api/workspaces/"+tp.ws+"/sync-runs/"+runID, nil, &out)
		if c.status == http.StatusOK && out.Run.Status != "running" {
			return out.Run, odd
		}
		if c.status != http.StatusOK {
			odd = append(odd, c)
		}
		require.True(tp.t, time.Now().Before(deadline), "sync run %s still %q (last answer %+v, phases%s) after %s", runID, out.Run.Status, c, phasesOf(out.Run), timeout)
		time.Sleep(250 * time.Millisecond)
	}
}

// phaseCursor is a run's committed position in a phase (zero values before its first page).
func (tp *topology) phaseCursor(runID, phase string) (items int64, done bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = tp.db.QueryRow(ctx, `SELECT items, done FROM sap_sync_phase_cursors WHERE run_id = $1 AND phase = $2`, runID, phase).Scan(&items, &done)
	return items, done
}

// awaitMidPhase waits until the run has committed some pages of phase but not all of them.
func (tp *topology) awaitMidPhase(runID, phase string, total int64) int64 {
	tp.t.Helper()
	var items int64
	ok := assertEventually(func() bool {
		var done bool
		items, done = tp.phaseCursor(runID, phase)
		require.False(tp.t, done, "phase %s finished before the fault (%d items): make the landscape larger", phase, items)
		return items > 0 && items < total
	}, 2*time.Minute)
	require.True(tp.t, ok, "the run never got into phase %s", phase)
	return items
}

// simTotals asks the simulator (in process, past the fault injection) how many items each
// counted phase has.
func (tp *topology) simTotals() map[string]int64 {
	tp.t.Helper()
	sys, ok := tp.sim.land.System("ECC")
	require.True(tp.t, ok)
	out := map[string]int64{}
	for _, phase := range countedPhases {
		page, err := sys.Call(context.Background(), "index/"+phase, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{"limit":1}`))
		require.NoError(tp.t, err)
		out[phase] = int64(page.(sap.IndexPage).Total)
	}
	return out
}

// checkSyncedOnce checks the connection's index after a succeeded full run: every item of the
// simulator in the current generation once, nothing of any other generation left, and the
// run's cursors counting each item once (a page committed twice would count twice).
func (tp *topology) checkSyncedOnce(connID, runID string, totals map[string]int64) {
	t := tp.t
	t.Helper()
	gen := tp.checkIndexMatches(connID, totals)
	var runGen int64
	require.NoError(t, tp.db.QueryRow(context.Background(), `SELECT generation FROM sap_sync_runs WHERE id = $1`, runID).Scan(&runGen))
	assert.Equal(t, gen, runGen, "readers see the run's build")
	for _, phase := range countedPhases {
		items, done := tp.phaseCursor(runID, phase)
		assert.True(t, done, "%s: the cursor is done", phase)
		assert.Equal(t, totals[phase], items, "%s: the run committed each item once", phase)
	}
}

// checkIndexMatches checks that the index readers see holds every item of the simulator once
// and nothing of other generations is left; it returns the current generation.
func (tp *topology) checkIndexMatches(connID string, totals map[string]int64) int64 {
	t := tp.t
	t.Helper()
	ctx := context.Background()
	var gen int64
	var status string
	require.NoError(t, tp.db.QueryRow(ctx, `SELECT generation, status FROM workspace_sap_graph WHERE connection_id = $1`, connID).Scan(&gen, &status))
	assert.Equal(t, "ready", status)
	for _, phase := range countedPhases {
		var rows, objects int64
		require.NoError(t, tp.db.QueryRow(ctx, `SELECT count(*), count(DISTINCT (object_type, object_name, item_key)) FROM workspace_sap_index
			WHERE connection_id = $1 AND generation = $2 AND phase = $3`, connID, gen, phase).Scan(&rows, &objects))
		assert.Equal(t, totals[phase], rows, "%s: every item of the simulator in the index", phase)
		assert.Equal(t, rows, objects, "%s: no item twice", phase)
	}
	for _, table := range []string{"workspace_sap_index", "sap_search_entries", "clean_core_analysis"} {
		var stale int64
		require.NoError(t, tp.db.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE connection_id = $1 AND generation <> $2`, connID, gen).Scan(&stale))
		assert.Zero(t, stale, "%s: no rows of other generations", table)
	}
	return gen
}

// checkFirstPagesOnce: each index phase asked the connector for its first page once since
// before (a phase that restarted from zero after the fault asks again).
func (tp *topology) checkFirstPagesOnce(before map[string]int) {
	tp.t.Helper()
	after := tp.sim.firstPageRequests()
	for _, phase := range []string{"custom_objects", "relationships", "custom_code", "catalog_context", "enhancements"} {
		ep := "index/" + phase
		assert.Equal(tp.t, 1, after[ep]-before[ep], "%s: first page requested once (the phase resumed from its cursor)", phase)
	}
}

// indexAttempts returns the attempt that completed each index phase of the run, in order
// (custom_objects, relationships, custom_code, catalog_context, enhancements): the history
// records only the last attempt's start.
func (tp *topology) indexAttempts(connID, runID string) []int32 {
	tp.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := tp.tc.GetWorkflowHistory(ctx, "sync/"+connID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	isIndex := map[int64]bool{}
	var out []int32
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(tp.t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "IndexSyncPhase" {
			isIndex[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && isIndex[a.GetScheduledEventId()] {
			out = append(out, a.GetAttempt())
		}
	}
	return out
}

func phasesOf(r syncRunJSON) string {
	var ps []struct {
		Name  string `json:"name"`
		Items int64  `json:"items"`
		MS    int64  `json:"ms"`
	}
	_ = json.Unmarshal(r.Phases, &ps)
	s := ""
	for _, p := range ps {
		s += fmt.Sprintf(" %s=%d/%dms", p.Name, p.Items, p.MS)
	}
	return s
}

// TestFaultSyncWorkerKilledMidPhase: the only worker is killed (kill -9) in the middle of the
// catalog phase and a new one started; the run resumes from the committed cursor.
func TestFaultSyncWorkerKilledMidPhase(t *testing.T) {
	t.Parallel()
	tp := startTopology(t, topoOptions{apis: 1, workers: 1, tokenDelay: time.Microsecond, sim: syncFaultSim})
	conn := tp.connectECC()
	totals := tp.simTotals()
	before := tp.sim.firstPageRequests()

	began := time.Now()
	run := tp.startSync(conn, "full")
	at := tp.awaitMidPhase(run, "catalog_context", totals["catalog_context"])
	w := tp.workers[0]
	w.kill()
	t.Logf("worker killed after %s, %d of %d catalog items committed", time.Since(began).Round(time.Millisecond), at, totals["catalog_context"])
	if items, _ := tp.phaseCursor(run, "catalog_context"); items >= totals["catalog_context"] {
		t.Fatalf("the phase finished before the kill took effect")
	}
	tp.restartWorker(w, true)

	r, _ := tp.awaitSync(run, 5*time.Minute)
	t.Logf("run %s after %s:%s", r.Status, time.Since(began).Round(time.Millisecond), phasesOf(r))
	require.Equal(t, "succeeded", r.Status, r.Error)
	tp.checkSyncedOnce(conn, run, totals)
	tp.checkFirstPagesOnce(before)
	attempts := tp.indexAttempts(conn, run)
	require.Len(t, attempts, 5)
	assert.Greater(t, attempts[3], int32(1), "the catalog phase was retried after the kill (attempts %v)", attempts)
}

// TestFaultSyncPostgresDown30s: Postgres stops for 30 s in the middle of the catalog phase;
// the API answers 503 meanwhile, and the run resumes from the committed cursor.
func TestFaultSyncPostgresDown30s(t *testing.T) {
	// Mostly 30 s of waiting on a private topology: it overlaps the other outage test.
	t.Parallel()
	tp := startTopology(t, topoOptions{apis: 1, workers: 1, tokenDelay: time.Microsecond, sim: syncFaultSim})
	conn := tp.connectECC()
	totals := tp.simTotals()
	before := tp.sim.firstPageRequests()

	began := time.Now()
	run := tp.startSync(conn, "full")
	at := tp.awaitMidPhase(run, "catalog_context", totals["catalog_context"])
	tp.pg.stop()
	down := time.Now()
	t.Logf("Postgres stopped after %s, %d of %d catalog items committed", time.Since(began).Round(time.Millisecond), at, totals["catalog_context"])
	for _, when := range []time.Duration{3 * time.Second, 15 * time.Second} {
		time.Sleep(time.Until(down.Add(when)))
		c := tp.doWithin(10*time.Second, 0, "GET", "/api/workspaces/"+tp.ws+"/sync-runs/"+run, nil, nil)
		assert.Equal(t, http.StatusServiceUnavailable, c.status, "the run's status while Postgres is down: %+v", c)
	}
	time.Sleep(time.Until(down.Add(30 * time.Second)))
	tp.pg.start()

	r, odd := tp.awaitSync(run, 5*time.Minute)
	for _, c := range odd {
		assert.Equal(t, http.StatusServiceUnavailable, c.status, "after the outage: %+v", c)
	}
	t.Logf("run %s after %s:%s", r.Status, time.Since(began).Round(time.Millisecond), phasesOf(r))
	require.Equal(t, "succeeded", r.Status, r.Error)
	tp.checkSyncedOnce(conn, run, totals)
	tp.checkFirstPagesOnce(before)
	attempts := tp.indexAttempts(conn, run)
	require.Len(t, attempts, 5)
	assert.Greater(t, attempts[3], int32(1), "the catalog phase was retried after the outage (attempts %v)", attempts)
}

// TestFaultSyncConnectorErrorsHalfTheTime: half of all connector calls fail (503 or 500)
// during a full sync and a delta after a transport; both succeed, each page is written once,
// and the delta applies exactly the transport's changes.
func TestFaultSyncConnectorErrorsHalfTheTime(t *testing.T) {
	t.Parallel()
	tp := startTopology(t, topoOptions{apis: 1, workers: 1, tokenDelay: time.Microsecond, sim: sapsim.Options{GeneratedObjects: 6_000}})
	conn := tp.connectECC()
	totals := tp.simTotals()
	before := tp.sim.firstPageRequests()
	tp.sim.setErrorRate(0.5)

	began := time.Now()
	full := tp.startSync(conn, "full")
	r, _ := tp.awaitSync(full, 5*time.Minute)
	t.Logf("full %s after %s with %d injected faults:%s", r.Status, time.Since(began).Round(time.Millisecond), tp.sim.injected(), phasesOf(r))
	require.Equal(t, "succeeded", r.Status, r.Error)
	assert.GreaterOrEqual(t, tp.sim.injected(), 5, "the connector did fail")
	tp.checkSyncedOnce(conn, full, totals)
	tp.checkFirstPagesOnce(before)
	attempts := tp.indexAttempts(conn, full)
	retried := false
	for _, a := range attempts {
		retried = retried || a > 1
	}
	assert.True(t, retried, "a page failed five times in a row and its activity was retried (attempts %v)", attempts)

	// A transport: one object created, three modified, one deleted.
	sys, _ := tp.sim.land.System("ECC")
	require.NoError(t, sys.ActivateObject("PROG", "ZSYNC_FAULT_REPORT", "Report added while the connector fails", "ZFI",
		"REPORT zsync_fault_report.\nSELECT SINGLE * FROM bkpf INTO @DATA(ls_bkpf) WHERE bukrs = '1000'.\n"))
	touched := sys.TouchCustomObjects(4)
	require.Len(t, touched, 4)
	gone := touched[3]
	var goneType string
	require.NoError(t, tp.db.QueryRow(context.Background(), `SELECT object_type FROM workspace_sap_index
		WHERE connection_id = $1 AND phase = 'custom_objects' AND object_name = $2`, conn, gone).Scan(&goneType))
	require.NoError(t, sys.DeleteObject(goneType, gone))
	totals = tp.simTotals()
	before = tp.sim.firstPageRequests()
	injected := tp.sim.injected()

	began = time.Now()
	delta := tp.startSync(conn, "delta")
	d, _ := tp.awaitSync(delta, 5*time.Minute)
	t.Logf("delta %s after %s with %d injected faults:%s", d.Status, time.Since(began).Round(time.Millisecond), tp.sim.injected()-injected, phasesOf(d))
	require.Equal(t, "succeeded", d.Status, d.Error)
	assert.Equal(t, "delta", d.Mode)
	assert.Greater(t, tp.sim.injected(), injected, "the connector failed during the delta too")
	tp.checkIndexMatches(conn, totals)
	tp.checkFirstPagesOnce(before)
	tp.sim.setErrorRate(0)

	current := func(name string) (n int64, description string) {
		_ = tp.db.QueryRow(context.Background(), `SELECT count(*), coalesce(max(i.description), '') FROM workspace_sap_index i
			JOIN workspace_sap_graph g ON g.connection_id = i.connection_id AND g.generation = i.generation
			WHERE i.connection_id = $1 AND i.phase = 'custom_objects' AND i.object_name = $2`, conn, name).Scan(&n, &description)
		return n, description
	}
	n, _ := current("ZSYNC_FAULT_REPORT")
	assert.EqualValues(t, 1, n, "the created object is in the index once")
	for _, name := range touched[:3] {
		n, description := current(name)
		assert.EqualValues(t, 1, n, name)
		assert.Contains(t, description, ", v1", "%s: the modified version is in the index", name)
	}
	n, _ = current(gone)
	assert.Zero(t, n, "the deleted object is gone from the index")
}
