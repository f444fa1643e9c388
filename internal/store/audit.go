package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Audit actions: what changed in a workspace.
const (
	AuditWorkspaceUpdate   = "workspace.update"   // name, admins_may_approve, four_eyes, max_tool_policy
	AuditWorkspaceSettings = "workspace.settings" // the free-form settings object
	AuditMemberAdd         = "member.add"
	AuditMemberRole        = "member.role"
	AuditMemberRemove      = "member.remove"
	AuditMemberToolPolicy  = "member.tool_policy"
)

// AuditEntry is one change of a workspace: who made it, what, and the changed values before and
// after it (JSON objects holding only what changed).
type AuditEntry struct {
	ID          uuid.UUID       `json:"id"`
	WorkspaceID uuid.UUID       `json:"workspace_id"`
	Actor       string          `json:"actor"`
	Action      string          `json:"action"`
	Subject     string          `json:"subject"` // the member a member change concerns ("" for workspace changes)
	Before      json.RawMessage `json:"before"`
	After       json.RawMessage `json:"after"`
	CreatedAt   time.Time       `json:"created_at"`
}

// Execer runs a statement: a pool or, to audit a change in its own transaction, a pgx.Tx.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// RecordAudit writes one audit row. Call it with the transaction that makes the change, so no
// change is committed without its row (and no row without its change). before and after are
// marshalled to JSON objects (nil is {}).
func RecordAudit(ctx context.Context, db Execer, workspaceID uuid.UUID, actor, action, subject string, before, after any) error {
	b, err := auditJSON(before)
	if err != nil {
		return err
	}
	a, err := auditJSON(after)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `INSERT INTO workspace_audit_log (id, workspace_id, actor, action, subject, before, after)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, uuid.New(), workspaceID, actor, action, subject, b, a)
	return err
}

func auditJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return []byte(`{}`), nil
	case json.RawMessage:
		if len(x) == 0 {
			return []byte(`{}`), nil
		}
		return x, nil
	}
	return json.Marshal(v)
}

// ListAuditLog lists a workspace's audit rows, newest first.
func (s *Tenancy) ListAuditLog(ctx context.Context, workspaceID uuid.UUID, after *Cursor, limit int) ([]AuditEntry, error) {
	t, id := cursorArgs(after)
	rows, err := s.pool.Query(ctx, `SELECT id, workspace_id, actor, action, subject, before, after, created_at FROM workspace_audit_log
		WHERE workspace_id = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4`, workspaceID, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		err := r.Scan(&e.ID, &e.WorkspaceID, &e.Actor, &e.Action, &e.Subject, &e.Before, &e.After, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	})
}
