package activities

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The connector protocol tells connector authors the key a write carries; it must be the one
// the tool activity sends, or a connector keyed on the documented form mixes conversations up.
func TestConnectorProtocolDocumentsTheIdempotencyKeySent(t *testing.T) {
	raw, err := os.ReadFile("../docs/connector-protocol.md")
	require.NoError(t, err)
	want := toolIdempotencyKey("<agent ID>", "<tool call ID>") + "/<n>"
	shown := regexp.MustCompile("Idempotency-Key: ([^`]+)`").FindAllStringSubmatch(string(raw), -1)
	require.NotEmpty(t, shown, "the protocol shows the key's form")
	for _, m := range shown {
		assert.Equal(t, want, m[1])
	}
	assert.True(t, strings.Contains(string(raw), "sap.WithIdempotencyKey(ctx, agentID+\"/\"+toolCallID)"), "the code example sets the same key")
}
