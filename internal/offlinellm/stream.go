package offlinellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

type streamPlan struct {
	id, model    string
	reply        reply
	usage        usage
	includeUsage bool
	arrived      time.Time
	lastUser     string
}

// chunk pieces of OpenAI's streaming format.
type deltaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type deltaToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function deltaFunction `json:"function"`
}

type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          string          `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []deltaToolCall `json:"tool_calls,omitempty"`
}

type streamChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type streamChunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []streamChoice `json:"choices"`
	Usage   *usage         `json:"usage,omitempty"`
}

// toolArgumentFragment is how many characters of arguments each tool-call delta carries,
// like OpenAI's token-sized fragments.
const toolArgumentFragment = 6

// stream writes the reply as Server-Sent Events: role, reasoning chunks, content chunks, tool
// call fragments, the finish reason, optional usage, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p streamPlan) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)

	ctx := r.Context()
	first := true
	send := func(d delta, finish string, token bool) bool {
		if token && first {
			first = false
			if s.opts.OnFirstToken != nil {
				s.opts.OnFirstToken(p.lastUser, time.Since(p.arrived))
			}
		} else if token && p.reply.Delay > 0 {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(p.reply.Delay):
			}
		}
		c := streamChunk{ID: p.id, Object: "chat.completion.chunk", Created: created, Model: p.model,
			Choices: []streamChoice{{Delta: d}}}
		if finish != "" {
			c.Choices[0].FinishReason = &finish
		}
		return writeEvent(w, flusher, c) && ctx.Err() == nil
	}

	if !send(delta{Role: "assistant"}, "", false) {
		return
	}
	for _, piece := range split(p.reply.Reasoning, s.opts.ChunkSize) {
		if !send(delta{ReasoningContent: piece}, "", true) {
			return
		}
	}
	for _, piece := range split(p.reply.Content, s.opts.ChunkSize) {
		if !send(delta{Content: piece}, "", true) {
			return
		}
	}
	for i, call := range p.reply.ToolCalls {
		head := deltaToolCall{Index: i, ID: call.ID, Type: "function", Function: deltaFunction{Name: call.Name}}
		if !send(delta{ToolCalls: []deltaToolCall{head}}, "", true) {
			return
		}
		for _, frag := range split(call.Arguments, toolArgumentFragment) {
			if !send(delta{ToolCalls: []deltaToolCall{{Index: i, Function: deltaFunction{Arguments: frag}}}}, "", true) {
				return
			}
		}
	}
	finish := "stop"
	if len(p.reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !send(delta{}, finish, false) {
		return
	}
	if p.includeUsage {
		u := p.usage
		if !writeEvent(w, flusher, streamChunk{ID: p.id, Object: "chat.completion.chunk", Created: created, Model: p.model,
			Choices: []streamChoice{}, Usage: &u}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func writeEvent(w http.ResponseWriter, f http.Flusher, v any) bool {
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", raw); err != nil {
		return false
	}
	if f != nil {
		f.Flush()
	}
	return true
}

// split cuts s into pieces of n runes (never inside a UTF-8 sequence).
func split(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
