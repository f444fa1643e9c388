package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

// reusedCallIDs makes the offline model behave like local servers whose tool-call IDs repeat
// in every response (call_0) or are missing.
func reusedCallIDs(_ *config.Config, o *devstack.Options) {
	o.OfflineLLM.Rules = []offlinellm.Rule{
		{Name: "list", Match: `^list notes$`, CallIDs: offlinellm.CallIDsPerResponse, ToolCalls: []offlinellm.ToolCallRule{{Name: "list_notes", Arguments: `{}`}}},
		{Name: "list-twice", Match: `^list notes twice$`, CallIDs: offlinellm.CallIDsNone, ToolCalls: []offlinellm.ToolCallRule{
			{Name: "list_notes", Arguments: `{"limit":1}`}, {Name: "list_notes", Arguments: `{"limit":2}`}}},
	}
}

func TestProviderToolCallIDsAreNeverTrustedToBeUnique(t *testing.T) {
	t.Parallel()
	e := startEnv(t, reusedCallIDs)
	agent := e.createAgent("ids")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	for _, text := range []string{"list notes", "list notes", "list notes twice"} {
		require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": text}, nil))
		evs := ws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
		assert.Zero(t, countType(evs, "error"), "the turn ends with an answer, not MAX_LOOP_STEPS: %v", types(evs))
	}
	var calls, results, distinct int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM messages m, jsonb_array_elements(m.parts) p WHERE m.agent_id = $1 AND p->>'type' = 'tool_call'),
		(SELECT count(*) FROM messages WHERE agent_id = $1 AND role = 'tool'),
		(SELECT count(DISTINCT tool_call_id) FROM messages WHERE agent_id = $1 AND role = 'tool')`, agent.ID).Scan(&calls, &results, &distinct))
	assert.Equal(t, 4, calls, "four calls in three turns")
	assert.Equal(t, 4, results, "every call has its own result row")
	assert.Equal(t, 4, distinct)
	var actions int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM tool_actions WHERE agent_id = $1`, agent.ID).Scan(&actions))
	assert.Equal(t, 4, actions, "one action-log row per call")
}

func TestResentClientMessageIDAfterIdleCompletionRunsNoGhostTurn(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.IdleTimeout = 2 * time.Second })
	agent := e.createAgent("resend")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	id := uuid.NewString()
	body := map[string]any{"content": "hello once", "client_message_id": id}
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", body, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	waitClosed(t, e, agent.ID)

	// The run completed; the client retries its old request (a lost response).
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", body, nil))
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "and a new one"}, nil))
	evs := ws.until(30*time.Second, func(ev event) bool { return isAssistantMessage(ev) })
	msgs := e.messages(agent.ID)
	require.GreaterOrEqual(t, len(msgs), 2)
	for _, ev := range evs {
		// A ghost turn streams the old reply again, and its stream_end is swallowed as a repeat.
		assert.False(t, ev.Type == "stream" && ev.MessageID == msgs[1].ID, "the answered message is not answered again")
	}
	require.Len(t, msgs, 4, "hello, its reply, the new message, its reply: %v", roles(msgs))
	assert.Equal(t, "hello once", msgs[0].Content)
	assert.Equal(t, "and a new one", msgs[2].Content)
	assert.Equal(t, "idle", e.agentStatus(agent.ID))
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// waitClosed waits until the agent's workflow run has completed.
func waitClosed(t *testing.T, e *env, agentID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := e.stack.Deps.Temporal.DescribeWorkflowExecution(context.Background(), "agent/"+agentID, "")
		return err == nil && d.WorkflowExecutionInfo.GetCloseTime() != nil
	}, 30*time.Second, 100*time.Millisecond)
}

func (e *env) agentStatus(agentID string) string {
	e.t.Helper()
	var status string
	require.Eventually(e.t, func() bool {
		require.NoError(e.t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT status FROM agents WHERE id = $1`, agentID).Scan(&status))
		return status == "idle"
	}, 10*time.Second, 50*time.Millisecond)
	return status
}

func TestContinueAsNewParksQueuedMessagesAndEachIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.RunEvents = 100 })
	agent := e.createAgent("long run")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	const n = 10
	for i := range n {
		require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message",
			map[string]any{"content": "question " + itoa(int64(i)) + " " + strings.Repeat("x", 15_000)}, nil))
	}
	replies := 0
	ws.until(120*time.Second, func(ev event) bool {
		if isAssistantMessage(ev) {
			replies++
		}
		return replies == n
	})
	var msgs []messageJSON
	summaries := 0
	for _, m := range e.messages(agent.ID) {
		if m.Role == "summary" {
			summaries++ // ten long questions do not fit one request: older turns were compacted
			continue
		}
		msgs = append(msgs, m)
	}
	require.Len(t, msgs, 2*n, "every message stored once with exactly one reply")
	for i := 0; i < n; i++ {
		assert.Equal(t, "user", msgs[2*i].Role)
		assert.True(t, strings.HasPrefix(msgs[2*i].Content, "question "+itoa(int64(i))+" "), "in order")
		assert.Equal(t, "assistant", msgs[2*i+1].Role)
	}
	var parked int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM parked_messages`).Scan(&parked))
	assert.Zero(t, parked, "parked messages move into the transcript")
	assert.Equal(t, "idle", e.agentStatus(agent.ID))

	// The runs: more than one, and none carried message contents in its input.
	c := e.stack.Deps.Temporal
	resp, err := c.ListWorkflow(context.Background(), listRequest(e, "WorkflowId = 'agent/"+agent.ID+"'"))
	require.NoError(t, err)
	require.Greater(t, len(resp.Executions), 1, "the conversation continued as new")
	for _, ex := range resp.Executions {
		iter := c.GetWorkflowHistory(context.Background(), ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := iter.Next()
		require.NoError(t, err)
		in := first.GetWorkflowExecutionStartedEventAttributes().GetInput()
		assert.Less(t, proto.Size(in), 16<<10, "a run's input carries IDs, not queued texts")
		started, closed := 0, 0
		for iter.HasNext() {
			ev, err := iter.Next()
			require.NoError(t, err)
			switch ev.EventType {
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				started++
			case enumspb.EVENT_TYPE_TIMER_FIRED, enumspb.EVENT_TYPE_TIMER_CANCELED:
				closed++
			}
		}
		assert.LessOrEqual(t, started-closed, 1, "idle timers are cancelled when a message arrives")
		if ex.Status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			recordHistory(t, c, e.stack.Deps.Codec, ex.Execution.WorkflowId, ex.Execution.RunId, "conversation_continue_as_new_v2")
		}
	}
}

func TestConfirmAfterShowsTheResultAndTheModelSeesItOnlyOnceApproved(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = []offlinellm.Rule{{Name: "export", Match: `^export notes$`, ToolCalls: []offlinellm.ToolCallRule{{Name: "export_notes", Arguments: `{}`}}}}
	})
	agent := e.createAgent("export")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "export notes"}, nil))
	evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	var ask struct {
		ToolCallID string `json:"tool_call_id"`
		Mode       string `json:"mode"`
		Result     string `json:"result"`
	}
	require.NoError(t, jsonUnmarshal(evs[len(evs)-1].Raw, &ask))
	assert.Equal(t, "confirm_after_execution", ask.Mode)
	assert.Contains(t, ask.Result, "csv", "the user reviews what ran")
	assert.True(t, strings.HasPrefix(ask.ToolCallID, "call_"), "the product's own call ID")
	require.Equal(t, http.StatusOK, e.do("POST", "/api/agents/"+agent.ID+"/approve",
		map[string]any{"decisions": []map[string]any{{"tool_call_id": ask.ToolCallID, "approved": true}}}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	msgs := e.messages(agent.ID)
	assert.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles(msgs))
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, "agent/"+agent.ID, "", "conversation_confirm_after_v3")
}

// Security issue 11 (with durable-core item 5): a provider that reuses its tool-call IDs in every
// response cannot make an approval apply to another call. Each turn's two writes get their own
// IDs; only the approved ones run, and the action log attributes each input to its own call.
func TestReusedProviderIDsMakeOnlyTheApprovedWrites(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = []offlinellm.Rule{{Name: "two", Match: `^save two notes (\w+)$`, CallIDs: offlinellm.CallIDsPerResponse,
			ToolCalls: []offlinellm.ToolCallRule{
				{Name: "save_note", Arguments: `{"title":"$1-a","body":"first"}`},
				{Name: "save_note", Arguments: `{"title":"$1-b","body":"second"}`}}}}
	})
	agent := e.createAgent("writes")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	asks := func(text string) []string {
		require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": text}, nil))
		var ids []string
		ws.until(30*time.Second, func(ev event) bool {
			if ev.Type == "approval_needed" {
				var a struct {
					ToolCallID string `json:"tool_call_id"`
				}
				require.NoError(t, jsonUnmarshal(ev.Raw, &a))
				ids = append(ids, a.ToolCallID)
			}
			return len(ids) == 2
		})
		return ids
	}
	decide := func(id string, ok bool) {
		require.Equal(t, http.StatusOK, e.do("POST", "/api/agents/"+agent.ID+"/approve",
			map[string]any{"decisions": []any{map[string]any{"tool_call_id": id, "approved": ok}}}, nil))
	}
	first := asks("save two notes first")
	require.NotEqual(t, first[0], first[1])
	decide(first[0], true)
	decide(first[1], false)
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	second := asks("save two notes second")
	assert.NotContains(t, first, second[0], "the provider's call_0 again, but a new call")
	decide(second[0], true)
	decide(second[1], true)
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })

	var titles []string
	rows, err := e.stack.Deps.Store.Pool.Query(context.Background(), `SELECT n.title FROM agent_notes n WHERE n.agent_id = $1 ORDER BY n.title`, agent.ID)
	require.NoError(t, err)
	for rows.Next() {
		var title string
		require.NoError(t, rows.Scan(&title))
		titles = append(titles, title)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"first-a", "second-a", "second-b"}, titles, "exactly the approved writes")
	for _, id := range append(first[:1], second...) {
		var input string
		require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
			`SELECT input FROM tool_actions WHERE agent_id = $1 AND tool_call_id = $2`, agent.ID, id).Scan(&input))
		want := map[string]string{first[0]: "first-a", second[0]: "second-a", second[1]: "second-b"}[id]
		assert.Contains(t, input, want, "the action log names the call's own input")
	}
}
