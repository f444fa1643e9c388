package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
	"github.com/sapagent/sapagent/workflows"
)

// pageCounter sits between the connector client and the simulator: it remembers the cursor
// of every index page asked for and can stop the phase after some pages, as a killed worker
// or a lost connection would.
type pageCounter struct {
	next http.Handler

	mu      sync.Mutex
	cursors []string // cursor of each index request, in order
	served  int      // index pages answered
	// after serving stopAfter pages, stop is called (0: never)
	stopAfter int
	stop      func()
	// down answers every call 503, as a connector whose SAP system is away.
	down bool
}

func (p *pageCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(sap.ErrorBody{Error: sap.ErrorDetail{Code: sap.ErrSystemUnavailable,
			Message: "SAP system ECC is down\tfor maintenance (key " + r.Header.Get(sap.HeaderConnectorKey) + ")"}})
		return
	}
	if !strings.Contains(r.URL.Path, "/index/") {
		p.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req sap.IndexRequest
	_ = json.Unmarshal(body, &req)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	p.next.ServeHTTP(rec, r)
	p.mu.Lock()
	p.cursors = append(p.cursors, req.Cursor)
	if rec.Code == http.StatusOK {
		p.served++
	}
	stop := p.stop
	if p.stopAfter == 0 || p.served != p.stopAfter {
		stop = nil
	}
	p.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	if stop != nil {
		stop() // after the page went out: the activity dies around its write
	}
}

func (p *pageCounter) reset() (cursors []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cursors, p.cursors, p.served, p.stopAfter, p.stop = p.cursors, nil, 0, 0, nil
	return cursors
}

// syncFixture is a worker's activities, a workspace with an ECC connection served over HTTP by
// the simulator (through pageCounter), and a started full run with its build generation.
type syncFixture struct {
	a       *Activities
	land    *sapsim.Landscape
	pages   *pageCounter
	ws      uuid.UUID
	conn    uuid.UUID
	runID   uuid.UUID
	build   int64
	oldSize int
}

func newSyncFixture(t *testing.T, opts sapsim.Options) *syncFixture {
	t.Helper()
	ctx := context.Background()
	a, agent := worker(t, nil)
	f := &syncFixture{a: a, land: sapsim.NewLandscape(opts), ws: agent.WorkspaceID}
	f.pages = &pageCounter{next: f.land.Handler()}
	srv := httptest.NewServer(f.pages)
	t.Cleanup(srv.Close)
	keys, err := secrets.ParseKeys(secrets.NewKey(), "")
	require.NoError(t, err)
	a.SAP.Resolver = &sapconn.Resolver{Store: a.Store, Keyring: keys, Client: sap.NewClient(sap.Guard{}, time.Minute), Simulated: f.land}
	conn, err := a.Store.CreateConnection(ctx, store.Connection{WorkspaceID: f.ws, Name: "ECC", SystemType: "ECC", ConnectorURL: srv.URL + "/ECC",
		Environment: "development", CredentialMode: store.CredentialTechnicalUserAll})
	require.NoError(t, err)
	f.conn = conn.ID
	storetest.ConnectorKey(t, a.Store, keys, conn.ID, sapsim.ECCConnectorKey)

	f.runID = uuid.New()
	_, err = a.index().StartSyncRun(ctx, sapindex.SyncRun{ID: f.runID, WorkspaceID: f.ws, ConnectionID: f.conn, WorkflowID: "sync/" + f.conn.String(),
		WorkflowRunID: f.runID.String(), Mode: "full", Trigger: "manual"})
	require.NoError(t, err)
	gen, _, err := sapindex.New(a.Store.Pool).BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	f.build, err = a.index().SetSyncRunGeneration(ctx, f.runID, gen)
	require.NoError(t, err)

	f.oldSize = syncPageSize
	syncPageSize = 25 // many pages from a small landscape
	t.Cleanup(func() { syncPageSize = f.oldSize })
	return f
}

func (f *syncFixture) input(phase string) workflows.PhaseInput {
	return workflows.PhaseInput{RunID: f.runID.String(), WorkspaceID: f.ws.String(), ConnectionID: f.conn.String(), SystemType: "ECC",
		Mode: "full", Phase: phase, Generation: f.build}
}

// rows counts the build's rows of a phase, and how many distinct objects (items) they are.
func (f *syncFixture) rows(t *testing.T, phase string) (rows, distinct int64) {
	t.Helper()
	require.NoError(t, f.a.Store.Pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT (object_type, object_name, item_key))
		FROM workspace_sap_index WHERE connection_id = $1 AND generation = $2 AND phase = $3`, f.conn, f.build, phase).Scan(&rows, &distinct))
	return rows, distinct
}

// A phase stopped after a few pages (the worker killed, the context gone mid-write) resumes on
// its next attempt from the cursor committed with its last written page: it does not ask for
// the first page again, and the build has every item exactly once.
func TestIndexPhaseResumesFromTheCommittedCursor(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{GeneratedObjects: 4000})
	const phase = sapindex.PhaseCustomObjects
	total := f.simTotal(t, phase)
	require.Greater(t, total, int64(8*syncPageSize), "enough items for many pages")

	ctx, cancel := context.WithCancel(context.Background())
	f.pages.mu.Lock()
	f.pages.stopAfter, f.pages.stop = 5, cancel
	f.pages.mu.Unlock()
	_, err := f.a.IndexPhase(ctx, f.input(phase))
	require.Error(t, err, "the first attempt dies")
	first := f.pages.reset()
	assert.Equal(t, "", first[0], "the first attempt starts at the beginning")

	committed, err := sapindex.New(f.a.Store.Pool).PhaseCursor(context.Background(), f.runID, phase)
	require.NoError(t, err)
	require.False(t, committed.Done)
	require.NotEmpty(t, committed.Cursor, "pages were committed before the stop")
	assert.GreaterOrEqual(t, committed.Items, int64(4*syncPageSize), "the pages before the stopped one are committed")
	assert.LessOrEqual(t, committed.Items, int64(5*syncPageSize))
	rowsBefore, _ := f.rows(t, phase)
	assert.Equal(t, committed.Items, rowsBefore, "rows and cursor are committed together")

	res, err := f.a.IndexPhase(context.Background(), f.input(phase))
	require.NoError(t, err)
	second := f.pages.reset()
	require.NotEmpty(t, second)
	assert.Equal(t, committed.Cursor, second[0], "the retry starts from the committed cursor, not from zero")
	assert.NotContains(t, second, "", "the first page is not asked for again")
	remaining := total - committed.Items
	assert.EqualValues(t, (remaining+int64(syncPageSize)-1)/int64(syncPageSize), len(second), "the retry asks only for the remaining pages")

	assert.Equal(t, total, res.Items)
	rows, distinct := f.rows(t, phase)
	assert.Equal(t, total, rows, "every item of the simulator is in the build")
	assert.Equal(t, rows, distinct, "none twice")
	done, err := sapindex.New(f.a.Store.Pool).PhaseCursor(context.Background(), f.runID, phase)
	require.NoError(t, err)
	assert.True(t, done.Done)
	assert.Equal(t, total, done.Items)

	// A third attempt (Temporal retrying after the activity finished but its result was lost)
	// reads nothing and answers the same count.
	again, err := f.a.IndexPhase(context.Background(), f.input(phase))
	require.NoError(t, err)
	assert.Equal(t, total, again.Items)
	assert.Empty(t, f.pages.reset(), "a finished phase asks the connector for nothing")
}

// A connector failing half its calls: each page is retried in the activity, an activity that
// still fails is called again as Temporal would, and the build ends with every item exactly
// once.
func TestIndexPhaseCompletesAgainstAConnectorFailingHalfItsCalls(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{GeneratedObjects: 2000, ErrorRate: 0.5, Seed: 12})
	for _, phase := range []string{sapindex.PhaseCustomObjects, sapindex.PhaseRelationships} {
		total := f.simTotal(t, phase)
		require.Greater(t, total, int64(4*syncPageSize), phase)
		var res workflows.PhaseResult
		var err error
		attempts := 0
		for attempts = 1; attempts <= 50; attempts++ {
			if res, err = f.a.IndexPhase(context.Background(), f.input(phase)); err == nil {
				break
			}
			assert.NotContains(t, err.Error(), workflows.ErrTypeSyncRefused, "an outage is retryable")
		}
		require.NoError(t, err, "%s after %d attempts", phase, attempts)
		t.Logf("%s: %d items in %d activity attempts", phase, total, attempts)
		assert.Equal(t, total, res.Items, phase)
		rows, distinct := f.rows(t, phase)
		assert.Equal(t, total, rows, "%s: every item in the build", phase)
		assert.Equal(t, rows, distinct, "%s: none twice", phase)
		pages := (int(total) + syncPageSize - 1) / syncPageSize
		assert.Greater(t, len(f.pages.reset()), pages, "%s: the connector did fail calls", phase)
	}
}

// simTotal is how many items the simulator has for a phase, asked directly (not through the
// connector under test) until a flaky simulator answers.
func (f *syncFixture) simTotal(t *testing.T, phase string) int64 {
	t.Helper()
	sys, ok := f.land.System("ECC")
	require.True(t, ok)
	for range 100 {
		out, err := sys.Call(context.Background(), sapindex.Endpoint(phase), sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{"limit":1}`))
		if err == nil {
			return int64(out.(sap.IndexPage).Total)
		}
	}
	t.Fatal("the simulator never answered")
	return 0
}

// A succeeded full: FinishSyncRun switches the build in and records the run with every step
// done, the switch (which it runs) included; a retried finish changes nothing.
func TestFinishSyncRunSwitchesTheBuildAndRecordsTheSwitchDone(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{})
	ctx := context.Background()
	res, err := f.a.IndexPhase(ctx, f.input(sapindex.PhaseCustomObjects))
	require.NoError(t, err)
	phases := []workflows.PhaseStatus{{Name: sapindex.PhaseCustomObjects, Status: "done", Items: res.Items}, {Name: workflows.StepSwitch, Status: "pending"}}
	fin := workflows.FinishInput{WorkspaceID: f.ws.String(), Build: f.build, LatestSeq: 7, Status: workflows.SyncStatus{RunID: f.runID.String(),
		ConnectionID: f.conn.String(), Mode: "full", Trigger: "manual", Status: workflows.SyncSucceeded, Phases: phases}}
	require.NoError(t, f.a.FinishSyncRun(ctx, fin))
	require.NoError(t, f.a.FinishSyncRun(ctx, fin), "a retried finish")

	run, err := f.a.index().GetSyncRun(ctx, f.ws, f.runID)
	require.NoError(t, err)
	assert.Equal(t, workflows.SyncSucceeded, run.Status)
	var stored []workflows.PhaseStatus
	require.NoError(t, json.Unmarshal(run.Phases, &stored))
	require.Len(t, stored, 2)
	assert.Equal(t, "done", stored[1].Status, "the switch is recorded done")
	assert.Equal(t, "pending", phases[1].Status, "the caller's phases are not changed")
	gen, err := sapindex.New(f.a.Store.Pool).Generation(ctx, f.conn)
	require.NoError(t, err)
	assert.Equal(t, f.build, gen, "readers see the build")
}
