package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
)

const maxSettingsBytes = 64 << 10

type createWorkspaceRequest struct {
	OrgID string `json:"org_id"`
	Name  string `json:"name"`
}

// createWorkspace: organization owners and admins create workspaces; the creator becomes its admin.
func (s *Server) createWorkspace(c *gin.Context) {
	var req createWorkspaceRequest
	if !decodeJSON(c, 16<<10, &req) {
		return
	}
	if req.OrgID == "" {
		badRequest(c, "missing_field", "org_id is required")
		return
	}
	orgID, err := uuid.Parse(req.OrgID)
	if err != nil {
		badRequest(c, "invalid_id", "org_id is not a UUID")
		return
	}
	name, ok := requiredName(c, "name", req.Name, 200)
	if !ok {
		return
	}
	o, err := s.Store.GetOrg(c.Request.Context(), orgID, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "organization")
		return
	}
	if roleRank[o.Role] < roleRank[store.RoleAdmin] {
		fail(c, http.StatusForbidden, "forbidden", "creating a workspace needs the organization admin role")
		return
	}
	w, err := s.Store.CreateWorkspace(c.Request.Context(), orgID, name, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "workspace")
		return
	}
	c.JSON(http.StatusCreated, w)
}

func (s *Server) listWorkspaces(c *gin.Context) {
	cur, limit, ok := listParams(c)
	if !ok {
		return
	}
	var orgID *uuid.UUID
	if v := c.Query("org_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			badRequest(c, "invalid_id", "org_id is not a UUID")
			return
		}
		orgID = &id
	}
	ws, err := s.Store.ListWorkspaces(c.Request.Context(), userOf(c), orgID, cur, limit+1)
	if err != nil {
		s.storeFailed(c, err, "workspaces")
		return
	}
	page(c, ws, limit, func(w store.Workspace) store.Cursor { return store.Cursor{CreatedAt: w.CreatedAt, ID: w.ID} })
}

func (s *Server) getWorkspace(c *gin.Context) {
	if w, ok := s.workspaceAccess(c, "id", false); ok {
		c.JSON(http.StatusOK, w)
	}
}

type updateWorkspaceRequest struct {
	Name *string `json:"name"`
	// Who may decide tool calls (docs/api.md, "Who decides a tool call").
	AdminsMayApprove *bool `json:"admins_may_approve"`
	FourEyes         *bool `json:"four_eyes"`
	// MaxToolPolicy bounds every member's tool policy (docs/tools.md, "Policies").
	MaxToolPolicy *string `json:"max_tool_policy"`
}

func (s *Server) updateWorkspace(c *gin.Context) {
	w, ok := s.workspaceAccess(c, "id", true)
	if !ok {
		return
	}
	var req updateWorkspaceRequest
	if !decodeJSON(c, 16<<10, &req) {
		return
	}
	if req.Name == nil && req.AdminsMayApprove == nil && req.FourEyes == nil && req.MaxToolPolicy == nil {
		badRequest(c, "missing_field", "nothing to update: give name, admins_may_approve, four_eyes and/or max_tool_policy")
		return
	}
	if req.MaxToolPolicy != nil && !tools.ValidPolicy(tools.Policy(*req.MaxToolPolicy)) {
		badRequest(c, "invalid_policy", "max_tool_policy must be ask_every_time, run_reads_only or run_everything")
		return
	}
	u := store.WorkspaceUpdate{AdminsMayApprove: req.AdminsMayApprove, FourEyes: req.FourEyes, MaxToolPolicy: req.MaxToolPolicy}
	if req.Name != nil {
		name, ok := requiredName(c, "name", *req.Name, 200)
		if !ok {
			return
		}
		u.Name = &name
	}
	if err := s.Store.UpdateWorkspace(c.Request.Context(), w.ID, userOf(c), u); err != nil {
		s.storeFailed(c, err, "workspace")
		return
	}
	s.getWorkspace(c)
}

func (s *Server) listWorkspaceMembers(c *gin.Context) {
	w, ok := s.workspaceAccess(c, "id", false)
	if !ok {
		return
	}
	members, err := s.Store.ListWorkspaceMembers(c.Request.Context(), w.ID)
	if err != nil {
		s.storeFailed(c, err, "members")
		return
	}
	all(c, members)
}

func (s *Server) addWorkspaceMember(c *gin.Context) {
	w, ok := s.workspaceAccess(c, "id", true)
	if !ok {
		return
	}
	var req memberRequest
	if !decodeJSON(c, 16<<10, &req) {
		return
	}
	user, ok := userIDField(c, req.UserID)
	if !ok {
		return
	}
	if req.Role != store.RoleAdmin && req.Role != store.RoleMember {
		badRequest(c, "invalid_role", "role must be admin or member")
		return
	}
	m, err := s.Store.SetWorkspaceMember(c.Request.Context(), w.ID, user, req.Role, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "member")
		return
	}
	c.JSON(http.StatusCreated, m)
}

func (s *Server) removeWorkspaceMember(c *gin.Context) {
	user := c.Param("userId")
	w, ok := s.workspaceAccess(c, "id", user != userOf(c)) // anyone may leave
	if !ok {
		return
	}
	lost, err := s.Store.RemoveWorkspaceMember(c.Request.Context(), w.ID, user, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "member")
		return
	}
	s.forgetMember(c.Request.Context(), lost, user)
	c.Status(http.StatusNoContent)
}

func (s *Server) getWorkspaceSettings(c *gin.Context) {
	if w, ok := s.workspaceAccess(c, "id", false); ok {
		c.Data(http.StatusOK, "application/json; charset=utf-8", w.Settings)
	}
}

// putWorkspaceSettings replaces the settings object (any JSON object up to 64 KB).
func (s *Server) putWorkspaceSettings(c *gin.Context) {
	w, ok := s.workspaceAccess(c, "id", true)
	if !ok {
		return
	}
	// Decoding into values (not raw JSON) normalises invalid UTF-8, which jsonb would refuse.
	var settings map[string]any
	if !decodeJSON(c, maxSettingsBytes, &settings) {
		return
	}
	if settings == nil {
		badRequest(c, "invalid_json", "settings must be a JSON object")
		return
	}
	raw, _ := json.Marshal(settings)
	if bytes.Contains(raw, []byte(`\u0000`)) {
		badRequest(c, "invalid_json", "settings must not contain NUL characters")
		return
	}
	if err := s.Store.UpdateWorkspace(c.Request.Context(), w.ID, userOf(c), store.WorkspaceUpdate{Settings: raw}); err != nil {
		s.storeFailed(c, err, "workspace")
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", raw)
}

// listAuditLog is the workspace's audit log (admins only): every change of its settings and
// members, who made it, the values before and after, newest first.
func (s *Server) listAuditLog(c *gin.Context) {
	w, ok := s.workspaceAccess(c, "id", true)
	if !ok {
		return
	}
	cur, limit, ok := listParams(c)
	if !ok {
		return
	}
	entries, err := s.Store.ListAuditLog(c.Request.Context(), w.ID, cur, limit+1)
	if err != nil {
		s.storeFailed(c, err, "audit log")
		return
	}
	page(c, entries, limit, func(e store.AuditEntry) store.Cursor { return store.Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
}
