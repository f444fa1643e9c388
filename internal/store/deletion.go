package store

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Deletions marks organizations and workspaces as being deleted and lists what their deletion
// workflows must remove.
type Deletions struct{ pool *pgxpool.Pool }

// notDeleting is the condition "the workspace wsExpr is not being deleted": a workspace whose
// deletion has begun is hidden from every read, so nothing new gets into it.
func notDeleting(wsExpr string) string {
	return `NOT EXISTS (SELECT 1 FROM workspaces dw WHERE dw.id = ` + wsExpr + ` AND dw.deleting_at IS NOT NULL)`
}

// MarkWorkspaceDeleting hides a workspace (idempotent; the first time is kept). ErrNotFound
// when it is already gone.
func (s *Deletions) MarkWorkspaceDeleting(ctx context.Context, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `UPDATE workspaces SET deleting_at = coalesce(deleting_at, now()) WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return err
}

// MarkOrgDeleting hides an org and all its workspaces (idempotent). ErrNotFound when it is gone.
func (s *Deletions) MarkOrgDeleting(ctx context.Context, id uuid.UUID) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE orgs SET deleting_at = coalesce(deleting_at, now()) WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		_, err = tx.Exec(ctx, `UPDATE workspaces SET deleting_at = coalesce(deleting_at, now()) WHERE org_id = $1`, id)
		return err
	})
}

// WorkspaceRole is the caller's effective role in a workspace, even one being deleted, and
// its org: what DELETE needs to answer a repeated request with the same deletion.
func (s *Deletions) WorkspaceRole(ctx context.Context, id uuid.UUID, user string) (orgID uuid.UUID, role string, err error) {
	err = s.pool.QueryRow(ctx, `SELECT w.org_id,
		coalesce(CASE WHEN om.role IN ('owner', 'admin') THEN 'admin' ELSE wm.role END, '')
		FROM workspaces w `+workspaceAccessJoins+` WHERE w.id = $1`, id, user).Scan(&orgID, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return orgID, "", ErrNotFound
	}
	return orgID, role, err
}

// OrgRole is the caller's role in an org, even one being deleted ("" when not a member).
func (s *Deletions) OrgRole(ctx context.Context, id uuid.UUID, user string) (string, error) {
	var role string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(m.role, '') FROM orgs o
		LEFT JOIN org_members m ON m.org_id = o.id AND m.user_id = $2 WHERE o.id = $1`, id, user).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return role, err
}

// OrgWorkspaceIDs lists every workspace of an org, deleting ones included.
func (s *Deletions) OrgWorkspaceIDs(ctx context.Context, orgID uuid.UUID) ([]uuid.UUID, error) {
	return s.ids(ctx, `SELECT id FROM workspaces WHERE org_id = $1 ORDER BY id`, orgID)
}

// WorkspaceAgentIDs lists every agent of a workspace, archived ones included.
func (s *Deletions) WorkspaceAgentIDs(ctx context.Context, workspaceID uuid.UUID) ([]uuid.UUID, error) {
	return s.ids(ctx, `SELECT id FROM agents WHERE workspace_id = $1 ORDER BY id`, workspaceID)
}

// WorkspaceFileKeys lists the blob keys of a workspace's files.
func (s *Deletions) WorkspaceFileKeys(ctx context.Context, workspaceID uuid.UUID) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT storage_key FROM files WHERE workspace_id = $1 ORDER BY storage_key`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *Deletions) ids(ctx context.Context, sql string, arg uuid.UUID) ([]uuid.UUID, error) {
	rows, err := s.pool.Query(ctx, sql, arg)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
