package store

import (
	"context"

	"github.com/google/uuid"
)

// ETLRun is one extract_transform_load execution.
type ETLRun struct {
	WorkspaceID        uuid.UUID
	AgentID            uuid.UUID
	UserID             string
	Fingerprint        string
	SourceConnectionID uuid.UUID
	TargetConnectionID uuid.UUID
	DryRun             bool
	Extracted          int
	Inserted           int
	Updated            int
	Failed             int
}

// RecordETLRun stores a run.
func (s *Actions) RecordETLRun(ctx context.Context, r ETLRun) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO etl_runs (workspace_id, agent_id, user_id, fingerprint, source_connection_id, target_connection_id,
		dry_run, extracted, inserted, updated, failed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		r.WorkspaceID, r.AgentID, r.UserID, r.Fingerprint, r.SourceConnectionID, r.TargetConnectionID, r.DryRun, r.Extracted, r.Inserted, r.Updated, r.Failed)
	return err
}

// SucceededDryRun reports whether the workspace's latest dry run of this fingerprint found
// rows and refused none.
func (s *Actions) SucceededDryRun(ctx context.Context, workspaceID uuid.UUID, fingerprint string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT failed = 0 AND extracted > 0 FROM etl_runs
		WHERE workspace_id = $1 AND fingerprint = $2 AND dry_run ORDER BY id DESC LIMIT 1), false)`,
		workspaceID, fingerprint).Scan(&ok)
	return ok, err
}
