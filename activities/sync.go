package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/syncschedule"
	"github.com/sapagent/sapagent/workflows"
)

// The activities of SAPSync (workflows/sync.go, docs/sync.md). Each resumes where an earlier
// attempt stopped: an index phase from the cursor committed with its last page, enrichment from
// what is already stored. They run as the connector's technical user.

// Sync knobs (tests shrink them).
var (
	// syncPageSize is how many items a phase asks the connector for per page.
	syncPageSize = 1000
	// syncPageTries is how often a page is fetched before the activity fails and Temporal
	// retries it (with backoff, from the committed cursor).
	syncPageTries = 5
	// syncProgressEvery throttles progress events and rows.
	syncProgressEvery = time.Second
	// syncHeartbeatEvery must be well inside the workflow's 15 s heartbeat timeout.
	syncHeartbeatEvery = 5 * time.Second
)

func syncIDs(workspaceID, connectionID string) (uuid.UUID, uuid.UUID, error) {
	ws, err := uuid.Parse(workspaceID)
	if err != nil {
		return ws, uuid.Nil, badInput("bad workspace id", err)
	}
	conn, err := uuid.Parse(connectionID)
	if err != nil {
		return ws, conn, badInput("bad connection id", err)
	}
	return ws, conn, nil
}

func parseRunID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, badInput("bad sync run id", err)
	}
	return id, nil
}

// connectionGone is a run whose connection was deleted: nothing more can be done.
func connectionGone(err error) error {
	return badInput("the connection was deleted", err)
}

// StartSyncRun records the run, decides its mode (a delta or enrich-only without an index is
// a full) and hands it the generation it builds.
func (a *Activities) StartSyncRun(ctx context.Context, in workflows.SyncInput) (workflows.SyncStart, error) {
	ws, conn, err := syncIDs(in.WorkspaceID, in.ConnectionID)
	if err != nil {
		return workflows.SyncStart{}, err
	}
	if !sapindex.ValidMode(in.Mode) {
		return workflows.SyncStart{}, badInput("unknown sync mode "+in.Mode, nil)
	}
	info := activity.GetInfo(ctx)
	runID, err := uuid.Parse(info.WorkflowExecution.RunID)
	if err != nil {
		return workflows.SyncStart{}, badInput("the workflow run ID is not a UUID", err)
	}
	st, err := a.index().StartSyncRun(ctx, sapindex.SyncRun{ID: runID, WorkspaceID: ws, ConnectionID: conn, WorkflowID: info.WorkflowExecution.ID,
		WorkflowRunID: info.WorkflowExecution.RunID, Mode: in.Mode, Trigger: in.Trigger, RequestedBy: in.RequestedBy})
	if errors.Is(err, store.ErrNotFound) {
		return workflows.SyncStart{}, connectionGone(err)
	}
	if err != nil {
		return workflows.SyncStart{}, fmt.Errorf("start sync run: %w", err)
	}
	out := workflows.SyncStart{RunID: runID.String(), SystemType: st.SystemType, Mode: st.Run.Mode, Generation: st.Generation, ChangeSeq: st.ChangeSeq}
	switch {
	case out.Mode == sapindex.ModeEnrichOnly:
		out.Build = st.Generation
	case st.Run.Generation != 0:
		out.Build = st.Run.Generation // a retried start keeps its build
	default:
		gen, _, err := a.index().BeginBuild(ctx, ws, conn, st.SystemType)
		if err != nil {
			return out, fmt.Errorf("begin index build: %w", err)
		}
		if out.Build, err = a.index().SetSyncRunGeneration(ctx, runID, gen); err != nil {
			return out, fmt.Errorf("record build generation: %w", err)
		}
	}
	if !st.Existing {
		a.publish(ctx, events.WorkspaceTopic(in.WorkspaceID), events.Event{ID: "sync_started:" + out.RunID, Frame: frames.SyncStarted{
			RunID: out.RunID, ConnectionID: in.ConnectionID, Mode: out.Mode, Trigger: in.Trigger}})
	}
	return out, nil
}

// serviceConnector reaches the run's connection as the technical user.
func (a *Activities) serviceConnector(ctx context.Context, ws, conn uuid.UUID) (sap.Connector, error) {
	if a.SAP.Resolver == nil {
		return nil, errors.New("SAP access is not configured in this worker")
	}
	c, err := a.SAP.Resolver.Service(ctx, ws, conn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, connectionGone(err)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrTypeSyncRefused, nil)
	}
	return c.API, nil
}

// callConnector calls the connector, retrying a failed call a few times at once (a flaky
// connector should not cost a whole activity retry per page). Refusals no retry changes
// (authorization, bad request, not supported) are returned as such.
func callConnector(ctx context.Context, api sap.Connector, endpoint string, req, resp any) error {
	var err error
	for try := range syncPageTries {
		if err = api.Call(ctx, endpoint, req, resp); err == nil {
			return nil
		}
		var se *sap.Error
		if (errors.As(err, &se) && refusal(se)) || errors.Is(err, sap.ErrMalformedAnswer) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-time.After(time.Duration(50*(1<<try)) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

// refusal is a connector answer that a retry cannot change.
func refusal(e *sap.Error) bool {
	switch e.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// ProbeChanges pages through the connector's change log after the index's position and
// records the changed objects for the delta (idempotently: a retry records them again).
func (a *Activities) ProbeChanges(ctx context.Context, in workflows.ProbeInput) (workflows.ProbeResult, error) {
	ws, conn, err := syncIDs(in.WorkspaceID, in.ConnectionID)
	if err != nil {
		return workflows.ProbeResult{}, err
	}
	runID, err := parseRunID(in.RunID)
	if err != nil {
		return workflows.ProbeResult{}, err
	}
	api, err := a.serviceConnector(ctx, ws, conn)
	if err != nil {
		return workflows.ProbeResult{}, err
	}
	defer heartbeatEvery(ctx, syncHeartbeatEvery)()
	mode := sapindex.ModeDelta
	if in.Full {
		mode = sapindex.ModeFull
	}
	wait := a.syncWaiter(runID, in.WorkspaceID, in.ConnectionID, mode, workflows.StepProbe)
	if in.Full {
		var info sap.SystemInfo
		if err := callConnector(ctx, api, sap.EndpointSystemInfo, sap.SystemInfoRequest{FullSync: true}, &info); err != nil {
			return workflows.ProbeResult{}, wait.failed(ctx, connectorError("system info", err))
		}
		wait.resumed(ctx)
		return workflows.ProbeResult{LatestSeq: info.ChangeSeq}, nil
	}
	res := workflows.ProbeResult{LatestSeq: in.AfterSeq}
	after := in.AfterSeq
	for {
		var page sap.ProbeChangesResponse
		if err := callConnector(ctx, api, sap.EndpointProbeChanges, sap.ProbeChangesRequest{AfterSeq: after, Limit: syncPageSize}, &page); err != nil {
			return res, wait.failed(ctx, connectorError("probe changes", err))
		}
		wait.resumed(ctx)
		if len(page.Changes) > 0 && page.More && page.Changes[len(page.Changes)-1].Seq <= after {
			return res, poisoned("probe changes", "the connector's change log did not move past the position asked for (a loop)")
		}
		if len(page.Changes) > 0 {
			if err := a.index().RecordChanges(ctx, runID, page.Changes); err != nil {
				return res, fmt.Errorf("record changes: %w", err)
			}
			after = page.Changes[len(page.Changes)-1].Seq
		}
		res.LatestSeq = max(res.LatestSeq, page.LatestSeq, after)
		if !page.More || len(page.Changes) == 0 {
			break
		}
	}
	n, err := a.index().CountSyncChanges(ctx, runID)
	res.Changes = n
	return res, err
}

// connectorError keeps a connector's refusal, or an answer no retry can make usable, from
// being retried forever.
func connectorError(what string, err error) error {
	var se *sap.Error
	if errors.As(err, &se) && refusal(se) {
		return temporal.NewNonRetryableApplicationError(what+": "+se.Error(), workflows.ErrTypeSyncRefused, nil)
	}
	var me *sap.MalformedError
	if errors.As(err, &me) {
		return poisoned(what, "the connector's answer is unusable: "+me.Reason)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// poisoned fails the run at once with the reason: the connector sent something no retry
// changes (an unusable answer, a NUL, a cursor loop, more items than a phase may hold).
func poisoned(what, reason string) error {
	return temporal.NewNonRetryableApplicationError(what+": "+reason, workflows.ErrTypeSyncRefused, nil)
}

// DefaultMaxItemsPerPhase caps the items of one index phase (SYNC_MAX_ITEMS_PER_PHASE): five
// times the largest simulated landscape (1,000,000 objects), far above real systems' phases.
const DefaultMaxItemsPerPhase = 5_000_000

func (a *Activities) maxItemsPerPhase() int64 {
	if a.Sync.MaxItemsPerPhase > 0 {
		return a.Sync.MaxItemsPerPhase
	}
	return DefaultMaxItemsPerPhase
}

// checkPage refuses a page that would never let the phase end or cannot be stored: a next
// cursor seen before in this phase (a loop), more items than the phase may hold, or a NUL
// character (Postgres text cannot hold one). seen holds the phase's cursors so far.
func (a *Activities) checkPage(phase string, state sapindex.PhaseState, page sap.IndexPage, seen map[string]bool) error {
	what := "index " + phase
	if page.NextCursor != "" && (page.NextCursor == state.Cursor || seen[page.NextCursor]) {
		return poisoned(what, "the connector sent a cursor it had sent before in this phase (a cursor loop): the phase would never end")
	}
	if limit := a.maxItemsPerPhase(); state.Items+int64(len(page.Items)) > limit {
		return poisoned(what, fmt.Sprintf("the connector sent more than %d items (SYNC_MAX_ITEMS_PER_PHASE)", limit))
	}
	if containsNUL(page.NextCursor) {
		return poisoned(what, "the connector's cursor contains a NUL character")
	}
	for i, item := range page.Items {
		if containsNUL(item) {
			return poisoned(what, fmt.Sprintf("item %d of the phase contains a NUL character", state.Items+int64(i)+1))
		}
	}
	return nil
}

// containsNUL reports whether a decoded JSON value holds a NUL in any key or string.
func containsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case map[string]any:
		for k, x := range v {
			if strings.IndexByte(k, 0) >= 0 || containsNUL(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if containsNUL(x) {
				return true
			}
		}
	}
	return false
}

// IndexPhase pages one index phase from the connector into the build generation. Each page is
// written in one transaction with the phase's cursor, so a retry resumes after the last
// committed page and no row is written twice; the heartbeat carries the same cursor.
func (a *Activities) IndexPhase(ctx context.Context, in workflows.PhaseInput) (workflows.PhaseResult, error) {
	ws, conn, err := syncIDs(in.WorkspaceID, in.ConnectionID)
	if err != nil {
		return workflows.PhaseResult{}, err
	}
	runID, err := parseRunID(in.RunID)
	if err != nil {
		return workflows.PhaseResult{}, err
	}
	state, err := a.index().PhaseCursor(ctx, runID, in.Phase)
	if err != nil {
		return workflows.PhaseResult{}, fmt.Errorf("load phase cursor: %w", err)
	}
	if state.Done {
		return workflows.PhaseResult{Items: state.Items}, nil
	}
	api, err := a.serviceConnector(ctx, ws, conn)
	if err != nil {
		return workflows.PhaseResult{}, err
	}
	hb := newSyncHeartbeat(ctx, a, in)
	defer hb.stop()
	hb.set(state.Cursor, state.Items, 0)
	target := sapindex.Target{RunID: runID, WorkspaceID: ws, ConnectionID: conn, Generation: in.Generation, Phase: in.Phase}
	seen := map[string]bool{state.Cursor: true} // this attempt's cursors: a repeat is a loop
	wait := a.syncWaiter(runID, in.WorkspaceID, in.ConnectionID, in.Mode, in.Phase)
	for !state.Done {
		var page sap.IndexPage
		req := sap.IndexRequest{Cursor: state.Cursor, Limit: syncPageSize, AfterSeq: in.AfterSeq}
		if err := callConnector(ctx, api, sapindex.Endpoint(in.Phase), req, &page); err != nil {
			var se *sap.Error
			if errors.As(err, &se) && se.Code == sap.ErrNotSupported {
				wait.resumed(ctx)
				return workflows.PhaseResult{Skipped: se.Message}, nil
			}
			return workflows.PhaseResult{Items: state.Items}, wait.failed(ctx, connectorError("index "+in.Phase, err))
		}
		wait.resumed(ctx)
		if err := a.checkPage(in.Phase, state, page, seen); err != nil {
			return workflows.PhaseResult{Items: state.Items}, err
		}
		next, err := a.index().WritePage(ctx, target, state.Cursor, page)
		if err != nil {
			if isConnectionGone(err) {
				return workflows.PhaseResult{}, connectionGone(err)
			}
			return workflows.PhaseResult{Items: state.Items}, fmt.Errorf("write %s page: %w", in.Phase, err)
		}
		state = next
		seen[state.Cursor] = true
		hb.set(state.Cursor, state.Items, int64(page.Total))
	}
	hb.flush(ctx)
	return workflows.PhaseResult{Items: state.Items}, nil
}

// phaseReporter reports a phase's position: to Temporal every few seconds (the UI shows the
// details), to Postgres and the workspace's event stream at most once a second.
type phaseReporter struct {
	a    *Activities
	in   workflows.PhaseInput
	stop func()

	mu          sync.Mutex
	cursor      string
	done, total int64
	lastSent    time.Time
}

// SyncHeartbeat is a phase's heartbeat details.
type SyncHeartbeat struct {
	Phase  string `json:"phase"`
	Cursor string `json:"cursor"`
	Items  int64  `json:"items"`
	Total  int64  `json:"total"`
}

func newSyncHeartbeat(ctx context.Context, a *Activities, in workflows.PhaseInput) *phaseReporter {
	h := &phaseReporter{a: a, in: in}
	h.stop = heartbeatWith(ctx, syncHeartbeatEvery, func() any {
		h.mu.Lock()
		defer h.mu.Unlock()
		return SyncHeartbeat{Phase: in.Phase, Cursor: h.cursor, Items: h.done, Total: h.total}
	})
	return h
}

// set records progress; it publishes when a second has passed since the last report.
func (h *phaseReporter) set(cursor string, done, total int64) {
	h.mu.Lock()
	h.cursor, h.done = cursor, done
	if total > 0 {
		h.total = total
	}
	due := time.Since(h.lastSent) >= syncProgressEvery
	if due {
		h.lastSent = time.Now()
	}
	h.mu.Unlock()
	if due {
		h.flush(context.Background())
	}
}

// flush publishes the current progress now.
func (h *phaseReporter) flush(ctx context.Context) {
	h.mu.Lock()
	p := sapindex.Progress{RunID: h.in.RunID, Mode: h.in.Mode, Phase: h.in.Phase, Done: h.done, Total: h.total, At: time.Now().UTC()}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if conn, err := uuid.Parse(h.in.ConnectionID); err == nil {
		if err := h.a.index().SetSyncProgress(ctx, conn, p); err != nil {
			h.a.Log.Warn("sync progress not stored", "error", err)
		}
	}
	h.a.publish(ctx, events.WorkspaceTopic(h.in.WorkspaceID), events.Event{Frame: frames.SyncProgress{
		RunID: p.RunID, ConnectionID: h.in.ConnectionID, Mode: p.Mode, Phase: p.Phase, Done: p.Done, Total: p.Total}})
}

// EnrichPhase runs one enrichment step (Clean Core, docs, embeddings) over the build
// generation; a delta enriches only its changed objects.
func (a *Activities) EnrichPhase(ctx context.Context, in workflows.PhaseInput) (workflows.PhaseResult, error) {
	if _, _, err := syncIDs(in.WorkspaceID, in.ConnectionID); err != nil {
		return workflows.PhaseResult{}, err
	}
	if _, err := parseRunID(in.RunID); err != nil {
		return workflows.PhaseResult{}, err
	}
	hb := newSyncHeartbeat(ctx, a, in)
	defer hb.stop()
	progress := func(done, total int64) { hb.set("", done, total) }
	n, skipped, err := a.enrich(ctx, in, progress)
	if err != nil {
		if isConnectionGone(err) {
			return workflows.PhaseResult{}, connectionGone(err)
		}
		return workflows.PhaseResult{}, fmt.Errorf("%s: %w", in.Phase, err)
	}
	hb.flush(ctx)
	return workflows.PhaseResult{Items: n, Skipped: skipped}, nil
}

// FinishSyncRun switches a full build in, merges a delta, or removes a build that did not
// finish; records the run and tells the workspace. A retry after the run was recorded does
// nothing more.
func (a *Activities) FinishSyncRun(ctx context.Context, in workflows.FinishInput) error {
	st := in.Status
	ws, conn, err := syncIDs(in.WorkspaceID, st.ConnectionID)
	if err != nil {
		return err
	}
	runID, err := parseRunID(st.RunID)
	if err != nil {
		return err
	}
	defer heartbeatEvery(ctx, syncHeartbeatEvery)()
	var counts sapindex.Counts
	if st.Status == workflows.SyncSucceeded {
		began := time.Now()
		counts, err = a.switchIndex(ctx, conn, runID, st.Mode, in.Build, in.LatestSeq)
		if err != nil && !isConnectionGone(err) {
			return fmt.Errorf("switch index: %w", err)
		}
		st.Phases = switched(st.Phases, time.Since(began))
	} else if st.Mode != sapindex.ModeEnrichOnly && in.Build != 0 {
		if err := a.index().Abandon(ctx, conn, in.Build); err != nil {
			return fmt.Errorf("remove unfinished build: %w", err)
		}
	}
	run, err := a.index().FinishSyncRun(ctx, runID, st.Status, st.Error, st.Phases, counts)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the connection, and its runs, were deleted
	}
	if err != nil {
		return fmt.Errorf("record sync run: %w", err)
	}
	a.prompts.Invalidate(ws.String())
	a.publish(ctx, events.WorkspaceTopic(in.WorkspaceID), events.Event{ID: "sync_finished:" + st.RunID, Frame: syncFinished{
		RunID: st.RunID, ConnectionID: st.ConnectionID, Mode: st.Mode, Status: run.Status, Counts: &counts, Error: st.Error}})
	return nil
}

// switched marks the switch step done: the workflow hands its phases over before the switch,
// which runs here, so the stored run would otherwise show a succeeded run's switch pending.
func switched(phases []workflows.PhaseStatus, took time.Duration) []workflows.PhaseStatus {
	out := append([]workflows.PhaseStatus(nil), phases...)
	for i := range out {
		if out[i].Name == workflows.StepSwitch {
			out[i].Status, out[i].MS = "done", took.Milliseconds()
		}
	}
	return out
}

// switchIndex makes the run's work visible: a full build becomes the generation readers see, a
// delta's staging rows replace the changed objects, enrich-only wrote in place. Then the
// fingerprint is counted from what readers now see.
func (a *Activities) switchIndex(ctx context.Context, conn, runID uuid.UUID, mode string, build, latestSeq int64) (sapindex.Counts, error) {
	x := a.index()
	switch mode {
	case sapindex.ModeFull:
		counts, err := x.ComputeCounts(ctx, conn, build)
		if err != nil {
			return counts, err
		}
		return counts, x.SwitchFull(ctx, conn, build, latestSeq, counts)
	case sapindex.ModeDelta:
		if err := x.MergeDelta(ctx, conn, build, runID, latestSeq); err != nil {
			return sapindex.Counts{}, err
		}
	}
	gen, err := x.Generation(ctx, conn)
	if err != nil {
		return sapindex.Counts{}, err
	}
	counts, err := x.ComputeCounts(ctx, conn, gen)
	if err != nil {
		return counts, err
	}
	return counts, x.SetCounts(ctx, conn, counts)
}

// isConnectionGone: a row of a deleted connection was written (foreign key violation).
func isConnectionGone(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23503" || errors.Is(err, store.ErrNotFound) ||
		errors.Is(err, sapindex.ErrNoRun) || errors.Is(err, sapindex.ErrNoConnection)
}

// syncFinished is the sync_finished frame with the index's counts.
type syncFinished = frames.SyncFinished[sapindex.Counts]

// RecordSkippedSync records a scheduled sync that found another one running.
func (a *Activities) RecordSkippedSync(ctx context.Context, in workflows.SyncInput) error {
	ws, conn, err := syncIDs(in.WorkspaceID, in.ConnectionID)
	if err != nil {
		return err
	}
	info := activity.GetInfo(ctx)
	runID, err := uuid.Parse(info.WorkflowExecution.RunID)
	if err != nil {
		return badInput("the workflow run ID is not a UUID", err)
	}
	err = a.index().RecordSkippedSyncRun(ctx, sapindex.SyncRun{ID: runID, WorkspaceID: ws, ConnectionID: conn, WorkflowID: info.WorkflowExecution.ID,
		WorkflowRunID: info.WorkflowExecution.RunID, Mode: in.Mode, Trigger: in.Trigger, RequestedBy: in.RequestedBy,
		Error: "another sync of this connection was running"})
	if err != nil {
		return err
	}
	a.publish(ctx, events.WorkspaceTopic(in.WorkspaceID), events.Event{ID: "sync_finished:" + runID.String(), Frame: syncFinished{
		RunID: runID.String(), ConnectionID: in.ConnectionID, Mode: in.Mode, Status: workflows.SyncSkipped}})
	return nil
}

// StopWorkspaceSyncs deletes the sync schedules of a workspace being deleted and cancels its
// connections' running syncs; both are idempotent, so a retry redoes them harmlessly.
func (a *Activities) StopWorkspaceSyncs(ctx context.Context, workspaceID string) error {
	defer heartbeatEvery(ctx, deletionHeartbeat)() // a deletion step
	ws, err := uuid.Parse(workspaceID)
	if err != nil {
		return badInput("bad workspace id", err)
	}
	conns, err := a.Store.ListConnections(ctx, ws)
	if err != nil {
		return err
	}
	m := syncschedule.Manager{Client: a.Temporal}
	for _, c := range conns {
		if err := m.Stop(ctx, c.ID.String()); err != nil {
			return err
		}
	}
	return nil
}
