package workflows

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events/frames"
)

// Histories recorded before frames were typed hold the event as Type + Fields: they decode into
// the typed frame, and a new input is recorded in the same shape.
func TestEventInputKeepsTheRecordedPayloadShape(t *testing.T) {
	recorded := `{"AgentID":"a1","EventID":"tool:c1:rejected","Type":"tool_rejected","Fields":{"reason":"approval timed out","tool":"save_note","tool_call_id":"c1"}}`
	var in EventInput
	require.NoError(t, json.Unmarshal([]byte(recorded), &in))
	assert.Equal(t, EventInput{AgentID: "a1", EventID: "tool:c1:rejected",
		Frame: frames.ToolRejected{ToolCallID: "c1", Tool: "save_note", Reason: "approval timed out"}}, in)
	again, err := json.Marshal(in)
	require.NoError(t, err)
	assert.JSONEq(t, recorded, string(again))

	require.Error(t, json.Unmarshal([]byte(`{"AgentID":"a1","Type":"teleport","Fields":{}}`), &in), "a type the workflow never publishes")
}
