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

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/workflows"
)

func TestMessageStreamsBackOverWebSocketAndIsStored(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("quarter-end close")

	ws := e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	require.Equal(t, "init", init.Type)
	require.Empty(t, init.Messages)

	var sent struct {
		MessageID string `json:"message_id"`
	}
	require.Equal(t, http.StatusAccepted,
		e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "Which company codes post to ledger 0L?"}, &sent))
	require.NotEmpty(t, sent.MessageID)

	evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })

	// Seqs strictly increase; the protocol order is status active → user message → stream… →
	// stream_end → assistant message → status idle.
	var streamed strings.Builder
	var order []string
	lastSeq := init.Seq
	var final *messageJSON
	titled := false
	for _, ev := range evs {
		require.Greater(t, ev.Seq, lastSeq, "seq must increase: %s", ev.Raw)
		lastSeq = ev.Seq
		switch ev.Type {
		case "stream":
			if len(order) == 0 || order[len(order)-1] != "stream" {
				order = append(order, "stream")
			}
			streamed.WriteString(ev.Delta)
		case "message":
			order = append(order, "message:"+ev.Message.Role)
			if ev.Message.Role == "assistant" {
				final = ev.Message
			}
		case "status":
			order = append(order, "status:"+ev.Status)
		case "title_update":
			titled = true
		default:
			order = append(order, ev.Type)
		}
	}
	assert.Equal(t, []string{"message:user", "status:active", "stream", "stream_end", "message:assistant", "status:idle"}, order)
	if !titled { // the title is generated alongside the reply and may land after it
		ws.until(10*time.Second, func(ev event) bool { return ev.Type == "title_update" })
	}
	var named agentJSON
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+agent.ID, nil, &named))
	assert.NotEmpty(t, named.Title)
	require.NotNil(t, final)
	assert.Equal(t, final.Content, streamed.String(), "streamed deltas assemble into the stored reply")
	assert.Contains(t, final.Content, "Which company codes post to ledger 0L?")

	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 2)
	assert.Equal(t, []int64{1, 2}, []int64{msgs[0].Seq, msgs[1].Seq})
	assert.Equal(t, "user", msgs[0].Role)
	assert.Equal(t, sent.MessageID, msgs[0].ID)
	assert.Equal(t, "assistant", msgs[1].Role)
	assert.Equal(t, final.Content, msgs[1].Content)
	assert.Equal(t, "offline:sapagent-offline", msgs[1].Model)

	// The row is in Postgres, not only in the API's answer.
	var count int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM messages WHERE agent_id = $1 AND role = 'assistant' AND content = $2`, agent.ID, final.Content).Scan(&count))
	assert.Equal(t, 1, count)

	// A client that reconnects with its last seq gets nothing twice; one that reconnects from
	// before the turn gets the turn's events again, in order.
	again := e.dial(agent.ID, "?after="+init.cursor())
	replayed := again.until(5*time.Second, func(ev event) bool { return ev.Seq == lastSeq })
	assert.Len(t, replayed, len(evs))
}

func TestOperatorsFindTheConversationInTemporal(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("operator view")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "hello"}, nil))
	ws.until(30*time.Second, isAssistantMessage)

	ctx := context.Background()
	c := e.stack.Deps.Temporal
	desc, err := c.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID(agent.ID), "")
	require.NoError(t, err)
	assert.Equal(t, workflows.ConversationWorkflowName, desc.WorkflowExecutionInfo.Type.Name)
	fields := desc.WorkflowExecutionInfo.SearchAttributes.GetIndexedFields()
	require.Contains(t, fields, "AgentId")
	require.Contains(t, fields, "WorkspaceId")
	assert.Contains(t, string(fields["AgentId"].Data), agent.ID)

	// Visibility finds it by search attribute (what the UI's filter does).
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(ctx, listRequest(e, "AgentId = '"+agent.ID+"'"))
		return err == nil && len(resp.Executions) == 1
	}, 10*time.Second, 100*time.Millisecond)

	// The state query answers for the running conversation.
	st, err := workflows.ConversationState.Ask(ctx, c, workflows.ConversationWorkflowID(agent.ID), "")
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.LastSeq)
}

func TestRetriedPostWithClientMessageIDIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	id := uuid.NewString()
	body := map[string]any{"content": "post once", "client_message_id": id}
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", body, nil))
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", body, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 2)
	assert.Equal(t, id, msgs[0].ID)
}

func TestRestartKeepsAgentsMessagesAndHistories(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(cfg *config.Config, _ *devstack.Options) { cfg.TemporalUIPort = freePort(t) })
	// The Temporal Web UI is served beside the API.
	require.Eventually(t, func() bool {
		resp, err := http.Get(e.stack.TemporalUIURL + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond)

	agent := e.createAgent("survives restarts")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "first"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	_ = ws.conn.Close()

	e.restart()

	var got agentJSON
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+agent.ID, nil, &got))
	assert.Equal(t, "survives restarts", got.Name)
	require.Len(t, e.messages(agent.ID), 2)

	ctx := context.Background()
	iter := e.stack.Deps.Temporal.GetWorkflowHistory(ctx, workflows.ConversationWorkflowID(agent.ID), "", false, 0)
	n := 0
	for iter.HasNext() {
		_, err := iter.Next()
		require.NoError(t, err)
		n++
	}
	assert.Greater(t, n, 5, "the workflow history survived the restart")

	// The conversation goes on, numbering after what it had.
	ws = e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	require.Len(t, init.Messages, 2)
	// Right after a restart the worker replays the run before it takes the update; a client that
	// gets 503 retries with the same client_message_id, as docs/api.md says.
	second := map[string]any{"content": "second", "client_message_id": uuid.NewString()}
	require.Eventually(t, func() bool {
		return e.do("POST", "/api/agents/"+agent.ID+"/message", second, nil) == http.StatusAccepted
	}, 60*time.Second, time.Second)
	ws.until(30*time.Second, isAssistantMessage)
	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 4)
	assert.Equal(t, int64(4), msgs[3].Seq)
	assert.Equal(t, "second", msgs[2].Content)
}

func TestConversationRestartsAfterIdleCompletion(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(cfg *config.Config, _ *devstack.Options) { cfg.IdleTimeout = 2 * time.Second })
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "before idle"}, nil))
	ws.until(30*time.Second, isAssistantMessage)

	ctx := context.Background()
	c := e.stack.Deps.Temporal
	run := c.GetWorkflow(ctx, workflows.ConversationWorkflowID(agent.ID), "")
	require.NoError(t, run.Get(ctx, nil), "the idle conversation completes")
	recordHistory(t, c, e.stack.Deps.Codec, workflows.ConversationWorkflowID(agent.ID), run.GetRunID(), "conversation_turn_then_idle_v2")

	// update-with-start begins a new run that restores numbering from Postgres.
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "after idle"}, nil))
	ws.until(30*time.Second, isAssistantMessage)
	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{"user", "assistant", "user", "assistant"}, roles(msgs))
	assert.Equal(t, int64(4), msgs[3].Seq)
	desc, err := c.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID(agent.ID), "")
	require.NoError(t, err)
	assert.NotEqual(t, run.GetRunID(), desc.WorkflowExecutionInfo.Execution.RunId)
}

func roles(msgs []messageJSON) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}
