package integration

import (
	"bytes"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/schemas"
)

var (
	eventSchemaOnce sync.Once
	eventSchema     *jsonschema.Schema
)

// validateEvent checks a frame against schemas/events.schema.json. Every frame any integration
// test reads goes through it, so each event type the product emits is checked.
func validateEvent(t testing.TB, raw []byte) {
	eventSchemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.EventsSchema))
		require.NoError(t, err)
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		require.NoError(t, c.AddResource("events.schema.json", doc))
		eventSchema, err = c.Compile("events.schema.json")
		require.NoError(t, err)
	})
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	require.NoError(t, eventSchema.Validate(inst), "event does not match schemas/events.schema.json: %s", raw)
}

func TestEventSchemaRejectsMalformedEvents(t *testing.T) {
	t.Parallel()
	validateEvent(t, []byte(`{"type":"status","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","status":"idle"}`))
	for _, bad := range []string{
		`{"type":"status","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","status":"sleeping"}`,
		`{"type":"status","seq":3,"id":"x","ts":"2026-11-22T10:00:00Z","status":"idle"}`,
		`{"type":"stream","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","delta":"hi"}`,
		`{"type":"approval_needed","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","tool_call_id":"c","tool":"t","arguments":"{}","mode":"auto"}`,
		`{"type":"init","seq":0,"workspace":{}}`,
		`{"type":"teleport"}`,
		`{"seq":1}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		require.NoError(t, err)
		require.Error(t, eventSchema.Validate(inst), bad)
	}
}
