package tenancy

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/httpx/httpxtest"
	"github.com/sapagent/sapagent/internal/store/storefake"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// The routes' answers, run against the in-memory fake and (unless -short) against Postgres:
// the same script passing on both is what keeps the fake honest.
func TestTenancyRoutes(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		f := storefake.NewTenancy()
		tenancyRoutes(t, routes(t, &Handler{Tenancy: f, Deletions: f, Policies: f}, storefake.Access{Tenancy: f}))
	})
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() {
			t.Skip("needs Postgres")
		}
		st, _ := storetest.New(t)
		tenancyRoutes(t, routes(t, &Handler{Tenancy: st.Tenancy, Deletions: st.Deletions, Policies: st.Actions, Agents: st.Conversations}, st))
	})
}

// routes mounts h with its shared dependencies over access.
func routes(t *testing.T, h *Handler, access httpx.AccessStore) httpxtest.Client {
	h.Deps = httpxtest.Deps(access)
	return httpxtest.New(t, h.Mount)
}

func tenancyRoutes(t *testing.T, c httpxtest.Client) {

	// Validation answers 400 in the error shape before anything is stored.
	c.Fails("alice", "POST", "/api/orgs", `{}`, 400, "missing_field", "name is required")
	c.Fails("alice", "POST", "/api/orgs", `{"name":"`+strings.Repeat("x", 201)+`"}`, 400, "too_long", "name is longer than 200 characters")
	c.Fails("alice", "GET", "/api/orgs/nope", "", 400, "invalid_id", "organization id is not a UUID")
	c.Fails("alice", "GET", "/api/orgs/"+uuid.NewString(), "", 404, "not_found", "organization not found")

	org := c.OK("alice", "POST", "/api/orgs", `{"name":" Acme "}`, 201)
	require.Equal(t, "Acme", org["name"])
	require.Equal(t, "owner", org["role"])
	orgPath := "/api/orgs/" + org["id"].(string)
	c.Fails("bob", "GET", orgPath, "", 403, "forbidden", "you are not a member of this organization")

	ws := c.OK("alice", "POST", "/api/workspaces", `{"org_id":"`+org["id"].(string)+`","name":"Finance"}`, 201)
	require.Equal(t, "admin", ws["role"])
	wsPath := "/api/workspaces/" + ws["id"].(string)
	c.Fails("bob", "GET", wsPath, "", 403, "forbidden", "you are not a member of this workspace")

	// A workspace member must belong to the organization first.
	c.Fails("alice", "POST", wsPath+"/members", `{"user_id":"bob","role":"member"}`, 409, "not_org_member",
		"the user must be a member of the workspace's organization first")
	c.Fails("alice", "POST", orgPath+"/members", `{"user_id":"bob","role":"boss"}`, 400, "invalid_role", "role must be owner, admin or member")
	c.OK("alice", "POST", orgPath+"/members", `{"user_id":"bob","role":"member"}`, 201)
	c.Fails("bob", "POST", "/api/workspaces", `{"org_id":"`+org["id"].(string)+`","name":"Mine"}`, 403, "forbidden",
		"creating a workspace needs the organization admin role")
	c.OK("alice", "POST", wsPath+"/members", `{"user_id":"bob","role":"member"}`, 201)

	// A member reads but does not administer, nor delete.
	require.Equal(t, "member", c.OK("bob", "GET", wsPath, "", 200)["role"])
	c.Fails("bob", "PATCH", wsPath, `{"name":"Mine"}`, 403, "forbidden", "this needs the workspace admin role")
	c.Fails("bob", "GET", wsPath+"/audit-log", "", 403, "forbidden", "this needs the workspace admin role")
	c.Fails("bob", "DELETE", wsPath, "", 403, "forbidden", "this needs the workspace admin role")
	c.Fails("bob", "DELETE", orgPath, "", 403, "forbidden", "this needs the organization owner role")
	c.Fails("bob", "DELETE", orgPath+"/members/alice", "", 403, "forbidden", "this needs the organization admin role")

	// The last owner cannot leave.
	c.Fails("alice", "DELETE", orgPath+"/members/alice", "", 409, "conflict",
		"member conflicts with an existing one or would leave the organization without an owner")

	// Each member chooses their own tool policy; changes are in the audit log.
	c.Fails("bob", "PUT", wsPath+"/tool-policy", `{"policy":"yolo"}`, 400, "invalid_policy",
		"policy must be ask_every_time, run_reads_only or run_everything")
	require.Equal(t, "run_reads_only", c.OK("bob", "GET", wsPath+"/tool-policy", "", 200)["policy"])
	c.OK("bob", "PUT", wsPath+"/tool-policy", `{"policy":"run_everything"}`, 200)
	require.Equal(t, "run_everything", c.OK("bob", "GET", wsPath+"/tool-policy", "", 200)["policy"])
	c.OK("alice", "PATCH", wsPath, `{"name":"Finance EU"}`, 200)
	require.Equal(t, "Finance EU", c.OK("bob", "GET", wsPath, "", 200)["name"])

	log := c.OK("alice", "GET", wsPath+"/audit-log", "", 200)["data"].([]any)
	var actions []string
	for _, e := range log {
		e := e.(map[string]any)
		actions = append(actions, e["action"].(string)+" by "+e["actor"].(string))
	}
	require.Equal(t, []string{"workspace.update by alice", "member.tool_policy by bob", "member.add by alice"}, actions)

	// Bob leaves: the workspace is no longer his, the organization still is.
	c.OK("bob", "DELETE", wsPath+"/members/bob", "", 204)
	c.Fails("bob", "GET", wsPath, "", 403, "forbidden", "you are not a member of this workspace")
	orgs := c.OK("bob", "GET", "/api/orgs", "", 200)["data"].([]any)
	require.Len(t, orgs, 1)
	require.Equal(t, "member", orgs[0].(map[string]any)["role"])
	require.Empty(t, c.OK("bob", "GET", "/api/workspaces", "", 200)["data"])
}
