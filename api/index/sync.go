package index

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/syncschedule"
	"github.com/sapagent/sapagent/workflows"
)

// Syncs of the SAP index (docs/sync.md). Starting, cancelling and scheduling are for workspace
// admins: a sync reads the whole system as the connector's technical user. Members read.

func (s *Syncs) schedules() syncschedule.Manager {
	return syncschedule.Manager{Client: s.Temporal, TaskQueue: s.TaskQueue}
}

type startSyncRequest struct {
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`
}

// startSync starts a manual sync of one connection (POST /workspaces/:id/index).
func (s *Syncs) startSync(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	var req startSyncRequest
	if !httpx.DecodeJSON(c, 4<<10, &req) {
		return
	}
	if req.Mode == "" {
		req.Mode = sapindex.ModeDelta
	}
	if !sapindex.ValidMode(req.Mode) {
		httpx.BadRequest(c, "invalid_mode", "mode must be full, delta or enrich-only")
		return
	}
	id, err := uuid.Parse(req.ConnectionID)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "connection_id must be the UUID of one of the workspace's connections")
		return
	}
	conn, err := s.Store.GetConnection(c.Request.Context(), w.ID, id)
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return
	}
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	in := workflows.SyncInput{WorkspaceID: w.ID.String(), ConnectionID: conn.ID.String(), Mode: req.Mode, Trigger: sapindex.TriggerManual, RequestedBy: httpx.User(c)}
	start := func() (client.WorkflowRun, error) {
		return s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.SyncWorkflowID(conn.ID.String()), TaskQueue: s.TaskQueue,
			WorkflowExecutionErrorWhenAlreadyStarted: true,
			WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		}, workflows.SyncWorkflowName, in)
	}
	run, err := start()
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	// A run is recorded finished a moment before its workflow closes: a start in that moment
	// waits for the close instead of answering 409 about a run the client saw finish.
	for i := 0; i < 20 && errors.As(err, &started) && s.syncRunFinished(ctx, w.ID, started.RunId); i++ {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
		}
		run, err = start()
	}
	switch {
	case errors.As(err, &started):
		c.AbortWithStatusJSON(http.StatusConflict, gin.H{"error": "a sync of this connection is running; wait for it or cancel it", "code": "sync_running",
			"running": gin.H{"run_id": started.RunId, "workflow_id": workflows.SyncWorkflowID(conn.ID.String())}})
		return
	case err != nil:
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "start sync", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"run_id": run.GetRunID(), "workflow_id": run.GetID(), "connection_id": conn.ID, "mode": req.Mode, "status": workflows.SyncRunning})
}

// syncRunFinished reports whether the run of that workflow run ID is recorded as finished.
func (s *Syncs) syncRunFinished(ctx context.Context, workspaceID uuid.UUID, runID string) bool {
	id, err := uuid.Parse(runID)
	if err != nil {
		return false
	}
	run, err := sapindex.New(s.Store.Pool).GetSyncRun(ctx, workspaceID, id)
	return err == nil && run.Status != workflows.SyncRunning
}

// indexConnection is one connection's index as GET /index shows it.
type indexConnection struct {
	ConnectionID uuid.UUID          `json:"connection_id"`
	Name         string             `json:"name"`
	SystemType   string             `json:"system_type"`
	Status       string             `json:"status"` // none | syncing | ready | failed
	Index        *sapindex.SAPGraph `json:"index"`
	LastRun      *sapindex.SyncRun  `json:"last_run"`
}

// indexStatus lists every connection's index and its last run (GET /workspaces/:id/index).
func (s *Syncs) indexStatus(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	ctx := c.Request.Context()
	conns, err := s.Store.ListConnections(ctx, w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "connections")
		return
	}
	graphs, err := sapindex.New(s.Store.Pool).ListSAPGraphs(ctx, w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "index")
		return
	}
	lastRuns, err := sapindex.New(s.Store.Pool).LatestSyncRuns(ctx, w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "sync runs")
		return
	}
	byConn := map[uuid.UUID]sapindex.SAPGraph{}
	for _, g := range graphs {
		byConn[g.ConnectionID] = g
	}
	out := make([]indexConnection, 0, len(conns))
	for _, conn := range conns {
		ic := indexConnection{ConnectionID: conn.ID, Name: conn.Name, SystemType: conn.SystemType, Status: "none"}
		if g, ok := byConn[conn.ID]; ok {
			ic.Index, ic.Status = &g, g.Status
		}
		if r, ok := lastRuns[conn.ID]; ok {
			ic.LastRun = &r
		}
		out = append(out, ic)
	}
	httpx.All(c, out)
}

// optionalConnection reads ?connection_id= (nil when absent; 404 when not the workspace's).
func (s *Syncs) optionalConnection(c *gin.Context, workspaceID uuid.UUID) (*store.Connection, bool) {
	v := c.Query("connection_id")
	if v == "" {
		return nil, true
	}
	id, err := uuid.Parse(v)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "connection_id is not a UUID")
		return nil, false
	}
	conn, err := s.Store.GetConnection(c.Request.Context(), workspaceID, id)
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return nil, false
	}
	return &conn, true
}

// listSyncRuns lists runs newest first (GET /workspaces/:id/sync-runs?connection_id=).
func (s *Syncs) listSyncRuns(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	conn, ok := s.optionalConnection(c, w.ID)
	if !ok {
		return
	}
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	var connID *uuid.UUID
	if conn != nil {
		connID = &conn.ID
	}
	runs, err := sapindex.New(s.Store.Pool).ListSyncRuns(c.Request.Context(), w.ID, connID, cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "sync runs")
		return
	}
	httpx.Page(c, runs, limit, func(r sapindex.SyncRun) store.Cursor { return store.Cursor{CreatedAt: r.StartedAt, ID: r.ID} })
}

func (s *Syncs) loadSyncRun(c *gin.Context, needAdmin bool) (sapindex.SyncRun, bool) {
	w, ok := s.Access.Workspace(c, "id", needAdmin)
	if !ok {
		return sapindex.SyncRun{}, false
	}
	id, ok := httpx.UUIDParam(c, "runId", "sync run")
	if !ok {
		return sapindex.SyncRun{}, false
	}
	run, err := sapindex.New(s.Store.Pool).GetSyncRun(c.Request.Context(), w.ID, id)
	if err != nil {
		s.Access.StoreFailed(c, err, "sync run")
		return run, false
	}
	return run, true
}

// getSyncRun answers one run; a running one carries the workflow's live progress.
func (s *Syncs) getSyncRun(c *gin.Context) {
	run, ok := s.loadSyncRun(c, false)
	if !ok {
		return
	}
	body := gin.H{"run": run}
	if run.Status == workflows.SyncRunning {
		ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
		defer cancel()
		if st, err := workflows.SyncProgress.Ask(ctx, s.Temporal, run.WorkflowID, run.WorkflowRunID); err == nil {
			body["progress"] = st
		}
	}
	c.JSON(http.StatusOK, body)
}

// cancelSyncRun cancels a running sync: its build is removed, the index in use stays.
func (s *Syncs) cancelSyncRun(c *gin.Context) {
	run, ok := s.loadSyncRun(c, true)
	if !ok {
		return
	}
	if run.Status != workflows.SyncRunning {
		httpx.Fail(c, http.StatusConflict, "not_running", "the sync run has finished ("+run.Status+")")
		return
	}
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	err := s.Temporal.CancelWorkflow(ctx, run.WorkflowID, run.WorkflowRunID)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		httpx.Fail(c, http.StatusConflict, "not_running", "the sync run is no longer running")
		return
	case err != nil:
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "cancel sync", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"run_id": run.ID, "status": "cancelling"})
}

// listSyncSchedules describes the schedules of every connection, or of ?connection_id=.
func (s *Syncs) listSyncSchedules(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	one, ok := s.optionalConnection(c, w.ID)
	if !ok {
		return
	}
	conns := []store.Connection{}
	if one != nil {
		conns = append(conns, *one)
	} else {
		var err error
		if conns, err = s.Store.ListConnections(c.Request.Context(), w.ID); err != nil {
			s.Access.StoreFailed(c, err, "connections")
			return
		}
	}
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	out := []syncschedule.Schedule{}
	for _, conn := range conns {
		list, err := s.schedules().List(ctx, conn)
		if err != nil {
			httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "describe schedules", err)
			httpx.Unavailable(c, "the workflow service")
			return
		}
		out = append(out, list...)
	}
	httpx.All(c, out)
}

type scheduleActionRequest struct {
	Note string `json:"note"`
}

// scheduleAction pauses, unpauses or triggers one schedule
// (POST /workspaces/:id/sync-schedules/:connId/:mode/:action).
func (s *Syncs) scheduleAction(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	mode, action := c.Param("mode"), c.Param("action")
	if mode != "full" && mode != "delta" {
		httpx.BadRequest(c, "invalid_mode", "a connection has a full and a delta schedule")
		return
	}
	var req scheduleActionRequest
	if c.Request.ContentLength > 0 && !httpx.DecodeJSON(c, 4<<10, &req) {
		return
	}
	if !httpx.TextOK(req.Note) || len(req.Note) > 500 {
		httpx.BadRequest(c, "invalid_field", "note must be text of at most 500 bytes")
		return
	}
	note := req.Note
	if note == "" {
		note = action + " by " + httpx.User(c)
	}
	m := s.schedules()
	var do func(context.Context) error
	switch action {
	case "pause":
		do = func(ctx context.Context) error { return m.Pause(ctx, conn.ID.String(), mode, note) }
	case "unpause":
		do = func(ctx context.Context) error { return m.Unpause(ctx, conn.ID.String(), mode, note) }
	case "trigger":
		do = func(ctx context.Context) error { return m.Trigger(ctx, conn.ID.String(), mode) }
	default:
		httpx.BadRequest(c, "invalid_action", "action must be pause, unpause or trigger")
		return
	}
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	err := do(ctx)
	if errors.Is(err, syncschedule.ErrNoSchedule) {
		// Created with a connection while Temporal was away, or deleted by hand: restore it.
		if err = m.Ensure(ctx, conn); err == nil {
			err = do(ctx)
		}
	}
	if err != nil {
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "schedule "+action, err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	list, err := m.List(ctx, conn)
	if err != nil {
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "describe schedules", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	for _, sc := range list {
		if sc.Mode == mode {
			c.JSON(http.StatusOK, sc)
			return
		}
	}
}

// EnsureSchedules creates or updates a connection's schedules while answering a request.
func (s *Syncs) EnsureSchedules(c *gin.Context, conn store.Connection) bool {
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	err := s.schedules().Ensure(ctx, conn)
	if errors.Is(err, syncschedule.ErrBadSpec) {
		httpx.BadRequest(c, "invalid_schedule", err.Error())
		return false
	}
	if err != nil {
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "sync schedules", err)
		httpx.Unavailable(c, "the workflow service")
		return false
	}
	return true
}

// StopConnectionSyncs deletes a connection's schedules and cancels its running sync, before
// the connection's rows go.
func (s *Syncs) StopConnectionSyncs(c *gin.Context, conn store.Connection) bool {
	ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
	defer cancel()
	err := s.schedules().Stop(ctx, conn.ID.String())
	if err != nil {
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "stop connection syncs", err)
		httpx.Unavailable(c, "the workflow service")
		return false
	}
	return true
}
