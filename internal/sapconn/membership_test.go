package sapconn_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/store"
)

// Issue 18 item 2: connections resolved for a member stop working the moment she is removed
// (a script that is still running calls through them), her stored login goes with the
// membership, and resolving again refuses her; nothing more reaches the connector.
func TestRemovedMemberReachesNoSAPSystem(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialUserLoginRequired)
	ctx := context.Background()
	var orgID uuid.UUID
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT org_id FROM workspaces WHERE id = $1`, f.conn.WorkspaceID).Scan(&orgID))
	_, _, err := f.st.SetOrgMember(ctx, orgID, "sam", store.RoleMember)
	require.NoError(t, err)
	_, err = f.st.SetWorkspaceMember(ctx, f.conn.WorkspaceID, "sam", store.RoleMember, "alice")
	require.NoError(t, err)
	f.user = "sam"
	f.login(t, "DEVELOPER")
	e := f.executor(t)
	require.NoError(t, readBKPF(t, e), "a member reads with her login")

	lost, err := f.st.RemoveWorkspaceMember(ctx, f.conn.WorkspaceID, "sam", "alice")
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{f.conn.WorkspaceID}, lost)
	sent := len(f.rec.seen())
	err = readBKPF(t, e)
	var ie *sapconn.IdentityError
	require.ErrorAs(t, err, &ie, "the running executor's next call is refused")
	assert.Equal(t, "not_a_member", ie.Code)
	assert.ErrorContains(t, saveMaterial(t, e), "no longer a member")
	_, err = f.resolver.Connections(ctx, f.conn.WorkspaceID, "sam")
	require.ErrorAs(t, err, &ie, "and nothing resolves for her any more")
	assert.Len(t, f.rec.seen(), sent, "nothing reached the connector after the removal")
	creds, err := f.st.ListCredentials(ctx, "sam")
	require.NoError(t, err)
	assert.Empty(t, creds, "her SAP login was deleted with the membership")
}

// An org admin removed from a workspace's member list still administers it: she keeps her
// access and her login.
func TestOrgAdminKeepsAccessWhenRemovedFromAWorkspaceList(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialUserLoginRequired)
	ctx := context.Background()
	f.login(t, "DEVELOPER") // rita owns the org and is the workspace's admin
	lost, err := f.st.RemoveWorkspaceMember(ctx, f.conn.WorkspaceID, "rita", "alice")
	require.NoError(t, err)
	assert.Empty(t, lost)
	require.NoError(t, readBKPF(t, f.executor(t)))
	creds, err := f.st.ListCredentials(ctx, "rita")
	require.NoError(t, err)
	assert.Len(t, creds, 1)
}

// An org admin demoted to member loses the workspaces she is no member of: her login for their
// connections goes with the demotion, and nothing more is sent in her name.
func TestDemotedOrgAdminLosesWorkspacesSheIsNoMemberOf(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialUserLoginRequired)
	ctx := context.Background()
	var orgID uuid.UUID
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT org_id FROM workspaces WHERE id = $1`, f.conn.WorkspaceID).Scan(&orgID))
	_, _, err := f.st.SetOrgMember(ctx, orgID, "ada", store.RoleAdmin)
	require.NoError(t, err)
	f.user = "ada"
	f.login(t, "DEVELOPER")
	e := f.executor(t)
	require.NoError(t, readBKPF(t, e), "an org admin administers every workspace of the org")

	_, lost, err := f.st.SetOrgMember(ctx, orgID, "ada", store.RoleMember)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{f.conn.WorkspaceID}, lost)
	var ie *sapconn.IdentityError
	require.ErrorAs(t, readBKPF(t, e), &ie)
	assert.Equal(t, "not_a_member", ie.Code)
	creds, err := f.st.ListCredentials(ctx, "ada")
	require.NoError(t, err)
	assert.Empty(t, creds)
}
