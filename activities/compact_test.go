package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
	window "github.com/sapagent/sapagent/internal/transcript"
	"github.com/sapagent/sapagent/workflows"
)

// compactEnv is a real Postgres database, Redis bus and offline model for one test.
type compactEnv struct {
	t       testing.TB
	a       *Activities
	agent   uuid.UUID
	seq     int64
	calls   atomic.Int32 // chat completion requests the model received
	unsaved []store.Message
	budget  int
	env     *testsuite.TestActivityEnvironment
}

// testContextTokens is small so a few hundred turns need compaction.
const testContextTokens = 8192

func newCompactEnv(t testing.TB) *compactEnv { return newCompactEnvWith(t, testContextTokens, 0) }

// newCompactEnvWith sets the model's context size and how many SAP connections the workspace
// has (they decide the system prompt and the tools offered, which count against the budget).
func newCompactEnvWith(t testing.TB, contextTokens, connections int) *compactEnv {
	ctx := context.Background()
	st, _ := storetest.New(t)

	redisAddr := "127.0.0.1:6379"
	if r := os.Getenv("TEST_REDIS_URL"); r != "" {
		opts, err := redis.ParseURL(r)
		require.NoError(t, err)
		redisAddr = opts.Addr
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	bus := events.New(rdb, events.Options{Prefix: "sapagent-compact-" + uuid.NewString()[:8] + ":"})
	t.Cleanup(func() { bus.Close(); _ = rdb.Close() })

	e := &compactEnv{t: t, budget: window.RequestBudget(contextTokens)}
	model := offlinellm.New(offlinellm.Options{}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			e.calls.Add(1)
		}
		model.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.a = &Activities{
		Store: st, Bus: bus, PrimaryModel: "offline:" + offlinellm.ModelName,
		Models: llm.NewRegistry(llm.Provider{Name: "offline", BaseURL: srv.URL + "/v1", APIKey: "offline", ContextTokens: contextTokens}),
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}

	agent := storetest.Agent(t, st)
	e.agent = agent.ID
	for i := 0; i < connections; i++ {
		_, err := st.CreateConnection(ctx, store.Connection{ID: uuid.New(), WorkspaceID: agent.WorkspaceID, Name: fmt.Sprint("SAP", i), SystemType: "ECC", Environment: "development"})
		require.NoError(t, err)
	}

	var suite testsuite.WorkflowTestSuite
	e.env = suite.NewTestActivityEnvironment()
	e.env.RegisterActivity(e.a.CompactConversation)
	return e
}

// save queues a row; flush writes the queue in one batch before anything reads.
func (e *compactEnv) save(m store.Message) {
	e.seq++
	m.ID, m.AgentID, m.Seq = uuid.New(), e.agent, e.seq
	e.unsaved = append(e.unsaved, m)
}

func (e *compactEnv) flush() {
	if len(e.unsaved) > 0 {
		require.NoError(e.t, e.a.Store.SaveMessages(context.Background(), e.unsaved))
		e.unsaved = nil
	}
}

// turn stores one turn as the workflow does: the user's message, a step that reads a table
// (a result of resultBytes), and the answer.
func (e *compactEnv) turn(n, resultBytes int) {
	e.save(store.Message{Role: "user", Content: fmt.Sprintf("message %d: how many customers are in country %d?", n, n%40)})
	if resultBytes > 0 {
		id := fmt.Sprintf("call_%d", n)
		e.save(store.Message{Role: "assistant", Parts: assistantParts("", 0, "", []workflows.ToolCall{{ID: id, Name: "sap_read_table", Arguments: `{"table":"KNA1"}`}}, nil)})
		e.save(store.Message{Role: "tool", ToolCallID: id, Content: strings.Repeat(`{"KUNNR":"0000001000","LAND1":"DE"},`, resultBytes/36)})
	}
	e.save(store.Message{Role: "assistant", Content: fmt.Sprintf("There are %d customers.", n*3), Parts: assistantParts("", 0, fmt.Sprintf("There are %d customers.", n*3), nil, nil)})
}

func (e *compactEnv) compact() workflows.CompactResult {
	e.t.Helper()
	e.seq++
	return e.compactAt(uuid.NewString(), e.seq)
}

func (e *compactEnv) compactAt(id string, seq int64) workflows.CompactResult {
	e.t.Helper()
	e.flush()
	val, err := e.env.ExecuteActivity(e.a.CompactConversation, workflows.CompactInput{AgentID: e.agent.String(), MessageID: id, Seq: seq})
	require.NoError(e.t, err)
	var res workflows.CompactResult
	require.NoError(e.t, val.Get(&res))
	if !res.Compacted && seq == e.seq {
		e.seq-- // the workflow gives the unused seq back
	}
	return res
}

func (e *compactEnv) window() window.Result {
	e.t.Helper()
	e.flush()
	ctx := context.Background()
	agent, err := e.a.Store.GetAgent(ctx, e.agent)
	require.NoError(e.t, err)
	conns, err := e.a.Store.ListConnections(ctx, agent.WorkspaceID)
	require.NoError(e.t, err)
	// What GenerateReply sends: the workspace's system prompt and tools.
	res, err := e.a.contextWindow(ctx, e.agent, agent.WorkspaceID, e.a.systemPrompt(context.Background(), agent.WorkspaceID, conns), e.a.modelTools(len(conns)), e.a.PrimaryModel)
	require.NoError(e.t, err)
	return res
}

func lastUserMessage(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// Issue 10: after 500 turns the model saw "message 499" as the newest message. The window
// holds the newest turns; compaction replaces the older ones with a summary the model sees and
// the user can read (a transcript row and a message event).
func TestCompactionSummarisesWhatNoLongerFits(t *testing.T) {
	e := newCompactEnv(t)
	ctx := context.Background()
	for n := 1; n <= 480; n++ {
		e.turn(n, 1200)
	}
	before := e.window()
	assert.True(t, strings.HasPrefix(lastUserMessage(before.Messages), "message 480:"), "the newest message is sent")
	assert.True(t, before.Omitted, "older turns did not fit")
	assert.LessOrEqual(t, before.Tokens, e.budget)

	res := e.compact()
	require.True(t, res.Compacted)
	assert.Equal(t, int64(1), res.FromSeq)
	assert.Greater(t, res.Turns, 400)
	assert.Greater(t, res.ModelCalls, 1, "480 turns do not fit one summarisation request")
	assert.Equal(t, int64(e.seq), mustParse(t, e.a.Store, e.agent, res.MessageID).Seq)

	// The summary is a transcript row at the seq the workflow gave, covering whole turns.
	row, err := e.a.Store.GetMessage(ctx, e.agent, uuid.MustParse(res.MessageID))
	require.NoError(t, err)
	assert.Equal(t, store.RoleSummary, row.Role)
	c, ok := row.Coverage()
	require.True(t, ok)
	assert.Equal(t, res.ThroughSeq, c.ThroughSeq)
	next, err := e.a.Store.ListMessages(ctx, e.agent, c.ThroughSeq, 1)
	require.NoError(t, err)
	assert.Equal(t, "user", next[0].Role, "the summary ends at a turn boundary")
	assert.Contains(t, row.Content, "Summary of ")
	assert.Contains(t, row.Content, "Tools called: sap_read_table")
	assert.LessOrEqual(t, window.Estimate(row.Content), window.MaxSummaryTokens(e.budget))

	// Clients get it as a message.
	raws, err := e.a.Bus.Tail(ctx, events.AgentTopic(e.agent.String()), 100)
	require.NoError(t, err)
	require.Len(t, raws, 1)
	var ev struct {
		Type    string        `json:"type"`
		Message store.Message `json:"message"`
	}
	require.NoError(t, json.Unmarshal(raws[0].JSON, &ev))
	assert.Equal(t, "message", ev.Type)
	assert.Equal(t, store.RoleSummary, ev.Message.Role)
	assert.Equal(t, row.Content, ev.Message.Content)

	// The next request: the summary in the system message, then every turn after it.
	after := e.window()
	assert.False(t, after.Omitted, "after compaction the newest turns fit")
	assert.Contains(t, after.Messages[0].Content, row.Content)
	assert.Equal(t, c.ThroughSeq+1, after.FirstSeq)
	assert.True(t, strings.HasPrefix(lastUserMessage(after.Messages), "message 480:"))
	assert.LessOrEqual(t, after.Tokens, e.budget)
}

// A conversation that predates summaries may hold more rows than one compaction reads: the
// newest compactRows are summarised, the older ones covered without being read.
func TestTheFirstCompactionOfAVeryLongConversationReadsItsNewestRows(t *testing.T) {
	e := newCompactEnv(t)
	for n := 1; n <= compactRows/4+100; n++ {
		e.turn(n, 200)
	}
	res := e.compact()
	require.True(t, res.Compacted)
	assert.Equal(t, int64(401), res.FromSeq, "rows 1-400 are not read")
	after := e.window()
	assert.False(t, after.Omitted)
	assert.Equal(t, res.ThroughSeq+1, after.FirstSeq)
}

func mustParse(t *testing.T, st *store.Store, agent uuid.UUID, id string) store.Message {
	t.Helper()
	m, err := st.GetMessage(context.Background(), agent, uuid.MustParse(id))
	require.NoError(t, err)
	return m
}

// A retried compaction (same message ID) returns the row the first attempt stored and does not
// ask the model again.
func TestARetriedCompactionReturnsTheStoredRow(t *testing.T) {
	e := newCompactEnv(t)
	for n := 1; n <= 60; n++ {
		e.turn(n, 1200)
	}
	id := uuid.NewString()
	e.seq++
	first := e.compactAt(id, e.seq)
	require.True(t, first.Compacted)
	calls := e.calls.Load()
	again := e.compactAt(id, e.seq)
	assert.Equal(t, calls, e.calls.Load(), "no second summarisation")
	first.ModelCalls = 0
	assert.Equal(t, first, again)
	rows, err := e.a.Store.ListRecentMessages(context.Background(), e.agent, 5)
	require.NoError(t, err)
	summaries := 0
	for _, m := range rows {
		if m.Role == store.RoleSummary {
			summaries++
		}
	}
	assert.Equal(t, 1, summaries)
}

func TestNothingToCompactWritesNothing(t *testing.T) {
	e := newCompactEnv(t)
	for n := 1; n <= 3; n++ {
		e.turn(n, 500)
	}
	res := e.compact()
	assert.False(t, res.Compacted)
	assert.Zero(t, e.calls.Load())
	_, err := e.a.Store.LatestSummary(context.Background(), e.agent)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// Each compaction extends the previous summary with the turns after it.
func TestASecondCompactionExtendsTheFirst(t *testing.T) {
	e := newCompactEnv(t)
	for n := 1; n <= 40; n++ {
		e.turn(n, 1200)
	}
	first := e.compact()
	require.True(t, first.Compacted)
	for n := 41; n <= 80; n++ {
		e.turn(n, 1200)
	}
	second := e.compact()
	require.True(t, second.Compacted)
	assert.Equal(t, first.ThroughSeq+1, second.FromSeq)
	assert.Greater(t, second.ThroughSeq, first.ThroughSeq)
	latest, err := e.a.Store.LatestSummary(context.Background(), e.agent)
	require.NoError(t, err)
	assert.Equal(t, second.MessageID, latest.ID.String())
	assert.Contains(t, latest.Content, "Before that: Summary of ", "the previous summary is carried")
}

// A seq already taken by another row is the workflow's numbering error: retrying cannot help.
func TestCompactionAtATakenSeqIsNotRetried(t *testing.T) {
	e := newCompactEnv(t)
	for n := 1; n <= 40; n++ {
		e.turn(n, 1200)
	}
	e.flush()
	_, err := e.env.ExecuteActivity(e.a.CompactConversation, workflows.CompactInput{AgentID: e.agent.String(), MessageID: uuid.NewString(), Seq: e.seq})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is taken")
}
