package sapindex

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sapagent/sapagent/internal/store"
)

// SyncRun is one sync of a connection's SAP index (sap_sync_runs): what it did, per phase.
type SyncRun struct {
	ID            uuid.UUID       `json:"id"`
	WorkspaceID   uuid.UUID       `json:"workspace_id"`
	ConnectionID  uuid.UUID       `json:"connection_id"`
	WorkflowID    string          `json:"workflow_id"`
	WorkflowRunID string          `json:"workflow_run_id"`
	Mode          string          `json:"mode"`
	Trigger       string          `json:"trigger"`
	Status        string          `json:"status"`
	RequestedBy   string          `json:"requested_by"`
	Generation    int64           `json:"generation"`
	Phases        json.RawMessage `json:"phases"`
	Counts        json.RawMessage `json:"counts"`
	Error         string          `json:"error,omitempty"`
	StartedAt     time.Time       `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
	DurationMS    *int64          `json:"duration_ms"`
	// Waiting is set while the connector fails and the run's phase is retried (nil otherwise).
	Waiting *SyncWaiting `json:"waiting"`
}

// SyncWaiting is what a running sync waits for: the connector's failure (safe to show: no
// secret, truncated), the phase retried, the attempt that failed last and when waiting began.
type SyncWaiting struct {
	Reason  string    `json:"reason"`
	Phase   string    `json:"phase"`
	Attempt int32     `json:"attempt"`
	Since   time.Time `json:"since"`
}

const syncRunColumns = `id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status, requested_by,
	generation, phases, counts, error, started_at, finished_at, waiting`

func scanSyncRun(r pgx.Row) (SyncRun, error) {
	var run SyncRun
	var waiting []byte
	err := r.Scan(&run.ID, &run.WorkspaceID, &run.ConnectionID, &run.WorkflowID, &run.WorkflowRunID, &run.Mode, &run.Trigger, &run.Status,
		&run.RequestedBy, &run.Generation, &run.Phases, &run.Counts, &run.Error, &run.StartedAt, &run.FinishedAt, &waiting)
	if errors.Is(err, pgx.ErrNoRows) {
		return run, store.ErrNotFound
	}
	if len(waiting) > 0 && string(waiting) != "null" {
		var w SyncWaiting
		if json.Unmarshal(waiting, &w) == nil {
			w.Since = w.Since.UTC()
			run.Waiting = &w
		}
	}
	run.StartedAt = run.StartedAt.UTC()
	if run.FinishedAt != nil {
		f := run.FinishedAt.UTC()
		run.FinishedAt = &f
		ms := f.Sub(run.StartedAt).Milliseconds()
		run.DurationMS = &ms
	}
	return run, err
}

// SyncRunStart is a new run and where its connection's index stands.
type SyncRunStart struct {
	Run        SyncRun
	SystemType string
	Generation int64 // what readers see (0: none)
	ChangeSeq  int64
	Existing   bool // the run row was there already (a retried start)
}

// StartSyncRun records a run (id: the workflow run's ID, so a retried start finds its row) and
// marks the connection's index as syncing. store.ErrNotFound: the connection is not in the workspace.
func (x *Index) StartSyncRun(ctx context.Context, run SyncRun) (SyncRunStart, error) {
	var out SyncRunStart
	err := pgx.BeginFunc(ctx, x.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT system_type FROM workspace_connections c JOIN workspaces w ON w.id = c.workspace_id
			WHERE c.id = $1 AND c.workspace_id = $2 AND w.deleting_at IS NULL`, run.ConnectionID, run.WorkspaceID).Scan(&out.SystemType); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workspace_sap_graph (connection_id, workspace_id, system_type) VALUES ($1, $2, $3)
			ON CONFLICT (connection_id) DO NOTHING`, run.ConnectionID, run.WorkspaceID, out.SystemType); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT generation, change_seq FROM workspace_sap_graph WHERE connection_id = $1 FOR UPDATE`,
			run.ConnectionID).Scan(&out.Generation, &out.ChangeSeq); err != nil {
			return err
		}
		if run.Mode != "full" && out.Generation == 0 {
			run.Mode = "full" // nothing to apply a delta to or enrich yet
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status, requested_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8) ON CONFLICT (id) DO NOTHING`,
			run.ID, run.WorkspaceID, run.ConnectionID, run.WorkflowID, run.WorkflowRunID, run.Mode, run.Trigger, run.RequestedBy)
		if err != nil {
			return err
		}
		out.Existing = tag.RowsAffected() == 0
		if _, err := tx.Exec(ctx, `UPDATE workspace_sap_graph SET status = 'syncing', system_type = $2,
			progress = jsonb_build_object('run_id', $3::text, 'mode', $4::text, 'phase', 'starting', 'at', now()), updated_at = now()
			WHERE connection_id = $1`, run.ConnectionID, out.SystemType, run.ID.String(), run.Mode); err != nil {
			return err
		}
		out.Run, err = scanSyncRun(tx.QueryRow(ctx, `SELECT `+syncRunColumns+` FROM sap_sync_runs WHERE id = $1`, run.ID))
		return err
	})
	return out, err
}

// SetSyncRunGeneration records the generation a run builds (once: a retried start keeps it).
func (x *Index) SetSyncRunGeneration(ctx context.Context, runID uuid.UUID, gen int64) (int64, error) {
	var stored int64
	err := x.Pool.QueryRow(ctx, `UPDATE sap_sync_runs SET generation = CASE WHEN generation = 0 THEN $2 ELSE generation END
		WHERE id = $1 RETURNING generation`, runID, gen).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	return stored, err
}

// FinishSyncRun records a run's outcome (once: a finished run is not changed again) and puts
// the connection's index status back: ready when it has an index, failed when a first build
// failed, none when a first build was cancelled or skipped.
func (x *Index) FinishSyncRun(ctx context.Context, runID uuid.UUID, status, errText string, phases, counts any) (SyncRun, error) {
	ph, _ := json.Marshal(phases)
	co, _ := json.Marshal(counts)
	var run SyncRun
	err := pgx.BeginFunc(ctx, x.Pool, func(tx pgx.Tx) error {
		var err error
		run, err = scanSyncRun(tx.QueryRow(ctx, `UPDATE sap_sync_runs SET status = $2, error = $3, phases = $4, counts = $5, finished_at = now(), waiting = NULL
			WHERE id = $1 AND finished_at IS NULL RETURNING `+syncRunColumns, runID, status, errText, ph, co))
		if errors.Is(err, store.ErrNotFound) {
			run, err = scanSyncRun(tx.QueryRow(ctx, `SELECT `+syncRunColumns+` FROM sap_sync_runs WHERE id = $1`, runID))
			return err
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE workspace_sap_graph SET status = CASE WHEN generation > 0 THEN 'ready' WHEN $2 = 'failed' THEN 'failed' ELSE 'none' END,
			progress = '{}', updated_at = now() WHERE connection_id = $1 AND (progress->>'run_id' IS NULL OR progress->>'run_id' = $3)`,
			run.ConnectionID, status, runID.String())
		return err
	})
	return run, err
}

// SetSyncRunWaiting records that a running run waits for the connector. Since stays the
// moment the wait began while the same wait goes on; a finished run is not changed.
// store.ErrNotFound: no running run of that ID.
func (x *Index) SetSyncRunWaiting(ctx context.Context, runID uuid.UUID, reason, phase string, attempt int32) (SyncWaiting, error) {
	var raw []byte
	err := x.Pool.QueryRow(ctx, `UPDATE sap_sync_runs SET waiting = jsonb_build_object('reason', $2::text, 'phase', $3::text, 'attempt', $4::int,
			'since', CASE WHEN waiting->>'phase' = $3 THEN waiting->'since' ELSE to_jsonb(now()) END)
		WHERE id = $1 AND finished_at IS NULL RETURNING waiting`, runID, reason, phase, attempt).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return SyncWaiting{}, store.ErrNotFound
	}
	if err != nil {
		return SyncWaiting{}, err
	}
	var w SyncWaiting
	err = json.Unmarshal(raw, &w)
	w.Since = w.Since.UTC()
	return w, err
}

// ClearSyncRunWaiting ends a run's wait; it reports whether the run was waiting.
func (x *Index) ClearSyncRunWaiting(ctx context.Context, runID uuid.UUID) (bool, error) {
	tag, err := x.Pool.Exec(ctx, `UPDATE sap_sync_runs SET waiting = NULL WHERE id = $1 AND waiting IS NOT NULL`, runID)
	return tag.RowsAffected() > 0, err
}

// RecordSkippedSyncRun records a scheduled run that did not start.
func (x *Index) RecordSkippedSyncRun(ctx context.Context, run SyncRun) error {
	_, err := x.Pool.Exec(ctx, `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status,
		requested_by, error, finished_at)
		SELECT $1, c.workspace_id, c.id, $4, $5, $6, $7, 'skipped', $8, $9, now() FROM workspace_connections c WHERE c.id = $3 AND c.workspace_id = $2
		ON CONFLICT (id) DO NOTHING`,
		run.ID, run.WorkspaceID, run.ConnectionID, run.WorkflowID, run.WorkflowRunID, run.Mode, run.Trigger, run.RequestedBy, run.Error)
	return err
}

// SetSyncProgress stores a running sync's progress (for the API and the dashboard).
func (x *Index) SetSyncProgress(ctx context.Context, connectionID uuid.UUID, progress any) error {
	raw, _ := json.Marshal(progress)
	_, err := x.Pool.Exec(ctx, `UPDATE workspace_sap_graph SET progress = $2, updated_at = now() WHERE connection_id = $1`, connectionID, raw)
	return err
}

// GetSyncRun loads one run of the workspace.
func (x *Index) GetSyncRun(ctx context.Context, workspaceID, id uuid.UUID) (SyncRun, error) {
	return scanSyncRun(x.Pool.QueryRow(ctx, `SELECT `+syncRunColumns+` FROM sap_sync_runs WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
}

// ListSyncRuns lists a workspace's runs, newest first, optionally of one connection.
func (x *Index) ListSyncRuns(ctx context.Context, workspaceID uuid.UUID, connectionID *uuid.UUID, after *store.Cursor, limit int) ([]SyncRun, error) {
	t, id := after.Bound()
	rows, err := x.Pool.Query(ctx, `SELECT `+syncRunColumns+` FROM sap_sync_runs
		WHERE workspace_id = $1 AND ($2::uuid IS NULL OR connection_id = $2) AND (started_at, id) < ($3, $4)
		ORDER BY started_at DESC, id DESC LIMIT $5`, workspaceID, connectionID, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SyncRun, error) { return scanSyncRun(r) })
}

// SAPGraph is a connection's index state (workspace_sap_graph).
type SAPGraph struct {
	ConnectionID    uuid.UUID       `json:"connection_id"`
	WorkspaceID     uuid.UUID       `json:"workspace_id"`
	Generation      int64           `json:"generation"`
	Status          string          `json:"status"`
	ChangeSeq       int64           `json:"change_seq"`
	SystemType      string          `json:"system_type"`
	LastFullSyncAt  *time.Time      `json:"last_full_sync_at"`
	LastDeltaSyncAt *time.Time      `json:"last_delta_sync_at"`
	Counts          json.RawMessage `json:"counts"`
	Progress        json.RawMessage `json:"progress"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// ListSAPGraphs returns the index state of a workspace's connections that have one.
func (x *Index) ListSAPGraphs(ctx context.Context, workspaceID uuid.UUID) ([]SAPGraph, error) {
	rows, err := x.Pool.Query(ctx, `SELECT connection_id, workspace_id, generation, status, change_seq, system_type, last_full_sync_at,
		last_delta_sync_at, counts, progress, updated_at FROM workspace_sap_graph WHERE workspace_id = $1 ORDER BY connection_id`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SAPGraph, error) {
		var g SAPGraph
		err := r.Scan(&g.ConnectionID, &g.WorkspaceID, &g.Generation, &g.Status, &g.ChangeSeq, &g.SystemType, &g.LastFullSyncAt,
			&g.LastDeltaSyncAt, &g.Counts, &g.Progress, &g.UpdatedAt)
		return g, err
	})
}

// CountSyncChanges counts the changed objects a delta run recorded.
func (x *Index) CountSyncChanges(ctx context.Context, runID uuid.UUID) (int64, error) {
	var n int64
	err := x.Pool.QueryRow(ctx, `SELECT count(*) FROM sap_sync_changes WHERE run_id = $1`, runID).Scan(&n)
	return n, err
}

// LatestSyncRuns returns each connection's newest run in the workspace, in one query.
func (x *Index) LatestSyncRuns(ctx context.Context, workspaceID uuid.UUID) (map[uuid.UUID]SyncRun, error) {
	rows, err := x.Pool.Query(ctx, `SELECT DISTINCT ON (connection_id) `+syncRunColumns+` FROM sap_sync_runs
		WHERE workspace_id = $1 ORDER BY connection_id, started_at DESC, id DESC`, workspaceID)
	if err != nil {
		return nil, err
	}
	runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SyncRun, error) { return scanSyncRun(r) })
	out := make(map[uuid.UUID]SyncRun, len(runs))
	for _, r := range runs {
		out[r.ConnectionID] = r
	}
	return out, err
}
