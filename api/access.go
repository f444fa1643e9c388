package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

// uuidParam parses a path parameter or answers 400.
func uuidParam(c *gin.Context, name, what string) (uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		badRequest(c, "invalid_id", what+" id is not a UUID")
		return id, false
	}
	return id, true
}

// storeFailed maps a store error to the API's answer; unexpected ones are logged and become
// 503 without internals.
func (s *Server) storeFailed(c *gin.Context, err error, what string) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		notFound(c, what)
	case errors.Is(err, store.ErrConflict):
		fail(c, http.StatusConflict, "conflict", what+" conflicts with an existing one or would leave the organization without an owner")
	case errors.Is(err, store.ErrNotOrgMember):
		fail(c, http.StatusConflict, "not_org_member", "the user must be a member of the workspace's organization first")
	case store.IsInvalidText(err):
		badRequest(c, "invalid_text", "the request contains a NUL character or invalid UTF-8")
	default:
		s.Log.Error("store", "what", what, "path", c.FullPath(), "error", err)
		unavailable(c, "the database")
	}
}

// workspaceAccess resolves :id to a workspace the caller belongs to: 404 when it does not
// exist, 403 when the caller is not a member, 403 when admin is required and they are not.
func (s *Server) workspaceAccess(c *gin.Context, param string, needAdmin bool) (store.Workspace, bool) {
	id, err := uuid.Parse(c.Param(param))
	if err != nil {
		badRequest(c, "invalid_id", "workspace id is not a UUID")
		return store.Workspace{}, false
	}
	return s.workspaceByID(c, id, needAdmin)
}

func (s *Server) workspaceByID(c *gin.Context, id uuid.UUID, needAdmin bool) (store.Workspace, bool) {
	w, err := s.Store.WorkspaceAccess(c.Request.Context(), id, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "workspace")
		return w, false
	}
	if w.Role == "" {
		fail(c, http.StatusForbidden, "forbidden", "you are not a member of this workspace")
		return w, false
	}
	if needAdmin && w.Role != store.RoleAdmin {
		fail(c, http.StatusForbidden, "forbidden", "this needs the workspace admin role")
		return w, false
	}
	return w, true
}

// orgAccess resolves :id to an org the caller belongs to with at least minRole.
func (s *Server) orgAccess(c *gin.Context, minRole string) (store.Org, bool) {
	id, ok := uuidParam(c, "id", "organization")
	if !ok {
		return store.Org{}, false
	}
	o, err := s.Store.GetOrg(c.Request.Context(), id, userOf(c))
	if err != nil {
		s.storeFailed(c, err, "organization")
		return o, false
	}
	if o.Role == "" {
		fail(c, http.StatusForbidden, "forbidden", "you are not a member of this organization")
		return o, false
	}
	if roleRank[o.Role] < roleRank[minRole] {
		fail(c, http.StatusForbidden, "forbidden", "this needs the organization "+minRole+" role")
		return o, false
	}
	return o, true
}

var roleRank = map[string]int{store.RoleMember: 1, store.RoleAdmin: 2, store.RoleOwner: 3}

// requiredName trims and checks a required name field.
func requiredName(c *gin.Context, field, value string, max int) (string, bool) {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		badRequest(c, "missing_field", field+" is required")
		return "", false
	case utf8.RuneCountInString(value) > max:
		badRequest(c, "too_long", fmt.Sprintf("%s is longer than %d characters", field, max))
		return "", false
	case !utf8.ValidString(value) || strings.ContainsAny(value, "\x00\r\n"):
		badRequest(c, "invalid_field", field+" contains control characters")
		return "", false
	}
	return value, true
}

// userIDField validates a user id given in a body or path (the identity provider's subject).
func userIDField(c *gin.Context, value string) (string, bool) {
	return requiredName(c, "user_id", value, 200)
}

// page writes the list envelope; next is the cursor of the last item when more exist.
func page[T any](c *gin.Context, items []T, limit int, cursorOf func(T) store.Cursor) {
	hasMore := len(items) > limit
	if hasMore {
		items = items[:limit]
	}
	var next any
	if hasMore {
		next = cursorOf(items[len(items)-1]).Encode()
	}
	c.JSON(http.StatusOK, gin.H{"data": items, "next_cursor": next, "has_more": hasMore})
}

// listParams reads ?cursor= (opaque) and ?limit=.
func listParams(c *gin.Context) (*store.Cursor, int, bool) {
	_, limit, ok := pageParams(c, false)
	if !ok {
		return nil, 0, false
	}
	cur, err := store.DecodeCursor(c.Query("cursor"))
	if err != nil {
		badRequest(c, "invalid_cursor", err.Error())
		return nil, 0, false
	}
	return cur, limit, true
}

// all wraps an unpaginated list in the list envelope.
func all[T any](c *gin.Context, items []T) {
	c.JSON(http.StatusOK, gin.H{"data": items, "next_cursor": nil, "has_more": false})
}
