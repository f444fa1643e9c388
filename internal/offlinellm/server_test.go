package offlinellm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newClient(t *testing.T, opts Options) *openai.Client {
	t.Helper()
	srv := httptest.NewServer(New(opts).Handler())
	t.Cleanup(srv.Close)
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = srv.URL + "/v1"
	return openai.NewClientWithConfig(cfg)
}

func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: ModelName, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "be brief"},
		{Role: openai.ChatMessageRoleUser, Content: text},
	}}
}

type collected struct {
	chunks    int
	reasoning strings.Builder
	content   strings.Builder
	order     []string // "reasoning" / "content" / "tool" transitions
	calls     map[int]*openai.ToolCall
	heads     map[int]openai.ToolCall // the first fragment of each call
	finish    openai.FinishReason
	usage     *openai.Usage
}

func collect(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) *collected {
	t.Helper()
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	st, err := c.CreateChatCompletionStream(context.Background(), req)
	require.NoError(t, err)
	defer st.Close()
	out := &collected{calls: map[int]*openai.ToolCall{}, heads: map[int]openai.ToolCall{}}
	mark := func(kind string) {
		if len(out.order) == 0 || out.order[len(out.order)-1] != kind {
			out.order = append(out.order, kind)
		}
	}
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out.chunks++
		if ch.Usage != nil {
			out.usage = ch.Usage
		}
		for _, choice := range ch.Choices {
			if choice.FinishReason != "" {
				out.finish = choice.FinishReason
			}
			if choice.Delta.ReasoningContent != "" {
				mark("reasoning")
				out.reasoning.WriteString(choice.Delta.ReasoningContent)
			}
			if choice.Delta.Content != "" {
				mark("content")
				out.content.WriteString(choice.Delta.Content)
			}
			for _, tc := range choice.Delta.ToolCalls {
				mark("tool")
				idx := *tc.Index
				if out.calls[idx] == nil {
					out.calls[idx] = &openai.ToolCall{}
					out.heads[idx] = tc
				}
				cur := out.calls[idx]
				if tc.ID != "" {
					cur.ID, cur.Type, cur.Function.Name = tc.ID, tc.Type, tc.Function.Name
				}
				cur.Function.Arguments += tc.Function.Arguments
			}
		}
	}
}

func TestStreamedTextAssemblesToTheNonStreamedReply(t *testing.T) {
	c := newClient(t, Options{})
	req := userRequest("List the sales order tables")
	got := collect(t, c, req)
	assert.Greater(t, got.chunks, 10, "streams in many small chunks")
	assert.Equal(t, openai.FinishReasonStop, got.finish)
	require.NotNil(t, got.usage)
	assert.Positive(t, got.usage.CompletionTokens)

	full, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, full.Choices[0].Message.Content, got.content.String())
	assert.Contains(t, got.content.String(), `You said: "List the sales order tables"`)
	again := collect(t, c, req)
	assert.Equal(t, got.content.String(), again.content.String(), "deterministic")
}

func TestReasoningStreamsBeforeContent(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{Match: `^plan (.+)$`, Reasoning: "planning $1", Reply: "plan for $1 ready"}}})
	req := userRequest("why?")
	req.ReasoningEffort = "low"
	got := collect(t, c, req)
	assert.Equal(t, []string{"reasoning", "content"}, got.order)
	assert.Contains(t, got.reasoning.String(), "Thinking about: why?")

	got = collect(t, c, userRequest("plan the migration"))
	assert.Equal(t, []string{"reasoning", "content"}, got.order)
	assert.Equal(t, "planning the migration", got.reasoning.String())
	assert.Equal(t, "plan for the migration ready", got.content.String())

	full, err := c.CreateChatCompletion(context.Background(), userRequest("plan the migration"))
	require.NoError(t, err)
	assert.Equal(t, "planning the migration", full.Choices[0].Message.ReasoningContent)
}

func TestToolCallsStreamInFragmentsAndFireOnlyOnUserMessages(t *testing.T) {
	rules := []Rule{{Match: `read table (\w+)`, Reply: "Reading.", ToolCalls: []ToolCallRule{
		{Name: "sap_read_table", Arguments: `{"table":"$1","max_rows":5}`},
	}}}
	c := newClient(t, Options{Rules: rules})
	req := userRequest("please read table MARA")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "sap_read_table"}}}
	got := collect(t, c, req)
	assert.Equal(t, openai.FinishReasonToolCalls, got.finish)
	assert.Equal(t, []string{"content", "tool"}, got.order)
	require.Len(t, got.calls, 1)
	head := got.heads[0]
	assert.Equal(t, "sap_read_table", head.Function.Name, "the name arrives in the first fragment")
	assert.NotEmpty(t, head.ID, "the id arrives in the first fragment")
	assert.Equal(t, openai.ToolTypeFunction, head.Type)
	assert.Empty(t, head.Function.Arguments)
	assert.Greater(t, got.chunks, 4, "arguments arrive in several fragments")
	call := got.calls[0]
	assert.Equal(t, "sap_read_table", call.Function.Name)
	assert.NotEmpty(t, call.ID)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(call.Function.Arguments), &args))
	assert.Equal(t, map[string]any{"table": "MARA", "max_rows": float64(5)}, args)

	// The tool result comes back: the model summarises it instead of calling again.
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{*call}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: `{"rows":[{"MATNR":"100-100"}]}`})
	next := collect(t, c, req)
	assert.Empty(t, next.calls)
	assert.Equal(t, `The tool sap_read_table returned: {"rows":[{"MATNR":"100-100"}]}`, next.content.String())

	// Without the tool offered, the rule answers in text.
	plain := collect(t, c, userRequest("please read table MARA"))
	assert.Empty(t, plain.calls)
	assert.Contains(t, plain.content.String(), "not available")
}

func TestEmbeddingsAreDeterministicUnitVectors(t *testing.T) {
	c := newClient(t, Options{})
	resp, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{
		Input: []string{"sales order header", "sales order item", "vendor master bank details"}, Model: "any"})
	require.NoError(t, err)
	require.Len(t, resp.Data, 3)
	vecs := make([][]float32, 3)
	for i, d := range resp.Data {
		require.Len(t, d.Embedding, EmbeddingDimensions)
		vecs[i] = d.Embedding
		var n float64
		for _, x := range d.Embedding {
			n += float64(x) * float64(x)
		}
		assert.InDelta(t, 1, math.Sqrt(n), 1e-5)
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	assert.Greater(t, dot(vecs[0], vecs[1]), dot(vecs[0], vecs[2]))
	assert.Equal(t, Embed("sales order header"), vecs[0])

	models, err := c.ListModels(context.Background())
	require.NoError(t, err)
	require.Len(t, models.Models, 1)
	assert.Equal(t, ModelName, models.Models[0].ID)
}

func TestFailuresLookLikeOpenAIErrors(t *testing.T) {
	c := newClient(t, Options{MaxContextChars: 50, Rules: []Rule{{Match: "^outage$", FailStatus: 503}}})
	_, err := c.CreateChatCompletion(context.Background(), userRequest(strings.Repeat("long ", 20)))
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.HTTPStatusCode)
	assert.Equal(t, "context_length_exceeded", apiErr.Code)

	_, err = c.CreateChatCompletionStream(context.Background(), userRequest("outage"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.HTTPStatusCode)

	keyed := newClient(t, Options{APIKey: "right"})
	_, err = keyed.CreateChatCompletion(context.Background(), userRequest("hi"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.HTTPStatusCode)

	srv := httptest.NewServer(New(Options{}).Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages": [`))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "invalid_json", body.Error.Code)
	assert.NotEmpty(t, body.Error.Message)
}

func TestLoadRulesNamesTheFileOnError(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadRules(filepath.Join(dir, "missing.json"))
	require.ErrorContains(t, err, "missing.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[{"match": 1}]`), 0o644))
	_, err = LoadRules(bad)
	require.ErrorContains(t, err, "bad.json")
	badRe := filepath.Join(dir, "re.json")
	require.NoError(t, os.WriteFile(badRe, []byte(`[{"name":"x","match":"(","token_delay":"5ms"}]`), 0o644))
	_, err = LoadRules(badRe)
	require.ErrorContains(t, err, "re.json")
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`[{"name":"x","match":"hi","reply":"yo","token_delay":"5ms"}]`), 0o644))
	rules, err := LoadRules(good)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond, rules[0].TokenDelay.Duration)
}

func TestOnFirstTokenFiresOncePerStream(t *testing.T) {
	var calls atomic.Int32
	var seen atomic.Value
	c := newClient(t, Options{OnFirstToken: func(last string, since time.Duration) {
		calls.Add(1)
		seen.Store(last)
	}})
	collect(t, c, userRequest("count me"))
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, "count me", seen.Load())
}

func TestEmbeddingsAcceptOneStringAndBase64(t *testing.T) {
	c := newClient(t, Options{})
	one, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequest{Input: "vendor master", Model: "m"})
	require.NoError(t, err)
	require.Len(t, one.Data, 1)
	assert.Equal(t, Embed("vendor master"), one.Data[0].Embedding)
	assert.Positive(t, one.Usage.PromptTokens)

	b64, err := c.CreateEmbeddings(context.Background(), openai.EmbeddingRequestStrings{
		Input: []string{"vendor master"}, Model: "m", EncodingFormat: openai.EmbeddingEncodingFormatBase64})
	require.NoError(t, err)
	require.Len(t, b64.Data, 1)
	assert.Equal(t, Embed("vendor master"), b64.Data[0].Embedding)

	m, err := c.GetModel(context.Background(), "gpt-4o")
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o", m.ID, "any model name is accepted")
}

func TestTitleRequestsGetTheFirstWords(t *testing.T) {
	c := newClient(t, Options{})
	resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: ModelName, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Write a conversation title of at most six words."},
		{Role: openai.ChatMessageRoleUser, Content: "Which company codes post to the leading ledger 0L today?"},
	}})
	require.NoError(t, err)
	assert.Equal(t, "Which company codes post to the", resp.Choices[0].Message.Content)
}

// Compaction asks for a conversation summary; the offline model lists the requests and tools
// and carries the start of the previous summary, deterministically and briefly.
func TestSummaryRequestsGetADeterministicSummary(t *testing.T) {
	c := newClient(t, Options{})
	var turns strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&turns, "User: message %d\nAssistant called sap_read_table({\"table\":\"KNA1\"})\nTool result: %s\nAssistant: done %d\n",
			i, strings.Repeat("row ", 500), i)
	}
	input := "Previous summary:\nThe user set up the ECC connection.\n\nTurns to summarise:\n" + turns.String() + "User: and the last one\n"
	req := openai.ChatCompletionRequest{Model: ModelName, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Write the conversation summary that replaces older turns."},
		{Role: openai.ChatMessageRoleUser, Content: input},
	}}
	resp, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	got := resp.Choices[0].Message.Content
	assert.Equal(t, `Summary of 31 earlier user request(s). Most recently the user asked: "message 24"; "message 25"; `+
		`"message 26"; "message 27"; "message 28"; "message 29"; "message 30"; "and the last one". `+
		`Tools called: sap_read_table (30×). Before that: The user set up the ECC connection.`, got)
	again, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, got, again.Choices[0].Message.Content)
	assert.Empty(t, resp.Choices[0].Message.ToolCalls, "a summary never calls tools")
}

func TestAConversationWhoseSummaryMentionsSummariesIsAnsweredNormally(t *testing.T) {
	c := newClient(t, Options{})
	resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: ModelName, Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are sapagent.\n\nEarlier: the user asked for a conversation summary."},
		{Role: openai.ChatMessageRoleUser, Content: "hello again"},
	}})
	require.NoError(t, err)
	assert.Contains(t, resp.Choices[0].Message.Content, `You said: "hello again"`)
}
