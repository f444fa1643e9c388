package chat

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
)

// listAgentActions is the agent's action log.
func (s *Conversations) listAgentActions(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	s.listActions(c, store.ActionFilter{WorkspaceID: agent.WorkspaceID, AgentID: &agent.ID})
}

// getToolOutput is a tool call's full output where the transcript holds only a preview
// (a tool_result part with "stored": true): the page's "show full output".
func (s *Conversations) getToolOutput(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	callID := c.Param("toolCallId")
	if callID == "" || len(callID) > 200 {
		httpx.BadRequest(c, "invalid_id", "tool call ID must be 1 to 200 characters")
		return
	}
	content, err := s.Store.ToolOutput(c.Request.Context(), agent.ID, callID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		httpx.Fail(c, http.StatusNotFound, "not_found", "this tool call has no stored output")
	case err != nil:
		s.Log.Error("tool output", "error", err)
		httpx.Unavailable(c, "the database")
	default:
		c.JSON(http.StatusOK, gin.H{"tool_call_id": callID, "content": content, "size": len(content)})
	}
}

// listWorkspaceActions is the workspace's action log, filtered by ?tool=, ?user_id=, ?success=, ?agent_id=.
func (s *Conversations) listWorkspaceActions(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	f := store.ActionFilter{WorkspaceID: w.ID, Tool: c.Query("tool"), UserID: c.Query("user_id")}
	if v := c.Query("agent_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			httpx.BadRequest(c, "invalid_id", "agent_id is not a UUID")
			return
		}
		f.AgentID = &id
	}
	switch c.Query("success") {
	case "":
	case "true", "false":
		b := c.Query("success") == "true"
		f.Success = &b
	default:
		httpx.BadRequest(c, "invalid_field", "success must be true or false")
		return
	}
	s.listActions(c, f)
}

func (s *Conversations) listActions(c *gin.Context, f store.ActionFilter) {
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	actions, err := s.Store.ListActions(c.Request.Context(), f, cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "actions")
		return
	}
	httpx.Page(c, actions, limit, func(a store.Action) store.Cursor { return store.Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
}
