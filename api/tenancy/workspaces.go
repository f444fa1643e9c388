package tenancy

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
)

const maxSettingsBytes = 64 << 10

type createWorkspaceRequest struct {
	OrgID string `json:"org_id"`
	Name  string `json:"name"`
}

// createWorkspace: organization owners and admins create workspaces; the creator becomes its admin.
func (s *Handler) createWorkspace(c *gin.Context) {
	var req createWorkspaceRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	if req.OrgID == "" {
		httpx.BadRequest(c, "missing_field", "org_id is required")
		return
	}
	orgID, err := uuid.Parse(req.OrgID)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "org_id is not a UUID")
		return
	}
	name, ok := httpx.RequiredName(c, "name", req.Name, 200)
	if !ok {
		return
	}
	o, err := s.Tenancy.GetOrg(c.Request.Context(), orgID, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "organization")
		return
	}
	if httpx.RoleRank[o.Role] < httpx.RoleRank[store.RoleAdmin] {
		httpx.Fail(c, http.StatusForbidden, "forbidden", "creating a workspace needs the organization admin role")
		return
	}
	w, err := s.Tenancy.CreateWorkspace(c.Request.Context(), orgID, name, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "workspace")
		return
	}
	c.JSON(http.StatusCreated, w)
}

func (s *Handler) listWorkspaces(c *gin.Context) {
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	var orgID *uuid.UUID
	if v := c.Query("org_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			httpx.BadRequest(c, "invalid_id", "org_id is not a UUID")
			return
		}
		orgID = &id
	}
	ws, err := s.Tenancy.ListWorkspaces(c.Request.Context(), httpx.User(c), orgID, cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "workspaces")
		return
	}
	httpx.Page(c, ws, limit, func(w store.Workspace) store.Cursor { return store.Cursor{CreatedAt: w.CreatedAt, ID: w.ID} })
}

func (s *Handler) getWorkspace(c *gin.Context) {
	c.JSON(http.StatusOK, httpx.WorkspaceOf(c))
}

type updateWorkspaceRequest struct {
	Name *string `json:"name"`
	// Who may decide tool calls (docs/api.md, "Who decides a tool call").
	AdminsMayApprove *bool `json:"admins_may_approve"`
	FourEyes         *bool `json:"four_eyes"`
	// MaxToolPolicy bounds every member's tool policy (docs/tools.md, "Policies").
	MaxToolPolicy *string `json:"max_tool_policy"`
}

func (s *Handler) updateWorkspace(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	var req updateWorkspaceRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	if req.Name == nil && req.AdminsMayApprove == nil && req.FourEyes == nil && req.MaxToolPolicy == nil {
		httpx.BadRequest(c, "missing_field", "nothing to update: give name, admins_may_approve, four_eyes and/or max_tool_policy")
		return
	}
	if req.MaxToolPolicy != nil && !tools.ValidPolicy(tools.Policy(*req.MaxToolPolicy)) {
		httpx.BadRequest(c, "invalid_policy", "max_tool_policy must be ask_every_time, run_reads_only or run_everything")
		return
	}
	u := store.WorkspaceUpdate{AdminsMayApprove: req.AdminsMayApprove, FourEyes: req.FourEyes, MaxToolPolicy: req.MaxToolPolicy}
	if req.Name != nil {
		name, ok := httpx.RequiredName(c, "name", *req.Name, 200)
		if !ok {
			return
		}
		u.Name = &name
	}
	if err := s.Tenancy.UpdateWorkspace(c.Request.Context(), w.ID, httpx.User(c), u); err != nil {
		s.Access.StoreFailed(c, err, "workspace")
		return
	}
	// The workspace the middleware loaded is from before the update: answer with the new one.
	fresh, ok := s.Access.WorkspaceByID(c, w.ID, false)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, fresh)
}

func (s *Handler) listWorkspaceMembers(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	members, err := s.Tenancy.ListWorkspaceMembers(c.Request.Context(), w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "members")
		return
	}
	httpx.All(c, members)
}

func (s *Handler) addWorkspaceMember(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	var req memberRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	user, ok := httpx.UserIDField(c, req.UserID)
	if !ok {
		return
	}
	if req.Role != store.RoleAdmin && req.Role != store.RoleMember {
		httpx.BadRequest(c, "invalid_role", "role must be admin or member")
		return
	}
	m, err := s.Tenancy.SetWorkspaceMember(c.Request.Context(), w.ID, user, req.Role, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "member")
		return
	}
	c.JSON(http.StatusCreated, m)
}

func (s *Handler) removeWorkspaceMember(c *gin.Context) {
	user := c.Param("userId")
	w, ok := s.Access.Workspace(c, "id", user != httpx.User(c)) // anyone may leave
	if !ok {
		return
	}
	lost, err := s.Tenancy.RemoveWorkspaceMember(c.Request.Context(), w.ID, user, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "member")
		return
	}
	s.forgetMember(c.Request.Context(), lost, user)
	c.Status(http.StatusNoContent)
}

func (s *Handler) getWorkspaceSettings(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", httpx.WorkspaceOf(c).Settings)
}

// putWorkspaceSettings replaces the settings object (any JSON object up to 64 KB).
func (s *Handler) putWorkspaceSettings(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	// Decoding into values (not raw JSON) normalises invalid UTF-8, which jsonb would refuse.
	var settings map[string]any
	if !httpx.DecodeJSON(c, maxSettingsBytes, &settings) {
		return
	}
	if settings == nil {
		httpx.BadRequest(c, "invalid_json", "settings must be a JSON object")
		return
	}
	raw, _ := json.Marshal(settings)
	if bytes.Contains(raw, []byte(`\u0000`)) {
		httpx.BadRequest(c, "invalid_json", "settings must not contain NUL characters")
		return
	}
	if err := s.Tenancy.UpdateWorkspace(c.Request.Context(), w.ID, httpx.User(c), store.WorkspaceUpdate{Settings: raw}); err != nil {
		s.Access.StoreFailed(c, err, "workspace")
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", raw)
}

// listAuditLog is the workspace's audit log (admins only): every change of its settings and
// members, who made it, the values before and after, newest first.
func (s *Handler) listAuditLog(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	entries, err := s.Tenancy.ListAuditLog(c.Request.Context(), w.ID, cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "audit log")
		return
	}
	httpx.Page(c, entries, limit, func(e store.AuditEntry) store.Cursor { return store.Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
}
