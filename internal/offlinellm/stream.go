package offlinellm

import (
	"context"
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

// Pieces of OpenAI's chat.completion.chunk object.
type deltaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"` // present (possibly "") in every fragment, as OpenAI sends it
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

// tokenDeltas cuts a reply into the deltas the model "generates": reasoning, then content, then
// each tool call as a head (id, type, name) followed by argument fragments. There is always at
// least one, so the finish reason and OnFirstToken have a chunk to go with.
func tokenDeltas(rep reply, chunkSize int) []delta {
	var out []delta
	for _, piece := range split(rep.Reasoning, chunkSize) {
		out = append(out, delta{ReasoningContent: piece})
	}
	for _, piece := range split(rep.Content, chunkSize) {
		out = append(out, delta{Content: piece})
	}
	for i, call := range rep.ToolCalls {
		head := deltaToolCall{Index: i, ID: call.ID, Type: "function", Function: deltaFunction{Name: call.Name}}
		out = append(out, delta{ToolCalls: []deltaToolCall{head}})
		for _, frag := range split(call.Arguments, toolArgumentFragment) {
			out = append(out, delta{ToolCalls: []deltaToolCall{{Index: i, Function: deltaFunction{Arguments: frag}}}})
		}
	}
	if len(out) == 0 {
		out = append(out, delta{})
	}
	return out
}

// stream writes the reply as Server-Sent Events: a role chunk, the token deltas (the last one
// carrying the finish reason), optional usage, then [DONE]. It stops as soon as the client goes away.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p streamPlan) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)

	ctx := r.Context()
	chunk := func(d delta, finish string) streamChunk {
		c := streamChunk{ID: p.id, Object: "chat.completion.chunk", Created: created, Model: p.model,
			Choices: []streamChoice{{Delta: d}}}
		if finish != "" {
			c.Choices[0].FinishReason = &finish
		}
		return c
	}
	if !writeEvent(w, flusher, chunk(delta{Role: "assistant"}, "")) {
		return
	}
	finish := "stop"
	if len(p.reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	deltas := tokenDeltas(p.reply, s.opts.ChunkSize)
	for i, d := range deltas {
		if i == 0 {
			if s.opts.OnFirstToken != nil {
				s.opts.OnFirstToken(p.lastUser, time.Since(p.arrived))
			}
		} else if !pause(ctx, p.reply.Delay) {
			return
		}
		f := ""
		if i == len(deltas)-1 {
			f = finish
		}
		if s.opts.OnChunk != nil && d.Content != "" {
			s.opts.OnChunk(p.lastUser, d.Content, time.Now())
		}
		if !writeEvent(w, flusher, chunk(d, f)) || ctx.Err() != nil {
			return
		}
	}
	if p.includeUsage {
		u := p.usage
		c := chunk(delta{}, "")
		c.Choices, c.Usage = []streamChoice{}, &u
		if !writeEvent(w, flusher, c) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// pause waits d between chunks; false means the client went away.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
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
