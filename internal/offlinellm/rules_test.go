package offlinellm

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func offer(req *openai.ChatCompletionRequest, names ...string) {
	for _, n := range names {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: n}})
	}
}

func TestGroupsAreSubstitutedLiterallyAndSafelyForJSON(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{
		Match: `(?s)^note (.+)$`, Reply: "Noted $1_x for $$5 and $0.",
		ToolCalls: []ToolCallRule{{Name: "save_note", Arguments: `{"text":"$1","missing":"$7"}`}},
	}}})
	req := userRequest("note she said \"hi\"\nthen left")
	offer(&req, "save_note")
	got := collect(t, c, req)
	assert.Equal(t, "Noted she said \"hi\"\nthen left_x for $5 and $0.", got.content.String(),
		"$1..$9 are references, $$ is a dollar, other dollars stay")
	require.Len(t, got.calls, 1)
	var args map[string]string
	require.NoError(t, json.Unmarshal([]byte(got.calls[0].Function.Arguments), &args), got.calls[0].Function.Arguments)
	assert.Equal(t, map[string]string{"text": "she said \"hi\"\nthen left", "missing": ""}, args)
}

func TestParallelToolCallsAssembleByIndex(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{Match: `compare (\w+) and (\w+)`, ToolCalls: []ToolCallRule{
		{Name: "sap_read_table", Arguments: `{"table":"$1"}`},
		{Name: "sap_read_table", Arguments: `{"table":"$2"}`},
	}}}})
	req := userRequest("compare MARA and MARC")
	offer(&req, "sap_read_table")
	got := collect(t, c, req)
	assert.Equal(t, openai.FinishReasonToolCalls, got.finish)
	assert.Empty(t, got.content.String())
	require.Len(t, got.calls, 2)
	assert.JSONEq(t, `{"table":"MARA"}`, got.calls[0].Function.Arguments)
	assert.JSONEq(t, `{"table":"MARC"}`, got.calls[1].Function.Arguments)
	assert.NotEqual(t, got.calls[0].ID, got.calls[1].ID)

	full, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	msg := full.Choices[0].Message
	assert.Equal(t, openai.FinishReasonToolCalls, full.Choices[0].FinishReason)
	require.Len(t, msg.ToolCalls, 2)
	assert.Equal(t, got.calls[0].ID, msg.ToolCalls[0].ID, "streaming and non-streaming agree")
	assert.Equal(t, got.calls[1].Function.Arguments, msg.ToolCalls[1].Function.Arguments)

	// Both results come back: the summary covers both.
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: msg.ToolCalls},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: msg.ToolCalls[0].ID, Content: "A"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: msg.ToolCalls[1].ID, Content: "B"})
	next, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	assert.Empty(t, next.Choices[0].Message.ToolCalls)
	assert.Equal(t, "The tool sap_read_table returned: A The tool sap_read_table returned: B", next.Choices[0].Message.Content)
}

func TestRulesApplyOnlyToAUserTurn(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{Match: "hello", Reply: "rule fired"}}})
	req := userRequest("hello")
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "earlier answer"})
	resp, err := c.CreateChatCompletion(context.Background(), req)
	require.NoError(t, err)
	assert.Contains(t, resp.Choices[0].Message.Content, `You said: "hello"`)
}

func TestMultiPartUserContentUsesTheTextParts(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{Match: `^describe (\w+)`, Reply: "describing $1"}}})
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{
		Role: openai.ChatMessageRoleUser,
		MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "describe picture"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AAAA"}},
			{Type: openai.ChatMessagePartTypeText, Text: "please"},
		},
	}}}
	got := collect(t, c, req)
	assert.Equal(t, "describing picture", got.content.String())
}

func TestSimulatedFailureAndAPIKey(t *testing.T) {
	c := newClient(t, Options{Rules: []Rule{{Match: "^busy$", FailStatus: http.StatusTooManyRequests}}})
	_, err := c.CreateChatCompletion(context.Background(), userRequest("busy"))
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.HTTPStatusCode)
	assert.Equal(t, "simulated_failure", apiErr.Code)

	keyed := newClient(t, Options{APIKey: "test-key"}) // newClient sends "test-key"
	resp, err := keyed.CreateChatCompletion(context.Background(), userRequest("hi"))
	require.NoError(t, err)
	assert.Positive(t, resp.Usage.PromptTokens)
	assert.Positive(t, resp.Usage.CompletionTokens)
	assert.Equal(t, resp.Usage.PromptTokens+resp.Usage.CompletionTokens, resp.Usage.TotalTokens)
}

func TestLoadRulesRejectsRulesThatWouldFailLater(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	_, err := LoadRules(write("args.json", `[{"name":"r","match":"x","tool_calls":[{"name":"t","arguments":"{not json"}]}]`))
	require.ErrorContains(t, err, "args.json")
	assert.ErrorContains(t, err, "not valid JSON")

	_, err = LoadRules(write("status.json", `[{"name":"r","match":"x","fail_status":200}]`))
	require.ErrorContains(t, err, "status.json")

	_, err = LoadRules(write("delay.json", `[{"name":"r","match":"x","token_delay":20}]`))
	require.ErrorContains(t, err, "delay.json")

	rules, err := LoadRules(write("ok.json", `[{"name":"r","match":"n (\\d+)","tool_calls":[{"name":"t","arguments":"{\"n\": $1}"},{"name":"u"}]}]`))
	require.NoError(t, err)
	require.Len(t, rules, 1)
	assert.Equal(t, "{}", rules[0].ToolCalls[1].arguments(), "missing arguments mean an empty object")
}
