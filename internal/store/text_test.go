package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCleanTextReplacesWhatPostgresCannotStore(t *testing.T) {
	assert.Equal(t, "plain ü", CleanText("plain ü"))
	assert.Equal(t, "T000\uFFFD", CleanText("T000\x00"))
	assert.Equal(t, "a\uFFFDb", CleanText("a\xffb"))
}

func TestCleanJSONReplacesNULEscapesOnly(t *testing.T) {
	assert.JSONEq(t, `{"t":"a\ufffdb"}`, string(CleanJSON(json.RawMessage(`{"t":"a\u0000b"}`))))
	// An escaped backslash before u0000 is the text \u0000, not a NUL.
	assert.Equal(t, `{"t":"\\u0000"}`, string(CleanJSON(json.RawMessage(`{"t":"\\u0000"}`))))
	assert.Equal(t, `{"t":"\\\ufffd"}`, string(CleanJSON(json.RawMessage(`{"t":"\\\u0000"}`))))
	assert.Equal(t, `["\ufffd","x"]`, string(CleanJSON(json.RawMessage(`["\u0000","x"]`))))
}

// A transcript row, an action and a stored output holding NUL characters are written (with
// U+FFFD): a write that fails every time would be retried for ever.
func TestRowsWithNULAreStored(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	agent := testAgent(t, st)
	parts, _ := json.Marshal([]map[string]any{{"type": "tool_call", "id": "c1", "name": "list_notes\x00", "arguments": `{"t":"\u0000"}` + "\x00"}})
	saved, err := st.SaveMessage(ctx, Message{ID: uuid.New(), AgentID: agent, Seq: 1, Role: "assistant", Content: "a\x00b\xff", Parts: parts})
	require.NoError(t, err)
	assert.Equal(t, "a\uFFFDb\uFFFD", saved.Content)
	var ps []map[string]any
	require.NoError(t, json.Unmarshal(saved.Parts, &ps))
	assert.Equal(t, "list_notes\uFFFD", ps[0]["name"])
	assert.Equal(t, `{"t":"\u0000"}`+"\uFFFD", ps[0]["arguments"], "the escape inside the arguments text is text and stays")

	require.NoError(t, st.SaveMessages(ctx, []Message{{ID: uuid.New(), AgentID: agent, Seq: 2, Role: "tool", Content: "out\x00", ToolCallID: "c1"}}))
	require.NoError(t, st.SaveToolOutput(ctx, agent, "c1", "big\x00output"))
	out, err := st.ToolOutput(ctx, agent, "c1")
	require.NoError(t, err)
	assert.Equal(t, "big\uFFFDoutput", out)
	require.NoError(t, st.SetAgentTitle(ctx, agent, "title\x00"))
}
