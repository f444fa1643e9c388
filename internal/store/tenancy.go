package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tenancy is the tenancy aggregate: organizations, workspaces, their members and the audit log.
type Tenancy struct{ pool *pgxpool.Pool }

// Roles.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// ErrConflict is a uniqueness or state conflict (duplicate name, last owner, …).
var ErrConflict = errors.New("conflict")

// ErrNotOrgMember means a workspace member must first belong to the workspace's organization.
var ErrNotOrgMember = errors.New("user is not a member of the organization")

// IsInvalidText reports whether Postgres refused a value as text: a NUL character or invalid
// UTF-8 (22021), or a \u0000 in jsonb (22P05). The API validates input so this should not
// happen; when it does, it is the client's input, not an outage.
func IsInvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// Org is an organization as its member sees it.
type Org struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"` // the caller's role
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Member is a user's membership.
type Member struct {
	UserID    string    `json:"user_id"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateOrg creates an organization with its creator as owner, in one transaction.
func (s *Tenancy) CreateOrg(ctx context.Context, name, user string) (Org, error) {
	var o Org
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO orgs (id, name, created_by) VALUES ($1, $2, $3)
			RETURNING id, name, created_by, created_at, updated_at`, uuid.New(), name, user).
			Scan(&o.ID, &o.Name, &o.CreatedBy, &o.CreatedAt, &o.UpdatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO org_members (org_id, user_id, role) VALUES ($1, $2, 'owner')`, o.ID, user)
		return err
	})
	o.Role = RoleOwner
	return utcOrg(o), err
}

func utcOrg(o Org) Org { o.CreatedAt, o.UpdatedAt = o.CreatedAt.UTC(), o.UpdatedAt.UTC(); return o }

// GetOrg returns the org with the caller's role ("" when not a member); ErrNotFound when it does not exist.
func (s *Tenancy) GetOrg(ctx context.Context, orgID uuid.UUID, user string) (Org, error) {
	var o Org
	err := s.pool.QueryRow(ctx, `SELECT o.id, o.name, coalesce(m.role, ''), o.created_by, o.created_at, o.updated_at
		FROM orgs o LEFT JOIN org_members m ON m.org_id = o.id AND m.user_id = $2 WHERE o.id = $1 AND o.deleting_at IS NULL`, orgID, user).
		Scan(&o.ID, &o.Name, &o.Role, &o.CreatedBy, &o.CreatedAt, &o.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, ErrNotFound
	}
	return utcOrg(o), err
}

// ListOrgs returns the caller's organizations, newest first.
func (s *Tenancy) ListOrgs(ctx context.Context, user string, after *Cursor, limit int) ([]Org, error) {
	t, id := cursorArgs(after)
	rows, err := s.pool.Query(ctx, `SELECT o.id, o.name, m.role, o.created_by, o.created_at, o.updated_at
		FROM orgs o JOIN org_members m ON m.org_id = o.id AND m.user_id = $1
		WHERE o.deleting_at IS NULL AND (o.created_at, o.id) < ($2, $3) ORDER BY o.created_at DESC, o.id DESC LIMIT $4`, user, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Org, error) {
		var o Org
		err := r.Scan(&o.ID, &o.Name, &o.Role, &o.CreatedBy, &o.CreatedAt, &o.UpdatedAt)
		return utcOrg(o), err
	})
}

// RenameOrg changes an org's name.
func (s *Tenancy) RenameOrg(ctx context.Context, orgID uuid.UUID, name string) error {
	_, err := s.pool.Exec(ctx, `UPDATE orgs SET name = $2, updated_at = now() WHERE id = $1`, orgID, name)
	return err
}

// DeleteOrg removes an org and everything in it.
func (s *Tenancy) DeleteOrg(ctx context.Context, orgID uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM orgs WHERE id = $1`, orgID)
	return err
}

// ListOrgMembers lists an org's members.
func (s *Tenancy) ListOrgMembers(ctx context.Context, orgID uuid.UUID) ([]Member, error) {
	return s.members(ctx, `SELECT user_id, role, created_at FROM org_members WHERE org_id = $1 ORDER BY created_at, user_id`, orgID)
}

func (s *Tenancy) members(ctx context.Context, sql string, id uuid.UUID) ([]Member, error) {
	rows, err := s.pool.Query(ctx, sql, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) {
		var m Member
		err := r.Scan(&m.UserID, &m.Role, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
}

// SetOrgMember adds a member or changes a role. Demoting or removing the last owner is a conflict.
// An owner or admin demoted to member loses the workspaces of the org she is no member of: they
// are returned (lost), and her SAP logins for their connections are deleted with the change.
func (s *Tenancy) SetOrgMember(ctx context.Context, orgID uuid.UUID, user, role string) (m Member, lost []uuid.UUID, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockOwners(ctx, tx, orgID, user, role != RoleOwner); err != nil {
			return err
		}
		before, err := visibleWorkspaces(ctx, tx, orgID, user)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO org_members (org_id, user_id, role) VALUES ($1, $2, $3)
			ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role RETURNING user_id, role, created_at`,
			orgID, user, role).Scan(&m.UserID, &m.Role, &m.CreatedAt); err != nil {
			return err
		}
		lost, err = forgetLostAccess(ctx, tx, orgID, user, before)
		return err
	})
	m.CreatedAt = m.CreatedAt.UTC()
	return m, lost, err
}

// RemoveOrgMember removes a member (and their workspace memberships in that org) and, in the
// same transaction, their SAP logins for the connections of every workspace they could see
// there. It returns those workspaces, whose conversations the caller tells.
// actor (who removed her) is recorded in the audit log of each workspace she was a member of.
func (s *Tenancy) RemoveOrgMember(ctx context.Context, orgID uuid.UUID, user, actor string) (lost []uuid.UUID, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockOwners(ctx, tx, orgID, user, true); err != nil {
			return err
		}
		before, err := visibleWorkspaces(ctx, tx, orgID, user)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM org_members WHERE org_id = $1 AND user_id = $2`, orgID, user)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		rows, err := tx.Query(ctx, `DELETE FROM workspace_members wm USING workspaces w
			WHERE wm.workspace_id = w.id AND w.org_id = $1 AND wm.user_id = $2 RETURNING wm.workspace_id, wm.role`, orgID, user)
		if err != nil {
			return err
		}
		type membership struct {
			Workspace uuid.UUID
			Role      string
		}
		removed, err := pgx.CollectRows(rows, pgx.RowToStructByPos[membership])
		if err != nil {
			return err
		}
		for _, m := range removed {
			if err := RecordAudit(ctx, tx, m.Workspace, actor, AuditMemberRemove, user,
				map[string]string{"role": m.Role}, map[string]string{"removed_from": "organization"}); err != nil {
				return err
			}
		}
		lost, err = forgetLostAccess(ctx, tx, orgID, user, before)
		return err
	})
	return lost, err
}

// lockOwners serialises owner changes of an org and refuses to leave it without an owner.
func lockOwners(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, user string, losingOwner bool) error {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE`, orgID); err != nil {
		return err
	}
	if !losingOwner {
		return nil
	}
	var others, isOwner int
	err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE user_id <> $2), count(*) FILTER (WHERE user_id = $2)
		FROM org_members WHERE org_id = $1 AND role = 'owner'`, orgID, user).Scan(&others, &isOwner)
	if err != nil {
		return err
	}
	if isOwner > 0 && others == 0 {
		return ErrConflict
	}
	return nil
}

// canSee is the condition "user $2 may see the workspace whose id is wsExpr": a member of it,
// or an owner/admin of its organization. Every query that reads a workspace's resources uses it,
// so the membership check is part of the query. With a row-independent wsExpr (a parameter)
// Postgres evaluates it once per query.
func canSee(wsExpr string) string {
	return `(` + notDeleting(wsExpr) + `) AND (EXISTS (SELECT 1 FROM workspace_members cm WHERE cm.workspace_id = ` + wsExpr + ` AND cm.user_id = $2)
	OR EXISTS (SELECT 1 FROM workspaces cw JOIN org_members co ON co.org_id = cw.org_id
		WHERE cw.id = ` + wsExpr + ` AND co.user_id = $2 AND co.role IN ('owner', 'admin')))`
}

// Workspace is a workspace as a member sees it.
type Workspace struct {
	ID       uuid.UUID       `json:"id"`
	OrgID    uuid.UUID       `json:"org_id"`
	Name     string          `json:"name"`
	Role     string          `json:"role"` // the caller's effective role: admin or member
	Settings json.RawMessage `json:"settings"`
	// Who may decide tool calls (docs/api.md, "Who decides a tool call"): admins too, and four
	// eyes (a write needs a second person's approval).
	AdminsMayApprove bool `json:"admins_may_approve"`
	FourEyes         bool `json:"four_eyes"`
	// MaxToolPolicy bounds every member's tool policy (run_everything: no bound).
	MaxToolPolicy string    `json:"max_tool_policy"`
	CreatedBy     string    `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// effectiveRole: org owners and admins administer every workspace of their org.
const workspaceColumns = `w.id, w.org_id, w.name,
	coalesce(CASE WHEN om.role IN ('owner', 'admin') THEN 'admin' ELSE wm.role END, ''),
	w.settings, w.admins_may_approve, w.four_eyes, w.max_tool_policy, w.created_by, w.created_at, w.updated_at`

const workspaceAccessJoins = `LEFT JOIN workspace_members wm ON wm.workspace_id = w.id AND wm.user_id = $2
	LEFT JOIN org_members om ON om.org_id = w.org_id AND om.user_id = $2`

func scanWorkspace(r pgx.Row) (Workspace, error) {
	var w Workspace
	err := r.Scan(&w.ID, &w.OrgID, &w.Name, &w.Role, &w.Settings, &w.AdminsMayApprove, &w.FourEyes, &w.MaxToolPolicy, &w.CreatedBy, &w.CreatedAt, &w.UpdatedAt)
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return w, err
}

// WorkspaceAccess loads a workspace with the caller's role ("" when they may not see it);
// ErrNotFound when it does not exist.
func (s *Tenancy) WorkspaceAccess(ctx context.Context, id uuid.UUID, user string) (Workspace, error) {
	w, err := scanWorkspace(s.pool.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces w `+workspaceAccessJoins+` WHERE w.id = $1 AND w.deleting_at IS NULL`, id, user))
	if errors.Is(err, pgx.ErrNoRows) {
		return w, ErrNotFound
	}
	return w, err
}

// CreateWorkspace creates a workspace in an org with its creator as admin.
func (s *Tenancy) CreateWorkspace(ctx context.Context, orgID uuid.UUID, name, user string) (Workspace, error) {
	id := uuid.New()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO workspaces (id, org_id, name, created_by) VALUES ($1, $2, $3, $4)`, id, orgID, name, user); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'admin')`, id, user)
		return err
	})
	if err != nil {
		return Workspace{}, err
	}
	return s.WorkspaceAccess(ctx, id, user)
}

// ListWorkspaces lists the workspaces the caller can see (optionally of one org), newest first.
func (s *Tenancy) ListWorkspaces(ctx context.Context, user string, orgID *uuid.UUID, after *Cursor, limit int) ([]Workspace, error) {
	t, id := cursorArgs(after)
	rows, err := s.pool.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces w `+workspaceAccessJoins+`
		WHERE (wm.user_id IS NOT NULL OR om.role IN ('owner', 'admin')) AND w.deleting_at IS NULL
		  AND ($1::uuid IS NULL OR w.org_id = $1) AND (w.created_at, w.id) < ($3, $4)
		ORDER BY w.created_at DESC, w.id DESC LIMIT $5`, orgID, user, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Workspace, error) { return scanWorkspace(r) })
}

// WorkspaceUpdate is a change of a workspace; nil fields stay as they are.
type WorkspaceUpdate struct {
	Name             *string
	Settings         json.RawMessage
	AdminsMayApprove *bool
	FourEyes         *bool
	MaxToolPolicy    *string
}

// UpdateWorkspace applies a change made by actor and records what it changed in the audit log,
// in one transaction. ErrNotFound when the workspace is gone.
func (s *Tenancy) UpdateWorkspace(ctx context.Context, id uuid.UUID, actor string, u WorkspaceUpdate) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var cur Workspace
		err := tx.QueryRow(ctx, `SELECT name, settings, admins_may_approve, four_eyes, max_tool_policy FROM workspaces WHERE id = $1 FOR UPDATE`, id).
			Scan(&cur.Name, &cur.Settings, &cur.AdminsMayApprove, &cur.FourEyes, &cur.MaxToolPolicy)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE workspaces SET name = coalesce($2, name), settings = coalesce($3, settings),
			admins_may_approve = coalesce($4, admins_may_approve), four_eyes = coalesce($5, four_eyes),
			max_tool_policy = coalesce($6, max_tool_policy), updated_at = now() WHERE id = $1`,
			id, u.Name, u.Settings, u.AdminsMayApprove, u.FourEyes, u.MaxToolPolicy); err != nil {
			return err
		}
		before, after := map[string]any{}, map[string]any{}
		changed := func(key string, old, new any) {
			before[key], after[key] = old, new
		}
		if u.Name != nil && *u.Name != cur.Name {
			changed("name", cur.Name, *u.Name)
		}
		if u.AdminsMayApprove != nil && *u.AdminsMayApprove != cur.AdminsMayApprove {
			changed("admins_may_approve", cur.AdminsMayApprove, *u.AdminsMayApprove)
		}
		if u.FourEyes != nil && *u.FourEyes != cur.FourEyes {
			changed("four_eyes", cur.FourEyes, *u.FourEyes)
		}
		if u.MaxToolPolicy != nil && *u.MaxToolPolicy != cur.MaxToolPolicy {
			changed("max_tool_policy", cur.MaxToolPolicy, *u.MaxToolPolicy)
		}
		if len(after) > 0 {
			if err := RecordAudit(ctx, tx, id, actor, AuditWorkspaceUpdate, "", before, after); err != nil {
				return err
			}
		}
		if u.Settings != nil && !SameJSON(cur.Settings, u.Settings) {
			return RecordAudit(ctx, tx, id, actor, AuditWorkspaceSettings, "",
				map[string]json.RawMessage{"settings": cur.Settings}, map[string]json.RawMessage{"settings": u.Settings})
		}
		return nil
	})
}

// SameJSON compares two JSON documents by value (jsonb reorders keys and spaces).
func SameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// DeleteWorkspace removes a workspace and everything in it.
func (s *Tenancy) DeleteWorkspace(ctx context.Context, id uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, id)
	return err
}

// ListWorkspaceMembers lists explicit workspace members.
func (s *Tenancy) ListWorkspaceMembers(ctx context.Context, id uuid.UUID) ([]Member, error) {
	return s.members(ctx, `SELECT user_id, role, created_at FROM workspace_members WHERE workspace_id = $1 ORDER BY created_at, user_id`, id)
}

// SetWorkspaceMember adds or updates a member (they must belong to the workspace's org) and
// records the addition or role change made by actor in the audit log, in one transaction.
func (s *Tenancy) SetWorkspaceMember(ctx context.Context, id uuid.UUID, user, role, actor string) (Member, error) {
	var m Member
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var old string
		err := tx.QueryRow(ctx, `SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE`, id, user).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO workspace_members (workspace_id, user_id, role)
			SELECT w.id, $2, $3 FROM workspaces w JOIN org_members om ON om.org_id = w.org_id AND om.user_id = $2 WHERE w.id = $1
			ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role
			RETURNING user_id, role, created_at`, id, user, role).Scan(&m.UserID, &m.Role, &m.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotOrgMember
		}
		if err != nil {
			return err
		}
		switch old {
		case "":
			return RecordAudit(ctx, tx, id, actor, AuditMemberAdd, user, nil, map[string]string{"role": role})
		case role:
			return nil
		}
		return RecordAudit(ctx, tx, id, actor, AuditMemberRole, user, map[string]string{"role": old}, map[string]string{"role": role})
	})
	m.CreatedAt = m.CreatedAt.UTC()
	return m, err
}

// RemoveWorkspaceMember removes an explicit membership. If the user can then no longer see the
// workspace (she is no owner or admin of its organization), her SAP logins for its connections
// are deleted in the same transaction and the workspace is returned as lost, so the caller
// tells its conversations.
// actor (who removed her) is recorded in the workspace's audit log with the change.
func (s *Tenancy) RemoveWorkspaceMember(ctx context.Context, id uuid.UUID, user, actor string) (lost []uuid.UUID, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var orgID uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT org_id FROM workspaces WHERE id = $1`, id).Scan(&orgID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		before, err := visibleWorkspaces(ctx, tx, orgID, user)
		if err != nil {
			return err
		}
		var role string
		err = tx.QueryRow(ctx, `DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 RETURNING role`, id, user).Scan(&role)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := RecordAudit(ctx, tx, id, actor, AuditMemberRemove, user, map[string]string{"role": role}, nil); err != nil {
			return err
		}
		lost, err = forgetLostAccess(ctx, tx, orgID, user, before)
		return err
	})
	return lost, err
}
