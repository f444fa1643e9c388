// Package storefake holds in-memory stand-ins for store aggregates, for handler tests where a
// database adds nothing. Each behaves like its Postgres aggregate for what it implements (the
// same errors for a missing row, a last owner or a user outside the organization; rows hidden
// while their workspace is being deleted); what it does not implement it does not pretend to.
package storefake

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

type org struct {
	store.Org
	members  map[string]store.Member
	deleting bool
}

type workspace struct {
	store.Workspace
	members  map[string]store.Member
	deleting bool
}

// Tenancy is store.Tenancy in memory, with the roles and marks of store.Deletions and the
// tool policies of store.Actions that the tenancy routes use.
type Tenancy struct {
	mu         sync.Mutex
	orgs       map[uuid.UUID]*org
	workspaces map[uuid.UUID]*workspace
	audit      []store.AuditEntry
	policies   map[[2]string]string // (workspace, user) -> policy
	now        time.Time
}

// NewTenancy returns an empty tenancy.
func NewTenancy() *Tenancy {
	return &Tenancy{orgs: map[uuid.UUID]*org{}, workspaces: map[uuid.UUID]*workspace{}, policies: map[[2]string]string{},
		now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// tick is a strictly increasing clock, so "newest first" is well defined as in Postgres.
func (t *Tenancy) tick() time.Time {
	t.now = t.now.Add(time.Millisecond)
	return t.now
}

// CreateOrg creates an organization with its creator as owner.
func (t *Tenancy) CreateOrg(_ context.Context, name, user string) (store.Org, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.tick()
	o := &org{Org: store.Org{ID: uuid.New(), Name: name, CreatedBy: user, CreatedAt: now, UpdatedAt: now},
		members: map[string]store.Member{user: {UserID: user, Role: store.RoleOwner, CreatedAt: now}}}
	t.orgs[o.ID] = o
	return t.orgAs(o, user), nil
}

func (t *Tenancy) orgAs(o *org, user string) store.Org {
	out := o.Org
	out.Role = o.members[user].Role
	return out
}

// GetOrg returns the org with the caller's role ("" when not a member); ErrNotFound when it
// does not exist or is being deleted.
func (t *Tenancy) GetOrg(_ context.Context, orgID uuid.UUID, user string) (store.Org, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[orgID]
	if !ok || o.deleting {
		return store.Org{}, store.ErrNotFound
	}
	return t.orgAs(o, user), nil
}

// ListOrgs returns the caller's organizations, newest first.
func (t *Tenancy) ListOrgs(_ context.Context, user string, after *store.Cursor, limit int) ([]store.Org, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []store.Org
	for _, o := range t.orgs {
		if _, member := o.members[user]; member && !o.deleting && before(o.CreatedAt, o.ID, after) {
			out = append(out, t.orgAs(o, user))
		}
	}
	slices.SortFunc(out, func(a, b store.Org) int { return newestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	return page(out, limit), nil
}

// RenameOrg changes an org's name.
func (t *Tenancy) RenameOrg(_ context.Context, orgID uuid.UUID, name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.orgs[orgID]; ok {
		o.Name, o.UpdatedAt = name, t.tick()
	}
	return nil
}

// ListOrgMembers lists an org's members, oldest first.
func (t *Tenancy) ListOrgMembers(_ context.Context, orgID uuid.UUID) ([]store.Member, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[orgID]
	if !ok {
		return nil, nil
	}
	return sortedMembers(o.members), nil
}

// SetOrgMember adds a member or changes a role; demoting the last owner is ErrConflict.
func (t *Tenancy) SetOrgMember(_ context.Context, orgID uuid.UUID, user, role string) (store.Member, []uuid.UUID, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[orgID]
	if !ok {
		// Postgres refuses the row by its foreign key; the API checked the org before.
		return store.Member{}, nil, store.ErrNotFound
	}
	if role != store.RoleOwner && t.lastOwner(o, user) {
		return store.Member{}, nil, store.ErrConflict
	}
	before := t.visible(orgID, user)
	m, exists := o.members[user]
	if !exists {
		m = store.Member{UserID: user, CreatedAt: t.tick()}
	}
	m.Role = role
	o.members[user] = m
	return m, lost(before, t.visible(orgID, user)), nil
}

// RemoveOrgMember removes a member and her workspace memberships in the org; removing the last
// owner is ErrConflict, a user who is no member ErrNotFound.
func (t *Tenancy) RemoveOrgMember(_ context.Context, orgID uuid.UUID, user, actor string) ([]uuid.UUID, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.orgs[orgID]
	if !ok {
		return nil, store.ErrNotFound
	}
	if t.lastOwner(o, user) {
		return nil, store.ErrConflict
	}
	if _, member := o.members[user]; !member {
		return nil, store.ErrNotFound
	}
	before := t.visible(orgID, user)
	delete(o.members, user)
	for _, w := range t.workspaces {
		if m, member := w.members[user]; member && w.OrgID == orgID {
			delete(w.members, user)
			t.record(w.ID, actor, store.AuditMemberRemove, user, map[string]string{"role": m.Role}, map[string]string{"removed_from": "organization"})
		}
	}
	return lost(before, t.visible(orgID, user)), nil
}

func (t *Tenancy) lastOwner(o *org, user string) bool {
	if o.members[user].Role != store.RoleOwner {
		return false
	}
	for id, m := range o.members {
		if id != user && m.Role == store.RoleOwner {
			return false
		}
	}
	return true
}

// visible lists the org's workspaces user can see: a member of it, or an org owner or admin.
func (t *Tenancy) visible(orgID uuid.UUID, user string) []uuid.UUID {
	var out []uuid.UUID
	for _, w := range t.workspaces {
		if w.OrgID == orgID && t.roleIn(w, user) != "" {
			out = append(out, w.ID)
		}
	}
	return out
}

func lost(before, after []uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for _, id := range before {
		if !slices.Contains(after, id) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return out
}

// roleIn is the caller's effective role in a workspace: org owners and admins administer it.
func (t *Tenancy) roleIn(w *workspace, user string) string {
	if r := t.orgs[w.OrgID].members[user].Role; r == store.RoleOwner || r == store.RoleAdmin {
		return store.RoleAdmin
	}
	return w.members[user].Role
}

func sortedMembers(members map[string]store.Member) []store.Member {
	out := make([]store.Member, 0, len(members))
	for _, m := range members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b store.Member) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.UserID, b.UserID)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// record appends to the audit log as store.RecordAudit does.
func (t *Tenancy) record(workspaceID uuid.UUID, actor, action, subject string, before, after any) {
	raw := func(v any) json.RawMessage {
		if v == nil {
			return nil
		}
		b, _ := json.Marshal(v)
		return b
	}
	t.audit = append(t.audit, store.AuditEntry{ID: uuid.New(), WorkspaceID: workspaceID, Actor: actor, Action: action, Subject: subject,
		Before: raw(before), After: raw(after), CreatedAt: t.tick()})
}

// ListAuditLog is a workspace's audit log, newest first.
func (t *Tenancy) ListAuditLog(_ context.Context, workspaceID uuid.UUID, after *store.Cursor, limit int) ([]store.AuditEntry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []store.AuditEntry
	for _, e := range t.audit {
		if e.WorkspaceID == workspaceID && before(e.CreatedAt, e.ID, after) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b store.AuditEntry) int { return newestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	return page(out, limit), nil
}

// before reports whether (t, id) comes after the cursor in newest-first order.
func before(t time.Time, id uuid.UUID, after *store.Cursor) bool {
	if after == nil {
		return true
	}
	if c := t.Compare(after.CreatedAt); c != 0 {
		return c < 0
	}
	return slices.Compare(id[:], after.ID[:]) < 0
}

func newestFirst(at time.Time, aid uuid.UUID, bt time.Time, bid uuid.UUID) int {
	if c := bt.Compare(at); c != 0 {
		return c
	}
	return slices.Compare(bid[:], aid[:])
}

func page[T any](rows []T, limit int) []T {
	if limit >= 0 && len(rows) > limit {
		return rows[:limit]
	}
	return rows
}
