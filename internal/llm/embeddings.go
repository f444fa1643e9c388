package llm

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// Embedder turns texts into vectors through a provider's OpenAI-compatible /embeddings
// endpoint, with the same clients (base URL, key) as the chat models.
type Embedder struct {
	client *openai.Client
	model  string
	ref    string
}

// Embedder returns an embedder for a "provider:model" reference such as
// "openai:text-embedding-3-small" or "offline:sapagent-offline".
func (r *Registry) Embedder(ref string) (*Embedder, error) {
	c, model, err := r.Client(ref)
	if err != nil {
		return nil, err
	}
	return &Embedder{client: c, model: model, ref: ref}, nil
}

// Model is the "provider:model" reference the embedder calls.
func (e *Embedder) Model() string { return e.ref }

// Embed returns one vector per text, in order. The caller batches: one call is one request.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	resp, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
		Input: texts, Model: openai.EmbeddingModel(e.model), EncodingFormat: openai.EmbeddingEncodingFormatBase64, // a quarter of the JSON of float lists
	})
	if err != nil {
		return nil, fmt.Errorf("embeddings (%s): %w", e.ref, err)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings (%s): %d vectors for %d texts", e.ref, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings (%s): answer has a bad or repeated index %d", e.ref, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, errors.New("embeddings (" + e.ref + "): empty vector")
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
