// Package offlinellm is a deterministic, offline OpenAI-compatible model server. Demos and
// tests talk to it through the real go-openai client exactly as they would to a hosted model:
// same endpoints, same streaming format (many small chunks, reasoning deltas, tool calls in
// fragments), same error shape. What it answers is driven by rules (see Rule).
package offlinellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ModelName is the model /v1/models lists; any requested model name is accepted.
const ModelName = "sapagent-offline"

// Options tune the server.
type Options struct {
	APIKey          string        // when set, "Authorization: Bearer <APIKey>" is required
	TokenDelay      time.Duration // pause between streamed chunks
	ChunkSize       int           // characters per content chunk (default 4)
	MaxContextChars int           // larger requests get context_length_exceeded (default 200000)
	Rules           []Rule        // checked before the built-in replies
	// OnFirstToken is called once per streaming request right before its first token is written,
	// with the last user message and the time since the request arrived (benchmarks subtract it).
	OnFirstToken func(lastUserMessage string, sinceRequest time.Duration)
	// OnChunk, when set, is called right before each content chunk is written (relay benchmarks
	// compare when a token left the model with when a client read it).
	OnChunk func(lastUserMessage, content string, at time.Time)
}

// Server serves the OpenAI-compatible API.
type Server struct {
	opts    Options
	ruleErr error
}

// New builds a server. It cannot return an error, so invalid rules make every completion fail
// with a 500 that names the bad rule (LoadRules reports the same problems up front).
func New(opts Options) *Server {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 4
	}
	if opts.MaxContextChars <= 0 {
		opts.MaxContextChars = 200000
	}
	opts.Rules = append([]Rule(nil), opts.Rules...) // compiled in place; the caller's slice stays untouched
	return &Server{opts: opts, ruleErr: compileRules(opts.Rules)}
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.authorized(http.MethodPost, s.chatCompletions))
	mux.HandleFunc("/v1/models", s.authorized(http.MethodGet, s.models))
	mux.HandleFunc("/v1/models/", s.authorized(http.MethodGet, s.model))
	mux.HandleFunc("/v1/embeddings", s.authorized(http.MethodPost, s.embeddings))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

func (s *Server) authorized(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s %s is not supported; use %s.", r.Method, r.URL.Path, method))
			return
		}
		if s.opts.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
			writeError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
			return
		}
		h(w, r)
	}
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	if s.ruleErr != nil {
		writeError(w, http.StatusInternalServerError, "bad_rules", "offline model rules: "+s.ruleErr.Error())
		return
	}
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "missing_messages", "'messages' must contain at least one message.")
		return
	}
	total := contextChars(req.Messages)
	if total > s.opts.MaxContextChars {
		writeError(w, http.StatusBadRequest, "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d characters. Your messages resulted in %d characters.", s.opts.MaxContextChars, total))
		return
	}
	rep := s.decide(&req)
	if rep.FailStatus != 0 {
		writeError(w, rep.FailStatus, "simulated_failure", fmt.Sprintf("Simulated failure (HTTP %d) from an offline model rule.", rep.FailStatus))
		return
	}
	if req.Model == "" {
		req.Model = ModelName
	}
	lastUser := lastUserText(req.Messages)
	id := fmt.Sprintf("chatcmpl-%08x%08x", hash(lastUser), uint32(len(req.Messages)))
	u := usageFor(total, rep)
	if !req.Stream {
		writeCompletion(w, id, req.Model, rep, u)
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.stream(w, r, streamPlan{id: id, model: req.Model, reply: rep, usage: u, includeUsage: includeUsage,
		arrived: arrived, lastUser: lastUser})
}

// created is a fixed timestamp: responses are byte-for-byte deterministic.
const created = 1767225600

func modelObject(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": created, "owned_by": "sapagent"}
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{modelObject(ModelName)}})
}

// model answers GET /v1/models/<id> for any id, since completions accept any model name too.
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
	if id == "" {
		s.models(w, r)
		return
	}
	writeJSON(w, http.StatusOK, modelObject(id))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in OpenAI's error shape, which go-openai decodes into *openai.APIError.
func writeError(w http.ResponseWriter, status int, code, message string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code, "param": nil}})
}
