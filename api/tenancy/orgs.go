package tenancy

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
)

type orgRequest struct {
	Name string `json:"name"`
}

func (s *Handler) createOrg(c *gin.Context) {
	var req orgRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	name, ok := httpx.RequiredName(c, "name", req.Name, 200)
	if !ok {
		return
	}
	o, err := s.Tenancy.CreateOrg(c.Request.Context(), name, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "organization")
		return
	}
	c.JSON(http.StatusCreated, o)
}

func (s *Handler) listOrgs(c *gin.Context) {
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	orgs, err := s.Tenancy.ListOrgs(c.Request.Context(), httpx.User(c), cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "organizations")
		return
	}
	httpx.Page(c, orgs, limit, func(o store.Org) store.Cursor { return store.Cursor{CreatedAt: o.CreatedAt, ID: o.ID} })
}

func (s *Handler) getOrg(c *gin.Context) {
	if o, ok := s.Access.Org(c, store.RoleMember); ok {
		c.JSON(http.StatusOK, o)
	}
}

func (s *Handler) updateOrg(c *gin.Context) {
	o, ok := s.Access.Org(c, store.RoleAdmin)
	if !ok {
		return
	}
	var req orgRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	name, ok := httpx.RequiredName(c, "name", req.Name, 200)
	if !ok {
		return
	}
	if err := s.Tenancy.RenameOrg(c.Request.Context(), o.ID, name); err != nil {
		s.Access.StoreFailed(c, err, "organization")
		return
	}
	s.getOrg(c)
}

func (s *Handler) listOrgMembers(c *gin.Context) {
	o, ok := s.Access.Org(c, store.RoleMember)
	if !ok {
		return
	}
	members, err := s.Tenancy.ListOrgMembers(c.Request.Context(), o.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "members")
		return
	}
	httpx.All(c, members)
}

type memberRequest struct {
	UserID string `json:"user_id"`
	Role   string `json:"role"`
}

func (s *Handler) addOrgMember(c *gin.Context) {
	s.setOrgMember(c, "")
}

func (s *Handler) updateOrgMember(c *gin.Context) {
	s.setOrgMember(c, c.Param("userId"))
}

// setOrgMember adds (user from the body) or changes (user from the path) a membership.
// Admins manage members and admins; only owners grant or take the owner role.
func (s *Handler) setOrgMember(c *gin.Context, pathUser string) {
	o, ok := s.Access.Org(c, store.RoleAdmin)
	if !ok {
		return
	}
	var req memberRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	if pathUser != "" {
		if req.UserID != "" && req.UserID != pathUser {
			httpx.BadRequest(c, "invalid_field", "user_id in the body differs from the path")
			return
		}
		req.UserID = pathUser
	}
	user, ok := httpx.UserIDField(c, req.UserID)
	if !ok {
		return
	}
	if httpx.RoleRank[req.Role] == 0 {
		httpx.BadRequest(c, "invalid_role", "role must be owner, admin or member")
		return
	}
	if o.Role != store.RoleOwner {
		current, err := s.Tenancy.GetOrg(c.Request.Context(), o.ID, user)
		if err != nil {
			s.Access.StoreFailed(c, err, "organization")
			return
		}
		if req.Role == store.RoleOwner || current.Role == store.RoleOwner {
			httpx.Fail(c, http.StatusForbidden, "forbidden", "only owners grant or change the owner role")
			return
		}
	}
	m, lost, err := s.Tenancy.SetOrgMember(c.Request.Context(), o.ID, user, req.Role)
	if err != nil {
		s.Access.StoreFailed(c, err, "member")
		return
	}
	s.forgetMember(c.Request.Context(), lost, user) // demoted: workspaces she is no member of are gone
	status := http.StatusOK
	if pathUser == "" {
		status = http.StatusCreated
	}
	c.JSON(status, m)
}

func (s *Handler) removeOrgMember(c *gin.Context) {
	user := c.Param("userId")
	minRole := store.RoleAdmin
	if user == httpx.User(c) {
		minRole = store.RoleMember // anyone may leave
	}
	o, ok := s.Access.Org(c, minRole)
	if !ok {
		return
	}
	if o.Role != store.RoleOwner && user != httpx.User(c) {
		target, err := s.Tenancy.GetOrg(c.Request.Context(), o.ID, user)
		if err != nil {
			s.Access.StoreFailed(c, err, "organization")
			return
		}
		if target.Role == store.RoleOwner {
			httpx.Fail(c, http.StatusForbidden, "forbidden", "only owners remove owners")
			return
		}
	}
	lost, err := s.Tenancy.RemoveOrgMember(c.Request.Context(), o.ID, user, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "member")
		return
	}
	s.forgetMember(c.Request.Context(), lost, user)
	c.Status(http.StatusNoContent)
}
