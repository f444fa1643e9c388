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
	a.GET("/orgs", s.listOrgs)
	a.POST("/orgs", s.createOrg)
	a.GET("/orgs/:id", s.getOrg)
	a.PATCH("/orgs/:id", s.updateOrg)
	a.DELETE("/orgs/:id", s.deleteOrg)
	a.GET("/orgs/:id/members", s.listOrgMembers)
	a.POST("/orgs/:id/members", s.addOrgMember)
	a.PATCH("/orgs/:id/members/:userId", s.updateOrgMember)
	a.DELETE("/orgs/:id/members/:userId", s.removeOrgMember)

	a.GET("/deletions/:kind/:id", s.getDeletion)

	a.GET("/workspaces", s.listWorkspaces)
	a.POST("/workspaces", s.createWorkspace)
	a.GET("/workspaces/:id", s.getWorkspace)
	a.PATCH("/workspaces/:id", s.updateWorkspace)
	a.DELETE("/workspaces/:id", s.deleteWorkspace)
	a.GET("/workspaces/:id/members", s.listWorkspaceMembers)
	a.POST("/workspaces/:id/members", s.addWorkspaceMember)
	a.DELETE("/workspaces/:id/members/:userId", s.removeWorkspaceMember)
	a.GET("/workspaces/:id/settings", s.getWorkspaceSettings)
	a.PUT("/workspaces/:id/settings", s.putWorkspaceSettings)

	a.GET("/workspaces/:id/tool-policy", s.getToolPolicy)
	a.PUT("/workspaces/:id/tool-policy", s.putToolPolicy)
	a.GET("/workspaces/:id/audit-log", s.listAuditLog)
}
