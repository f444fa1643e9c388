package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

func TestLargeToolOutputsStayOutOfWorkflowHistory(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("Reconcile account 191100 against the GR/IR clearing report. ", 150) // ≈ 9 KB
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		scriptedTools(c, o)
		o.OfflineLLM.Rules = append(o.OfflineLLM.Rules, offlinellm.Rule{Name: "big", Match: `^save a big note$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"Big","body":"` + body + `"}`}}})
	})
	require.Equal(t, 200, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "run_everything"}, nil))
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	var storedDone []event // tool_update done events that say the output was stored by reference
	for _, msg := range []string{"save a big note", "save a big note", "list notes"} {
		require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": msg}, nil))
		ws.until(30*time.Second, func(ev event) bool {
			if ev.Type == "tool_update" && ev.Status == "done" && strings.Contains(string(ev.Raw), `"stored":true`) {
				storedDone = append(storedDone, ev)
			}
			return ev.Type == "status" && ev.Status == "idle"
		})
	}
	ctx := context.Background()
	var size int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(ctx, `SELECT size_bytes FROM tool_outputs WHERE agent_id = $1`, agent.ID).Scan(&size))
	assert.Greater(t, size, 16<<10, "the list of two big notes is stored by reference")
	require.Len(t, storedDone, 1, "the live event tells clients the output is stored (only the list's)")
	assert.Contains(t, string(storedDone[0].Raw), fmt.Sprintf(`"size":%d`, size))
	msgs := e.messages(agent.ID)
	last := msgs[len(msgs)-2]
	require.Equal(t, "tool", last.Role)
	assert.Contains(t, last.Content, "[output truncated:", "the transcript row holds the preview")

	// The page's "show full output" reads the whole of it; other calls have none; other users none.
	var callID string
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(ctx, `SELECT tool_call_id FROM tool_outputs WHERE agent_id = $1`, agent.ID).Scan(&callID))
	var full struct {
		ToolCallID string `json:"tool_call_id"`
		Content    string `json:"content"`
		Size       int    `json:"size"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+agent.ID+"/tool-outputs/"+callID, nil, &full))
	assert.Equal(t, size, full.Size)
	assert.Len(t, full.Content, size)
	assert.Equal(t, 2, strings.Count(full.Content, "Reconcile account 191100")/150, "both big notes, whole")
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/agents/"+agent.ID+"/tool-outputs/no-such-call", nil, nil))
	assert.Equal(t, http.StatusNotFound, e.doAs(e.tokenFor("mallory"), "GET", "/api/agents/"+agent.ID+"/tool-outputs/"+callID, nil, nil), "a non-member learns nothing")

	// No history event carries the full output.
	iter := e.stack.Deps.Temporal.GetWorkflowHistory(ctx, "agent/"+agent.ID, "", false, 0)
	largest := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if n := ev.Size(); n > largest {
			largest = n
		}
	}
	assert.Less(t, largest, 16<<10, "largest history event: %d bytes", largest)
}
