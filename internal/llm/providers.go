// Package llm resolves "provider:model" names to OpenAI-compatible endpoints and builds
// go-openai clients for them. Every model, hosted or the offline one, is reached the same way.
package llm

import (
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Provider is one OpenAI-compatible endpoint.
type Provider struct {
	Name    string
	BaseURL string
	APIKey  string
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
