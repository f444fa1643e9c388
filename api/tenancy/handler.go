// Package tenancy answers organizations, workspaces, their members, settings, tool policies,
// audit log and deletions.
package tenancy

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the tenancy routes use.
type Handler struct {
	httpx.Deps // Temporal: deletions run as workflows; removed members' work is stopped
	Tenancy    tenancyStore
	Deletions  deletionStore
	Policies   policyStore
	Agents     busyAgents
}

// tenancyStore is what the organization, workspace, member and audit-log routes read and write.
type tenancyStore interface {
	CreateOrg(ctx context.Context, name, user string) (store.Org, error)
	GetOrg(ctx context.Context, orgID uuid.UUID, user string) (store.Org, error)
	ListOrgs(ctx context.Context, user string, after *store.Cursor, limit int) ([]store.Org, error)
	RenameOrg(ctx context.Context, orgID uuid.UUID, name string) error
	ListOrgMembers(ctx context.Context, orgID uuid.UUID) ([]store.Member, error)
	SetOrgMember(ctx context.Context, orgID uuid.UUID, user, role string) (store.Member, []uuid.UUID, error)
	RemoveOrgMember(ctx context.Context, orgID uuid.UUID, user, actor string) ([]uuid.UUID, error)
	CreateWorkspace(ctx context.Context, orgID uuid.UUID, name, user string) (store.Workspace, error)
	ListWorkspaces(ctx context.Context, user string, orgID *uuid.UUID, after *store.Cursor, limit int) ([]store.Workspace, error)
	UpdateWorkspace(ctx context.Context, id uuid.UUID, actor string, u store.WorkspaceUpdate) error
	ListWorkspaceMembers(ctx context.Context, id uuid.UUID) ([]store.Member, error)
	SetWorkspaceMember(ctx context.Context, id uuid.UUID, user, role, actor string) (store.Member, error)
	RemoveWorkspaceMember(ctx context.Context, id uuid.UUID, user, actor string) ([]uuid.UUID, error)
	ListAuditLog(ctx context.Context, workspaceID uuid.UUID, after *store.Cursor, limit int) ([]store.AuditEntry, error)
}

// deletionStore is what the deletion routes check and mark before their workflow starts.
type deletionStore interface {
	WorkspaceRole(ctx context.Context, id uuid.UUID, user string) (orgID uuid.UUID, role string, err error)
	OrgRole(ctx context.Context, id uuid.UUID, user string) (string, error)
	MarkWorkspaceDeleting(ctx context.Context, id uuid.UUID) error
	MarkOrgDeleting(ctx context.Context, id uuid.UUID) error
}

// policyStore holds each member's tool policy in a workspace.
type policyStore interface {
	ToolPolicy(ctx context.Context, workspaceID uuid.UUID, user string) (string, error)
	SetToolPolicy(ctx context.Context, workspaceID uuid.UUID, user, policy string) error
}

// busyAgents finds the conversations a removed member may still have work in.
type busyAgents interface {
	BusyAgentIDs(ctx context.Context, workspaceIDs []uuid.UUID) ([]uuid.UUID, error)
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
