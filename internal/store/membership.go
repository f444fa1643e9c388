package store

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// CanUseWorkspace reports whether user may use the workspace right now: a member of it, or an
// owner or admin of its organization, and the workspace is not being deleted. Tools and SAP
// calls ask it when they run, so a removed member's work stops at once (docs/api.md, "Removing
// a member").
func (s *Tenancy) CanUseWorkspace(ctx context.Context, workspaceID uuid.UUID, user string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT `+memberOfWorkspace, workspaceID, user).Scan(&ok)
	return ok, err
}

// visibleWorkspaces lists the org's workspaces user can see inside tx (the rule of canSee).
func visibleWorkspaces(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, user string) ([]uuid.UUID, error) {
	rows, err := tx.Query(ctx, `SELECT w.id FROM workspaces w WHERE w.org_id = $1 AND (
			EXISTS (SELECT 1 FROM workspace_members m WHERE m.workspace_id = w.id AND m.user_id = $2)
			OR EXISTS (SELECT 1 FROM org_members o WHERE o.org_id = w.org_id AND o.user_id = $2 AND o.role IN ('owner', 'admin')))
		ORDER BY w.id`, orgID, user)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// forgetLostAccess runs inside the transaction that changed user's memberships: of the
// workspaces she could see before (before), it returns those she no longer can, and deletes
// her SAP logins for their connections with the change, so nothing is left to act with.
func forgetLostAccess(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, user string, before []uuid.UUID) ([]uuid.UUID, error) {
	after, err := visibleWorkspaces(ctx, tx, orgID, user)
	if err != nil {
		return nil, err
	}
	var lost []uuid.UUID
	for _, id := range before {
		if !slices.Contains(after, id) {
			lost = append(lost, id)
		}
	}
	if len(lost) == 0 {
		return nil, nil
	}
	_, err = tx.Exec(ctx, `DELETE FROM user_connection_credentials u USING workspace_connections c
		WHERE u.connection_id = c.id AND u.user_id = $1 AND c.workspace_id = ANY($2)`, user, lost)
	return lost, err
}
