package tenancy

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store/storefake"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// The routes' answers, run against the in-memory fake and (unless -short) against Postgres:
// the same script passing on both is what keeps the fake honest.
func TestTenancyRoutes(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		f := storefake.NewTenancy()
		tenancyRoutes(t, router(&Handler{Tenancy: f, Deletions: f, Policies: f}, storefake.Access{Tenancy: f}))
	})
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() {
			t.Skip("needs Postgres")
		}
		st, _ := storetest.New(t)
		tenancyRoutes(t, router(&Handler{Tenancy: st.Tenancy, Deletions: st.Deletions, Policies: st.Actions, Agents: st.Conversations}, st))
	})
}

// router mounts h under /api behind a stand-in for authentication: the caller is X-User.
func router(h *Handler, access httpx.AccessStore) *gin.Engine {
	gin.SetMode(gin.TestMode)
	log := slog.New(slog.DiscardHandler)
	h.Deps = httpx.Deps{Access: httpx.Access{Store: access, Log: log}, Log: log}
	r := gin.New()
	h.Mount(r.Group("/api", func(c *gin.Context) { httpx.SetCaller(c, c.GetHeader("X-User"), time.Now().Add(time.Hour)) }))
	return r
}

type caller struct {
	t *testing.T
	r *gin.Engine
}

// do sends a request as user and returns the status and the decoded JSON body.
func (c caller) do(user, method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", user)
	w := httptest.NewRecorder()
	c.r.ServeHTTP(w, req)
	var out map[string]any
	if w.Body.Len() > 0 {
		require.NoError(c.t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	}
	return w.Code, out
}

// fails asserts an answer in the API's error shape.
func (c caller) fails(user, method, path, body string, status int, code, message string) {
	c.t.Helper()
	got, out := c.do(user, method, path, body)
	require.Equal(c.t, status, got, "%s %s: %v", method, path, out)
	require.Equal(c.t, map[string]any{"error": message, "code": code}, out, "%s %s", method, path)
}

func (c caller) ok(user, method, path, body string, status int) map[string]any {
	c.t.Helper()
	got, out := c.do(user, method, path, body)
	require.Equal(c.t, status, got, "%s %s: %v", method, path, out)
	return out
}

func tenancyRoutes(t *testing.T, r *gin.Engine) {
	c := caller{t, r}

	// Validation answers 400 in the error shape before anything is stored.
	c.fails("alice", "POST", "/api/orgs", `{}`, 400, "missing_field", "name is required")
	c.fails("alice", "POST", "/api/orgs", `{"name":"`+strings.Repeat("x", 201)+`"}`, 400, "too_long", "name is longer than 200 characters")
	c.fails("alice", "GET", "/api/orgs/nope", "", 400, "invalid_id", "organization id is not a UUID")
	c.fails("alice", "GET", "/api/orgs/"+uuid.NewString(), "", 404, "not_found", "organization not found")

	org := c.ok("alice", "POST", "/api/orgs", `{"name":" Acme "}`, 201)
	require.Equal(t, "Acme", org["name"])
	require.Equal(t, "owner", org["role"])
	orgPath := "/api/orgs/" + org["id"].(string)
	c.fails("bob", "GET", orgPath, "", 403, "forbidden", "you are not a member of this organization")

	ws := c.ok("alice", "POST", "/api/workspaces", `{"org_id":"`+org["id"].(string)+`","name":"Finance"}`, 201)
	require.Equal(t, "admin", ws["role"])
	wsPath := "/api/workspaces/" + ws["id"].(string)
	c.fails("bob", "GET", wsPath, "", 403, "forbidden", "you are not a member of this workspace")

	// A workspace member must belong to the organization first.
	c.fails("alice", "POST", wsPath+"/members", `{"user_id":"bob","role":"member"}`, 409, "not_org_member",
		"the user must be a member of the workspace's organization first")
	c.fails("alice", "POST", orgPath+"/members", `{"user_id":"bob","role":"boss"}`, 400, "invalid_role", "role must be owner, admin or member")
	c.ok("alice", "POST", orgPath+"/members", `{"user_id":"bob","role":"member"}`, 201)
	c.fails("bob", "POST", "/api/workspaces", `{"org_id":"`+org["id"].(string)+`","name":"Mine"}`, 403, "forbidden",
		"creating a workspace needs the organization admin role")
	c.ok("alice", "POST", wsPath+"/members", `{"user_id":"bob","role":"member"}`, 201)

	// A member reads but does not administer, nor delete.
	require.Equal(t, "member", c.ok("bob", "GET", wsPath, "", 200)["role"])
	c.fails("bob", "PATCH", wsPath, `{"name":"Mine"}`, 403, "forbidden", "this needs the workspace admin role")
	c.fails("bob", "GET", wsPath+"/audit-log", "", 403, "forbidden", "this needs the workspace admin role")
	c.fails("bob", "DELETE", wsPath, "", 403, "forbidden", "this needs the workspace admin role")
	c.fails("bob", "DELETE", orgPath, "", 403, "forbidden", "this needs the organization owner role")
	c.fails("bob", "DELETE", orgPath+"/members/alice", "", 403, "forbidden", "this needs the organization admin role")

	// The last owner cannot leave.
	c.fails("alice", "DELETE", orgPath+"/members/alice", "", 409, "conflict",
		"member conflicts with an existing one or would leave the organization without an owner")

	// Each member chooses their own tool policy; changes are in the audit log.
	c.fails("bob", "PUT", wsPath+"/tool-policy", `{"policy":"yolo"}`, 400, "invalid_policy",
		"policy must be ask_every_time, run_reads_only or run_everything")
	require.Equal(t, "run_reads_only", c.ok("bob", "GET", wsPath+"/tool-policy", "", 200)["policy"])
	c.ok("bob", "PUT", wsPath+"/tool-policy", `{"policy":"run_everything"}`, 200)
	require.Equal(t, "run_everything", c.ok("bob", "GET", wsPath+"/tool-policy", "", 200)["policy"])
	c.ok("alice", "PATCH", wsPath, `{"name":"Finance EU"}`, 200)
	require.Equal(t, "Finance EU", c.ok("bob", "GET", wsPath, "", 200)["name"])

	log := c.ok("alice", "GET", wsPath+"/audit-log", "", 200)["data"].([]any)
	var actions []string
	for _, e := range log {
		e := e.(map[string]any)
		actions = append(actions, e["action"].(string)+" by "+e["actor"].(string))
	}
	require.Equal(t, []string{"workspace.update by alice", "member.tool_policy by bob", "member.add by alice"}, actions)

	// Bob leaves: the workspace is no longer his, the organization still is.
	c.ok("bob", "DELETE", wsPath+"/members/bob", "", 204)
	c.fails("bob", "GET", wsPath, "", 403, "forbidden", "you are not a member of this workspace")
	orgs := c.ok("bob", "GET", "/api/orgs", "", 200)["data"].([]any)
	require.Len(t, orgs, 1)
	require.Equal(t, "member", orgs[0].(map[string]any)["role"])
	require.Empty(t, c.ok("bob", "GET", "/api/workspaces", "", 200)["data"])
}
