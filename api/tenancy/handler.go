// Package tenancy answers organizations, workspaces, their members, settings, tool policies,
// audit log and deletions.
package tenancy

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the tenancy routes use.
type Handler struct {
	Access          httpx.Access
	Store           *store.Store
	Temporal        client.Client // deletions run as workflows; removed members' work is stopped
	TaskQueue       string
	TemporalTimeout time.Duration
	Log             *slog.Logger
}

// Mount adds the tenancy routes.
func (s *Handler) Mount(a *gin.RouterGroup) {
	del := deletions{s}
	a.GET("/orgs", s.listOrgs)
	a.POST("/orgs", s.createOrg)
	a.GET("/orgs/:id", s.getOrg)
	a.PATCH("/orgs/:id", s.updateOrg)
	a.DELETE("/orgs/:id", del.deleteOrg)
	a.GET("/orgs/:id/members", s.listOrgMembers)
	a.POST("/orgs/:id/members", s.addOrgMember)
	a.PATCH("/orgs/:id/members/:userId", s.updateOrgMember)
	a.DELETE("/orgs/:id/members/:userId", s.removeOrgMember)

	a.GET("/deletions/:kind/:id", del.getDeletion)

	a.GET("/workspaces", s.listWorkspaces)
	a.POST("/workspaces", s.createWorkspace)
	// Deleting checks the organization's roles, leaving checks who leaves: in their handlers.
	a.DELETE("/workspaces/:id", del.deleteWorkspace)
	a.DELETE("/workspaces/:id/members/:userId", s.removeWorkspaceMember)

	member := a.Group("/workspaces/:id", s.Access.Member)
	member.GET("", s.getWorkspace)
	member.GET("/members", s.listWorkspaceMembers)
	member.GET("/settings", s.getWorkspaceSettings)
	member.GET("/tool-policy", s.getToolPolicy)
	member.PUT("/tool-policy", s.putToolPolicy) // each member's own policy

	admin := a.Group("/workspaces/:id", s.Access.Admin)
	admin.PATCH("", s.updateWorkspace)
	admin.POST("/members", s.addWorkspaceMember)
	admin.PUT("/settings", s.putWorkspaceSettings)
	admin.GET("/audit-log", s.listAuditLog)
}
