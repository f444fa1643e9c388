package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A change and its audit row commit together: when the row cannot be written, the change is not
// made either (issue 18 finding 1).
func TestNoWorkspaceChangeWithoutItsAuditRow(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	_, _, err = st.SetOrgMember(ctx, org.ID, "bob", RoleMember)
	require.NoError(t, err)

	on, policy := true, "run_reads_only"
	// A NUL in the actor makes Postgres refuse the audit row.
	require.Error(t, st.UpdateWorkspace(ctx, ws.ID, "mallory\x00", WorkspaceUpdate{FourEyes: &on, MaxToolPolicy: &policy}))
	_, err = st.SetWorkspaceMember(ctx, ws.ID, "bob", RoleMember, "mallory\x00")
	require.Error(t, err)
	got, err := st.WorkspaceAccess(ctx, ws.ID, "alice")
	require.NoError(t, err)
	assert.False(t, got.FourEyes, "the change was rolled back with its audit row")
	assert.Equal(t, "run_everything", got.MaxToolPolicy)
	members, err := st.ListWorkspaceMembers(ctx, ws.ID)
	require.NoError(t, err)
	assert.Len(t, members, 1, "bob was not added")

	require.NoError(t, st.UpdateWorkspace(ctx, ws.ID, "alice", WorkspaceUpdate{FourEyes: &on, MaxToolPolicy: &policy}))
	require.NoError(t, st.UpdateWorkspace(ctx, ws.ID, "alice", WorkspaceUpdate{FourEyes: &on}), "no change, no row")
	_, err = st.SetWorkspaceMember(ctx, ws.ID, "bob", RoleMember, "alice")
	require.NoError(t, err)
	require.NoError(t, st.SetToolPolicy(ctx, ws.ID, "bob", "run_everything"))
	require.NoError(t, st.SetToolPolicy(ctx, ws.ID, "bob", "run_everything"))
	rules, err := st.ToolRules(ctx, ws.ID, "bob")
	require.NoError(t, err)
	assert.Equal(t, ToolRules{Chosen: "run_everything", Max: "run_reads_only", FourEyes: true}, rules)

	log, err := st.ListAuditLog(ctx, ws.ID, nil, 10)
	require.NoError(t, err)
	require.Len(t, log, 3)
	assert.Equal(t, AuditMemberToolPolicy, log[0].Action)
	assert.Equal(t, AuditMemberAdd, log[1].Action)
	assert.Equal(t, "bob", log[1].Subject)
	assert.Equal(t, AuditWorkspaceUpdate, log[2].Action)
	assert.JSONEq(t, `{"four_eyes": false, "max_tool_policy": "run_everything"}`, string(log[2].Before))
	assert.JSONEq(t, `{"four_eyes": true, "max_tool_policy": "run_reads_only"}`, string(log[2].After))
	next, err := st.ListAuditLog(ctx, ws.ID, &Cursor{CreatedAt: log[1].CreatedAt, ID: log[1].ID}, 10)
	require.NoError(t, err)
	require.Len(t, next, 1)
	assert.Equal(t, log[2].ID, next[0].ID)
}

// Removing a member is audited in the same transaction: from the workspace (who removed her,
// her role before) and from the organization (a row in each workspace she was a member of).
func TestRemovingAMemberIsAudited(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	for _, u := range []string{"bob", "carol"} {
		_, _, err = st.SetOrgMember(ctx, org.ID, u, RoleMember)
		require.NoError(t, err)
		_, err = st.SetWorkspaceMember(ctx, ws.ID, u, RoleMember, "alice")
		require.NoError(t, err)
	}

	_, err = st.RemoveWorkspaceMember(ctx, ws.ID, "bob", "mallory\x00")
	require.Error(t, err, "no removal without its audit row")
	_, err = st.RemoveWorkspaceMember(ctx, ws.ID, "bob", "alice")
	require.NoError(t, err)
	_, err = st.RemoveOrgMember(ctx, org.ID, "carol", "alice")
	require.NoError(t, err)

	log, err := st.ListAuditLog(ctx, ws.ID, nil, 10)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(log), 2)
	assert.Equal(t, AuditMemberRemove, log[0].Action)
	assert.Equal(t, "carol", log[0].Subject)
	assert.Equal(t, "alice", log[0].Actor)
	assert.JSONEq(t, `{"removed_from": "organization"}`, string(log[0].After))
	assert.Equal(t, AuditMemberRemove, log[1].Action)
	assert.Equal(t, "bob", log[1].Subject)
	assert.JSONEq(t, `{"role": "member"}`, string(log[1].Before))
}
