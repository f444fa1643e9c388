package offlinellm

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests look at the bytes on the wire, where the go-openai client would hide differences.

func post(t *testing.T, srv *httptest.Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

type wireError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

func decodeError(t *testing.T, resp *http.Response) wireError {
	t.Helper()
	var body wireError
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.NotEmpty(t, body.Error.Message)
	assert.NotEmpty(t, body.Error.Type)
	return body
}

func TestStreamWireFormat(t *testing.T) {
	srv := httptest.NewServer(New(Options{}).Handler())
	defer srv.Close()
	resp := post(t, srv, "/v1/chat/completions",
		`{"model":"gpt-anything","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"héllo wörld, ünïcode ✓"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	var events []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		require.True(t, strings.HasPrefix(line, "data: "), line)
		events = append(events, strings.TrimPrefix(line, "data: "))
	}
	require.NoError(t, sc.Err())
	require.Greater(t, len(events), 12)
	assert.Equal(t, "[DONE]", events[len(events)-1])

	type chunk struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int     `json:"index"`
			Delta        delta   `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *usage `json:"usage"`
	}
	var chunks []chunk
	for _, e := range events[:len(events)-1] {
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(e), &c), e)
		assert.Regexp(t, `^chatcmpl-[0-9a-f]+$`, c.ID)
		assert.Equal(t, "chat.completion.chunk", c.Object)
		assert.Equal(t, "gpt-anything", c.Model, "the requested model is echoed")
		assert.Positive(t, c.Created)
		chunks = append(chunks, c)
	}
	assert.Equal(t, "assistant", chunks[0].Choices[0].Delta.Role)

	usageChunk := chunks[len(chunks)-1]
	assert.Empty(t, usageChunk.Choices)
	require.NotNil(t, usageChunk.Usage)
	assert.Equal(t, usageChunk.Usage.PromptTokens+usageChunk.Usage.CompletionTokens, usageChunk.Usage.TotalTokens)

	content := chunks[1 : len(chunks)-1]
	var text strings.Builder
	for i, c := range content {
		require.Len(t, c.Choices, 1)
		text.WriteString(c.Choices[0].Delta.Content)
		if i < len(content)-1 {
			assert.Nil(t, c.Choices[0].FinishReason)
			assert.Len(t, []rune(c.Choices[0].Delta.Content), 4, "ChunkSize defaults to 4 characters")
		} else {
			require.NotNil(t, c.Choices[0].FinishReason)
			assert.Equal(t, "stop", *c.Choices[0].FinishReason, "the last content chunk finishes")
			assert.NotEmpty(t, c.Choices[0].Delta.Content)
		}
	}
	assert.True(t, strings.HasPrefix(text.String(), `You said: "héllo wörld, ünïcode ✓".`), text.String())
	words := len(strings.Fields(text.String()))
	assert.True(t, words >= 40 && words <= 80, "default reply has %d words", words)
}

func TestRequestErrorsHaveOpenAIShape(t *testing.T) {
	srv := httptest.NewServer(New(Options{}).Handler())
	defer srv.Close()

	resp := post(t, srv, "/v1/chat/completions", `{"model":"m","messages":[]}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_request_error", decodeError(t, resp).Error.Type)

	resp = post(t, srv, "/v1/chat/completions", `not json`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_json", decodeError(t, resp).Error.Code)

	get, err := http.Get(srv.URL + "/v1/chat/completions")
	require.NoError(t, err)
	defer get.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, get.StatusCode)
	assert.Equal(t, http.MethodPost, get.Header.Get("Allow"))
	assert.Equal(t, "method_not_allowed", decodeError(t, get).Error.Code)

	health, err := http.Get(srv.URL + "/healthz")
	require.NoError(t, err)
	defer health.Body.Close()
	assert.Equal(t, http.StatusOK, health.StatusCode)
}

func TestInvalidRulesFailCompletionsClearly(t *testing.T) {
	srv := httptest.NewServer(New(Options{Rules: []Rule{{Name: "broken", Match: "("}}}).Handler())
	defer srv.Close()
	resp := post(t, srv, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, decodeError(t, resp).Error.Message, "broken")
}

func TestClientDisconnectStopsTheStream(t *testing.T) {
	handlerDone := make(chan struct{})
	inner := New(Options{TokenDelay: 50 * time.Millisecond}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		if r.URL.Path == "/v1/chat/completions" {
			close(handlerDone)
		}
	}))
	defer srv.Close()
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = srv.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)

	// The default reply is ~70 chunks, i.e. several seconds at 50ms a chunk.
	ctx, cancel := context.WithCancel(context.Background())
	req := userRequest("a question that takes a while to answer")
	req.Stream = true
	st, err := c.CreateChatCompletionStream(ctx, req)
	require.NoError(t, err)
	_, err = st.Recv()
	require.NoError(t, err)
	cancel()
	st.Close()
	select {
	case <-handlerDone:
	case <-time.After(time.Second):
		t.Fatal("the server kept streaming after the client went away")
	}
}

func TestRuleTokenDelayOverridesTheDefault(t *testing.T) {
	var firsts atomic.Int32
	c := newClient(t, Options{
		Rules:        []Rule{{Match: "^slow$", Reply: "twenty characters!!!", TokenDelay: &Duration{20 * time.Millisecond}}},
		OnFirstToken: func(string, time.Duration) { firsts.Add(1) },
	})
	start := time.Now()
	got := collect(t, c, userRequest("slow"))
	assert.Equal(t, "twenty characters!!!", got.content.String())
	assert.GreaterOrEqual(t, time.Since(start), 4*20*time.Millisecond, "5 chunks, 4 pauses")

	collect(t, c, userRequest("fast"))
	assert.Equal(t, int32(2), firsts.Load(), "once per streaming request")
}
