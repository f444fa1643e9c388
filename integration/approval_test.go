package integration

import (
	"encoding/json"
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

// scriptedTools makes the offline model call the built-in tools.
func scriptedTools(_ *config.Config, o *devstack.Options) {
	o.OfflineLLM.Rules = []offlinellm.Rule{
		{Name: "save", Match: `^save a note titled (\w+)$`, Reply: "Saving it.", ToolCalls: []offlinellm.ToolCallRule{
			{Name: "save_note", Arguments: `{"title":"$1","body":"Reconcile GR/IR account 191100"}`}}},
		{Name: "list", Match: `^list notes$`, ToolCalls: []offlinellm.ToolCallRule{{Name: "list_notes", Arguments: `{}`}}},
		{Name: "slow", Match: `^tell me a long story$`, TokenDelay: &offlinellm.Duration{Duration: 200 * time.Millisecond}},
		{Name: "think", Match: `^think hard$`, Reasoning: strings.Repeat("Weigh the ledger options. ", 200), Reply: "Use ledger 0L."},
	}
}

type toolEvent struct {
	Type       string `json:"type"`
	ToolCallID string `json:"tool_call_id"`
	Tool       string `json:"tool"`
	Arguments  string `json:"arguments"`
	Status     string `json:"status"`
	Result     string `json:"result"`
}

func TestWriteToolRunsOnlyAfterApprovalThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("notes")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	path := "/api/agents/" + agent.ID

	require.Equal(t, http.StatusAccepted, e.do("POST", path+"/message", map[string]any{"content": "save a note titled Closing"}, nil))
	evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	var need toolEvent
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Raw, &need))
	assert.Equal(t, "save_note", need.Tool)
	assert.JSONEq(t, `{"title":"Closing","body":"Reconcile GR/IR account 191100"}`, need.Arguments)
	var statuses []string
	for _, ev := range evs {
		if ev.Type == "status" {
			statuses = append(statuses, ev.Status)
		}
	}
	assert.Equal(t, []string{"active", "waiting"}, statuses)

	// The pending call is listed over REST too.
	var approvals struct {
		Data []struct {
			ToolCallID string `json:"tool_call_id"`
			Tool       string `json:"tool"`
		} `json:"data"`
	}
	require.Equal(t, 200, e.do("GET", path+"/approvals", nil, &approvals))
	require.Len(t, approvals.Data, 1)
	assert.Equal(t, need.ToolCallID, approvals.Data[0].ToolCallID)

	// Nothing ran yet: the action log is empty.
	var actions struct{ Data []map[string]any }
	require.Equal(t, 200, e.do("GET", path+"/actions", nil, &actions))
	assert.Empty(t, actions.Data)

	// Unknown and malformed decisions are refused without touching the group.
	var got errorJSON
	assert.Equal(t, http.StatusNotFound, e.do("POST", path+"/approve", map[string]any{"decisions": []any{map[string]any{"tool_call_id": "call_nope", "approved": true}}}, &got))
	assert.Equal(t, http.StatusBadRequest, e.do("POST", path+"/approve", map[string]any{"decisions": []any{}}, &got))

	var res struct{ Remaining int }
	require.Equal(t, 200, e.do("POST", path+"/approve", map[string]any{"decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": true}}}, &res))
	assert.Zero(t, res.Remaining)
	assert.Equal(t, http.StatusNotFound, e.do("POST", path+"/approve", map[string]any{"decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": false}}}, &got),
		"after the group completes the call is no longer pending")

	evs = ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	assert.Positive(t, countType(evs, "tool_update"))
	require.Equal(t, 200, e.do("GET", path+"/approvals", nil, &approvals))
	assert.Empty(t, approvals.Data)
	final := evs[0]
	for _, ev := range evs {
		if isAssistantMessage(ev) {
			final = ev
		}
	}
	require.NotNil(t, final.Message)
	assert.Contains(t, final.Message.Content, "The tool save_note returned")

	msgs := e.messages(agent.ID)
	assert.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles(msgs))
	require.Equal(t, 200, e.do("GET", path+"/actions", nil, &actions))
	require.Len(t, actions.Data, 1)
	assert.Equal(t, "save_note", actions.Data[0]["tool"])
	assert.Equal(t, true, actions.Data[0]["success"])
	assert.Equal(t, "alice", actions.Data[0]["user_id"])
	require.Equal(t, 200, e.do("GET", "/api/workspaces/"+e.ws+"/actions?tool=save_note&success=true", nil, &actions))
	assert.Len(t, actions.Data, 1)
	require.Equal(t, 200, e.do("GET", "/api/workspaces/"+e.ws+"/actions?tool=list_notes", nil, &actions))
	assert.Empty(t, actions.Data)

	// The same flow with "run everything" needs no approval, and the read sees the saved note.
	require.Equal(t, 200, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "run_everything"}, nil))
	var pol struct{ Policy string }
	require.Equal(t, 200, e.do("GET", "/api/workspaces/"+e.ws+"/tool-policy", nil, &pol))
	assert.Equal(t, "run_everything", pol.Policy)
	assert.Equal(t, 400, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "yolo"}, nil))
	require.Equal(t, http.StatusAccepted, e.do("POST", path+"/message", map[string]any{"content": "list notes"}, nil))
	evs = ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	assert.Zero(t, countType(evs, "approval_needed"))
	var done toolEvent
	for _, ev := range evs {
		if ev.Type == "tool_update" {
			require.NoError(t, json.Unmarshal(ev.Raw, &done))
		}
	}
	assert.Contains(t, done.Result, "Closing")
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, "agent/"+agent.ID, "", "conversation_tool_approval_v3")
}

func TestStopKeepsThePartialTextAndGoesIdle(t *testing.T) {
	// Serial: asserts the stop lands within seconds, early in the reply (see TestMain).
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	var res struct{ Stopped bool }
	require.Equal(t, 200, e.do("POST", "/api/agents/"+agent.ID+"/stop", nil, &res))
	assert.True(t, res.Stopped)
	start := time.Now()
	evs := ws.until(15*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	assert.Less(t, time.Since(start), 5*time.Second, "stop takes effect within seconds")
	assert.Equal(t, 1, countType(evs, "stopped"))
	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 2)
	assert.Equal(t, "stopped", msgs[1].Status)
	assert.NotEmpty(t, msgs[1].Content)
	assert.Less(t, len(msgs[1].Content), 200, "only the part streamed before the stop")

	require.Equal(t, 200, e.do("POST", "/api/agents/"+agent.ID+"/stop", nil, &res))
	assert.False(t, res.Stopped, "nothing to stop when idle")
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, "agent/"+agent.ID, "", "conversation_stop_v2")
}

func TestReasoningStreamsInFullAndIsStoredTruncated(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "think hard"}, nil))
	evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	var order []string
	var thought strings.Builder
	for _, ev := range evs {
		switch ev.Type {
		case "thinking_start", "thinking_end", "stream_end":
			order = append(order, ev.Type)
		case "thinking":
			thought.WriteString(ev.Delta)
		}
	}
	assert.Equal(t, []string{"thinking_start", "thinking_end", "stream_end"}, order)
	full := strings.Repeat("Weigh the ledger options. ", 200)
	assert.Equal(t, full, thought.String(), "clients get all of the reasoning")

	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 2)
	assert.Equal(t, "Use ledger 0L.", msgs[1].Content)
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Size int    `json:"size"`
	}
	var raw struct {
		Data []struct {
			Parts json.RawMessage `json:"parts"`
		} `json:"data"`
	}
	require.Equal(t, 200, e.do("GET", "/api/agents/"+agent.ID+"/messages", nil, &raw))
	require.NoError(t, json.Unmarshal(raw.Data[1].Parts, &parts))
	require.Equal(t, "reasoning", parts[0].Type)
	assert.Equal(t, len(full), parts[0].Size, "the original size is kept")
	assert.LessOrEqual(t, len(parts[0].Text), 3<<10+8, "storage keeps about 3 KB")
}
