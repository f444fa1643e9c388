package tenancy

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
)

// getToolPolicy returns the caller's tool policy in the workspace.
func (s *Handler) getToolPolicy(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	p, err := s.Policies.ToolPolicy(c.Request.Context(), w.ID, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "tool policy")
		return
	}
	c.JSON(http.StatusOK, policyView(w, p))
}

// policyView shows the member's chosen policy and what applies: the choice bounded by the
// workspace's maximum, and four eyes (every write asks another member).
func policyView(w store.Workspace, chosen string) gin.H {
	return gin.H{"policy": chosen, "effective_policy": tools.EffectivePolicy(tools.Policy(chosen), tools.Policy(w.MaxToolPolicy)),
		"max_tool_policy": w.MaxToolPolicy, "four_eyes": w.FourEyes}
}

type toolPolicyRequest struct {
	Policy string `json:"policy"`
}

// putToolPolicy sets how much runs without asking, for the caller in this workspace.
func (s *Handler) putToolPolicy(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	var req toolPolicyRequest
	if !httpx.DecodeJSON(c, 4<<10, &req) {
		return
	}
	if !tools.ValidPolicy(tools.Policy(req.Policy)) {
		httpx.BadRequest(c, "invalid_policy", "policy must be ask_every_time, run_reads_only or run_everything")
		return
	}
	if err := s.Policies.SetToolPolicy(c.Request.Context(), w.ID, httpx.User(c), req.Policy); err != nil {
		s.Access.StoreFailed(c, err, "tool policy")
		return
	}
	c.JSON(http.StatusOK, policyView(w, req.Policy))
}
