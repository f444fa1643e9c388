package storefake

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

func (t *Tenancy) workspaceAs(w *workspace, user string) store.Workspace {
	out := w.Workspace
	out.Role = t.roleIn(w, user)
	return out
}

// live is the workspace unless it is gone or being deleted (then hidden, as in Postgres).
func (t *Tenancy) live(id uuid.UUID) (*workspace, bool) {
	w, ok := t.workspaces[id]
	return w, ok && !w.deleting
}

// WorkspaceAccess loads a workspace with the caller's role ("" when they may not see it);
// ErrNotFound when it does not exist or is being deleted.
func (t *Tenancy) WorkspaceAccess(_ context.Context, id uuid.UUID, user string) (store.Workspace, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.live(id)
	if !ok {
		return store.Workspace{}, store.ErrNotFound
	}
	return t.workspaceAs(w, user), nil
}

// CreateWorkspace creates a workspace in an org with its creator as admin.
func (t *Tenancy) CreateWorkspace(_ context.Context, orgID uuid.UUID, name, user string) (store.Workspace, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.orgs[orgID]; !ok {
		return store.Workspace{}, store.ErrNotFound
	}
	now := t.tick()
	w := &workspace{Workspace: store.Workspace{ID: uuid.New(), OrgID: orgID, Name: name, Settings: json.RawMessage(`{}`),
		MaxToolPolicy: "run_everything", CreatedBy: user, CreatedAt: now, UpdatedAt: now},
		members: map[string]store.Member{user: {UserID: user, Role: store.RoleAdmin, CreatedAt: now}}}
	t.workspaces[w.ID] = w
	return t.workspaceAs(w, user), nil
}

// ListWorkspaces lists the workspaces the caller can see (optionally of one org), newest first.
func (t *Tenancy) ListWorkspaces(_ context.Context, user string, orgID *uuid.UUID, after *store.Cursor, limit int) ([]store.Workspace, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []store.Workspace
	for _, w := range t.workspaces {
		if !w.deleting && t.roleIn(w, user) != "" && (orgID == nil || w.OrgID == *orgID) && before(w.CreatedAt, w.ID, after) {
			out = append(out, t.workspaceAs(w, user))
		}
	}
	slices.SortFunc(out, func(a, b store.Workspace) int { return newestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	return page(out, limit), nil
}

// UpdateWorkspace applies a change and records what it changed in the audit log; ErrNotFound
// when the workspace is gone.
func (t *Tenancy) UpdateWorkspace(_ context.Context, id uuid.UUID, actor string, u store.WorkspaceUpdate) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return store.ErrNotFound
	}
	before, after := map[string]any{}, map[string]any{}
	if u.Name != nil && *u.Name != w.Name {
		before["name"], after["name"] = w.Name, *u.Name
		w.Name = *u.Name
	}
	if u.AdminsMayApprove != nil && *u.AdminsMayApprove != w.AdminsMayApprove {
		before["admins_may_approve"], after["admins_may_approve"] = w.AdminsMayApprove, *u.AdminsMayApprove
		w.AdminsMayApprove = *u.AdminsMayApprove
	}
	if u.FourEyes != nil && *u.FourEyes != w.FourEyes {
		before["four_eyes"], after["four_eyes"] = w.FourEyes, *u.FourEyes
		w.FourEyes = *u.FourEyes
	}
	if u.MaxToolPolicy != nil && *u.MaxToolPolicy != w.MaxToolPolicy {
		before["max_tool_policy"], after["max_tool_policy"] = w.MaxToolPolicy, *u.MaxToolPolicy
		w.MaxToolPolicy = *u.MaxToolPolicy
	}
	if len(after) > 0 {
		t.record(id, actor, store.AuditWorkspaceUpdate, "", before, after)
	}
	if u.Settings != nil && !store.SameJSON(w.Settings, u.Settings) {
		t.record(id, actor, store.AuditWorkspaceSettings, "",
			map[string]json.RawMessage{"settings": w.Settings}, map[string]json.RawMessage{"settings": u.Settings})
		w.Settings = u.Settings
	}
	w.UpdatedAt = t.tick()
	return nil
}

// ListWorkspaceMembers lists explicit workspace members, oldest first.
func (t *Tenancy) ListWorkspaceMembers(_ context.Context, id uuid.UUID) ([]store.Member, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return nil, nil
	}
	return sortedMembers(w.members), nil
}

// SetWorkspaceMember adds or updates a member, who must belong to the workspace's org
// (ErrNotOrgMember), and records the change in the audit log.
func (t *Tenancy) SetWorkspaceMember(_ context.Context, id uuid.UUID, user, role, actor string) (store.Member, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return store.Member{}, store.ErrNotOrgMember // Postgres: the INSERT … SELECT finds no row
	}
	if _, member := t.orgs[w.OrgID].members[user]; !member {
		return store.Member{}, store.ErrNotOrgMember
	}
	m, exists := w.members[user]
	old := m.Role
	if !exists {
		m = store.Member{UserID: user, CreatedAt: t.tick()}
	}
	m.Role = role
	w.members[user] = m
	switch old {
	case "":
		t.record(id, actor, store.AuditMemberAdd, user, nil, map[string]string{"role": role})
	case role:
	default:
		t.record(id, actor, store.AuditMemberRole, user, map[string]string{"role": old}, map[string]string{"role": role})
	}
	return m, nil
}

// RemoveWorkspaceMember removes an explicit membership (ErrNotFound when there is none) and
// returns the workspace as lost when the user can no longer see it.
func (t *Tenancy) RemoveWorkspaceMember(_ context.Context, id uuid.UUID, user, actor string) ([]uuid.UUID, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	m, member := w.members[user]
	if !member {
		return nil, store.ErrNotFound
	}
	before := t.visible(w.OrgID, user)
	delete(w.members, user)
	t.record(id, actor, store.AuditMemberRemove, user, map[string]string{"role": m.Role}, nil)
	return lost(before, t.visible(w.OrgID, user)), nil
}

// WorkspaceRole is store.Deletions.WorkspaceRole: the org and the caller's effective role
// (also while the workspace is being deleted); ErrNotFound when it is gone.
func (t *Tenancy) WorkspaceRole(_ context.Context, id uuid.UUID, user string) (uuid.UUID, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return uuid.Nil, "", store.ErrNotFound
	}
	return w.OrgID, t.roleIn(w, user), nil
}

// OrgRole is store.Deletions.OrgRole: the caller's role ("" when none); ErrNotFound when the
// org is gone.
func (t *Tenancy) OrgRole(_ context.Context, id uuid.UUID, user string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[id]
	if !ok {
		return "", store.ErrNotFound
	}
	return o.members[user].Role, nil
}

// MarkWorkspaceDeleting hides a workspace; ErrNotFound when it is gone.
func (t *Tenancy) MarkWorkspaceDeleting(_ context.Context, id uuid.UUID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workspaces[id]
	if !ok {
		return store.ErrNotFound
	}
	w.deleting = true
	return nil
}

// MarkOrgDeleting hides an org and its workspaces; ErrNotFound when it is gone.
func (t *Tenancy) MarkOrgDeleting(_ context.Context, id uuid.UUID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[id]
	if !ok {
		return store.ErrNotFound
	}
	o.deleting = true
	for _, w := range t.workspaces {
		if w.OrgID == id {
			w.deleting = true
		}
	}
	return nil
}

// ToolPolicy is store.Actions.ToolPolicy: the member's policy (the default when unset).
func (t *Tenancy) ToolPolicy(_ context.Context, workspaceID uuid.UUID, user string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.policies[[2]string{workspaceID.String(), user}]; ok {
		return p, nil
	}
	return store.DefaultToolPolicy, nil
}

// SetToolPolicy is store.Actions.SetToolPolicy: stores the policy and audits a change.
func (t *Tenancy) SetToolPolicy(_ context.Context, workspaceID uuid.UUID, user, policy string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := [2]string{workspaceID.String(), user}
	old, ok := t.policies[key]
	if !ok {
		old = store.DefaultToolPolicy
	}
	t.policies[key] = policy
	if old != policy {
		t.record(workspaceID, user, store.AuditMemberToolPolicy, user, map[string]string{"policy": old}, map[string]string{"policy": policy})
	}
	return nil
}
