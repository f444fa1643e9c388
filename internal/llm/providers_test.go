package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContextTokensPerModelThenProviderThenDefault(t *testing.T) {
	r := NewRegistry(
		Provider{Name: "openai", BaseURL: "https://api.openai.com/v1", ContextTokens: 128000,
			ModelContextTokens: map[string]int{"gpt-3.5-turbo": 16385}},
		Provider{Name: "offline", BaseURL: "http://127.0.0.1:8089/v1"},
	)
	assert.Equal(t, 16385, r.ContextTokens("openai:gpt-3.5-turbo"))
	assert.Equal(t, 128000, r.ContextTokens("openai:gpt-4o"))
	assert.Equal(t, DefaultContextTokens, r.ContextTokens("offline:sapagent-offline"))
	assert.Equal(t, DefaultContextTokens, r.ContextTokens("unknown:model"))
	assert.Equal(t, DefaultContextTokens, r.ContextTokens("not-a-ref"))
}
