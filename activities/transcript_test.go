package activities

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sapagent/sapagent/internal/store"
)

// Parts come back from Postgres as jsonb text (`"stored": true`, keys reordered), so stored
// outputs must be found by parsing, not by matching the text the activity wrote.
func TestStoredOutputsAreFoundInJsonbFormattedParts(t *testing.T) {
	history := []store.Message{
		{Role: "tool", ToolCallID: "big", Parts: json.RawMessage(`[{"name": "list_notes", "size": 20000, "type": "tool_result", "stored": true, "content": "…", "is_error": false, "tool_call_id": "big"}]`)},
		{Role: "tool", ToolCallID: "small", Parts: json.RawMessage(`[{"name": "list_notes", "type": "tool_result", "stored": false, "content": "{}", "tool_call_id": "small"}]`)},
		{Role: "assistant", Parts: json.RawMessage(`[{"type": "tool_call", "id": "big", "name": "list_notes", "arguments": "{}"}]`)},
	}
	assert.Equal(t, []string{"big"}, storedOutputs(history))
}
