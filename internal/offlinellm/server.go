// Package offlinellm is a deterministic, offline OpenAI-compatible model server. Demos and
// tests talk to it through the real go-openai client exactly as they would to a hosted model:
// same endpoints, same streaming format (many small chunks, reasoning deltas, tool calls in
// fragments), same error shape. What it answers is driven by rules (see Rule).
package offlinellm

import (
	"encoding/json"
	"fmt"
	"net/http"
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
}

// Server serves the OpenAI-compatible API.
type Server struct {
	opts    Options
	ruleErr error
}

// New builds a server; invalid rule regexps make every completion fail with a clear 500.
func New(opts Options) *Server {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 4
	}
	if opts.MaxContextChars <= 0 {
		opts.MaxContextChars = 200000
	}
	opts.Rules = append([]Rule(nil), opts.Rules...)
	return &Server{opts: opts, ruleErr: compileRules(opts.Rules)}
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.authorized(http.MethodPost, s.chatCompletions))
	mux.HandleFunc("/v1/models", s.authorized(http.MethodGet, s.models))
	mux.HandleFunc("/v1/embeddings", s.authorized(http.MethodPost, s.embeddings))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

func (s *Server) authorized(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "use "+method)
			return
		}
		if s.opts.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
			writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.")
			return
		}
		h(w, r)
	}
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	if s.ruleErr != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "bad_rules", s.ruleErr.Error())
		return
	}
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_messages", "'messages' must contain at least one message.")
		return
	}
	total := 0
	for _, m := range req.Messages {
		total += len(m.text())
	}
	if total > s.opts.MaxContextChars {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d characters. Your messages resulted in %d characters.", s.opts.MaxContextChars, total))
		return
	}
	rep := s.decide(&req)
	if rep.FailStatus != 0 {
		writeError(w, rep.FailStatus, "server_error", "simulated_failure", fmt.Sprintf("simulated failure (HTTP %d)", rep.FailStatus))
		return
	}
	if req.Model == "" {
		req.Model = ModelName
	}
	id := fmt.Sprintf("chatcmpl-%016x", uint64(hash(lastUserText(req.Messages)))<<32|uint64(len(req.Messages)))
	usage := usageFor(total, rep)
	if !req.Stream {
		s.writeCompletion(w, id, req.Model, rep, usage)
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.stream(w, r, streamPlan{id: id, model: req.Model, reply: rep, usage: usage, includeUsage: includeUsage,
		arrived: arrived, lastUser: lastUserText(req.Messages)})
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func usageFor(inputChars int, rep reply) usage {
	out := len(rep.Content) + len(rep.Reasoning)
	for _, c := range rep.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := usage{PromptTokens: (inputChars + 3) / 4, CompletionTokens: (out + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (s *Server) writeCompletion(w http.ResponseWriter, id, model string, rep reply, u usage) {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		calls := make([]call, len(rep.ToolCalls))
		for i, c := range rep.ToolCalls {
			calls[i] = call{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Arguments}}
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   u,
	})
}

// created is a fixed timestamp: replies are byte-for-byte deterministic.
const created = 1767225600

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": ModelName, "object": "model", "created": created, "owned_by": "sapagent"},
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in OpenAI's error shape, which go-openai decodes into *openai.APIError.
func writeError(w http.ResponseWriter, status int, typ, code, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code, "param": nil}})
}
