// Package llm resolves "provider:model" names to OpenAI-compatible endpoints and builds
// go-openai clients for them. Every model, hosted or the offline one, is reached the same way.
package llm

import (
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultContextTokens is the context size assumed for a model nothing is configured for.
const DefaultContextTokens = 32000

// Provider is one OpenAI-compatible endpoint.
type Provider struct {
	Name    string
	BaseURL string
	APIKey  string
	// ContextTokens is the context size of the provider's models (0: DefaultContextTokens);
	// ModelContextTokens overrides it per model name.
	ContextTokens      int
	ModelContextTokens map[string]int
}

// Registry maps provider names to endpoints and caches one client per provider.
type Registry struct {
	providers map[string]Provider
	clients   map[string]*openai.Client
}

// NewRegistry builds clients for the given providers.
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{providers: map[string]Provider{}, clients: map[string]*openai.Client{}}
	for _, p := range providers {
		cfg := openai.DefaultConfig(p.APIKey)
		cfg.BaseURL = strings.TrimRight(p.BaseURL, "/")
		// No client-level timeout: streams last as long as the activity, which owns the deadline.
		cfg.HTTPClient = &http.Client{}
		r.providers[p.Name] = p
		r.clients[p.Name] = openai.NewClientWithConfig(cfg)
	}
	return r
}

// ParseModel splits "provider:model".
func ParseModel(ref string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(ref, ":")
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("model %q is not in provider:model form", ref)
	}
	return provider, model, nil
}

// Client returns the client and bare model name for a "provider:model" reference.
func (r *Registry) Client(ref string) (*openai.Client, string, error) {
	provider, model, err := ParseModel(ref)
	if err != nil {
		return nil, "", err
	}
	c, ok := r.clients[provider]
	if !ok {
		return nil, "", fmt.Errorf("unknown model provider %q", provider)
	}
	return c, model, nil
}

// ContextTokens is the context size, in tokens, of a "provider:model" reference: the model's
// own setting, else its provider's, else DefaultContextTokens. Requests are built to fit it.
func (r *Registry) ContextTokens(ref string) int {
	provider, model, err := ParseModel(ref)
	if err != nil {
		return DefaultContextTokens
	}
	p, ok := r.providers[provider]
	if !ok {
		return DefaultContextTokens
	}
	if n, ok := p.ModelContextTokens[model]; ok && n > 0 {
		return n
	}
	if p.ContextTokens > 0 {
		return p.ContextTokens
	}
	return DefaultContextTokens
}
