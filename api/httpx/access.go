package httpx

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

// AccessStore is what the access checks read: the caller's role in a workspace or an
// organization, and a workspace's connection.
type AccessStore interface {
	WorkspaceAccess(ctx context.Context, id uuid.UUID, user string) (store.Workspace, error)
	GetOrg(ctx context.Context, orgID uuid.UUID, user string) (store.Org, error)
	GetConnection(ctx context.Context, workspaceID, id uuid.UUID) (store.Connection, error)
}

// Access answers the checks every domain makes before it touches a workspace's or an
// organization's data, and maps store errors to the API's answers.
type Access struct {
	Store AccessStore
	Log   *slog.Logger
}

// StoreFailed maps a store error to the API's answer; unexpected ones are logged and become
// 503 without internals.
func (a Access) StoreFailed(c *gin.Context, err error, what string) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		NotFound(c, what)
	case errors.Is(err, store.ErrConflict):
		Fail(c, http.StatusConflict, "conflict", what+" conflicts with an existing one or would leave the organization without an owner")
	case errors.Is(err, store.ErrNotOrgMember):
		Fail(c, http.StatusConflict, "not_org_member", "the user must be a member of the workspace's organization first")
	case store.IsInvalidText(err):
		BadRequest(c, "invalid_text", "the request contains a NUL character or invalid UTF-8")
	default:
		a.Log.Error("store", "what", what, "path", c.FullPath(), "error", err)
		Unavailable(c, "the database")
	}
}

// Workspace resolves :id to a workspace the caller belongs to: 404 when it does not
// exist, 403 when the caller is not a member, 403 when admin is required and they are not.
func (a Access) Workspace(c *gin.Context, param string, needAdmin bool) (store.Workspace, bool) {
	id, err := uuid.Parse(c.Param(param))
	if err != nil {
		BadRequest(c, "invalid_id", "workspace id is not a UUID")
		return store.Workspace{}, false
	}
	return a.WorkspaceByID(c, id, needAdmin)
}

// WorkspaceByID is Workspace for an id the caller already has.
func (a Access) WorkspaceByID(c *gin.Context, id uuid.UUID, needAdmin bool) (store.Workspace, bool) {
	w, err := a.Store.WorkspaceAccess(c.Request.Context(), id, User(c))
	if err != nil {
		a.StoreFailed(c, err, "workspace")
		return w, false
	}
	if w.Role == "" {
		Fail(c, http.StatusForbidden, "forbidden", "you are not a member of this workspace")
		return w, false
	}
	if needAdmin && w.Role != store.RoleAdmin {
		Fail(c, http.StatusForbidden, "forbidden", "this needs the workspace admin role")
		return w, false
	}
	return w, true
}

// Org resolves :id to an org the caller belongs to with at least minRole.
func (a Access) Org(c *gin.Context, minRole string) (store.Org, bool) {
	id, ok := UUIDParam(c, "id", "organization")
	if !ok {
		return store.Org{}, false
	}
	o, err := a.Store.GetOrg(c.Request.Context(), id, User(c))
	if err != nil {
		a.StoreFailed(c, err, "organization")
		return o, false
	}
	if o.Role == "" {
		Fail(c, http.StatusForbidden, "forbidden", "you are not a member of this organization")
		return o, false
	}
	if RoleRank[o.Role] < RoleRank[minRole] {
		Fail(c, http.StatusForbidden, "forbidden", "this needs the organization "+minRole+" role")
		return o, false
	}
	return o, true
}

// RoleRank orders the organization roles: a role includes the ones ranked below it.
var RoleRank = map[string]int{store.RoleMember: 1, store.RoleAdmin: 2, store.RoleOwner: 3}

// Connection resolves :id and :connId (404 when the connection is not in the workspace).
func (a Access) Connection(c *gin.Context, needAdmin bool) (store.Connection, bool) {
	w, ok := a.Workspace(c, "id", needAdmin)
	if !ok {
		return store.Connection{}, false
	}
	id, ok := UUIDParam(c, "connId", "connection")
	if !ok {
		return store.Connection{}, false
	}
	conn, err := a.Store.GetConnection(c.Request.Context(), w.ID, id)
	if err != nil {
		a.StoreFailed(c, err, "connection")
		return conn, false
	}
	return conn, true
}

// workspaceKey holds the workspace that Member or Admin resolved for the handlers after it.
const workspaceKey = "sapagent.workspace"

// Member is route-group middleware for routes under /workspaces/:id: the caller must belong to
// the workspace (Workspace's answers otherwise); the handler reads it with WorkspaceOf.
func (a Access) Member(c *gin.Context) { a.requireWorkspace(c, false) }

// Admin is Member for routes that need the workspace admin role.
func (a Access) Admin(c *gin.Context) { a.requireWorkspace(c, true) }

func (a Access) requireWorkspace(c *gin.Context, needAdmin bool) {
	w, ok := a.Workspace(c, "id", needAdmin)
	if !ok {
		return
	}
	c.Set(workspaceKey, w)
	c.Next()
}

// WorkspaceOf is the workspace Member or Admin resolved for this request.
func WorkspaceOf(c *gin.Context) store.Workspace { return c.MustGet(workspaceKey).(store.Workspace) }
