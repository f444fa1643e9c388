package offlinellm

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// wire types: the subset of OpenAI's Chat Completions request the server reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ReasoningEffort string `json:"reasoning_effort"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// text returns the message's text: a string, or the text parts of a multi-part content array.
func (m chatMessage) text() string {
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

type toolCall struct {
	ID        string
	Name      string
	Arguments string
}

// reply is what the model "decides" to answer.
type reply struct {
	Reasoning  string
	Content    string
	ToolCalls  []toolCall
	Delay      time.Duration
	FailStatus int
}

// decide computes the deterministic reply to a request.
func (s *Server) decide(req *chatRequest) reply {
	last := req.Messages[len(req.Messages)-1]
	out := reply{Delay: s.opts.TokenDelay}
	if last.Role == "tool" {
		out.Content = fmt.Sprintf("The tool %s returned: %s", toolName(req.Messages, last), truncate(last.text(), 200))
		return out
	}
	text := lastUserText(req.Messages)
	if req.ReasoningEffort != "" {
		out.Reasoning = "Thinking about: " + truncate(text, 200) + ". I should answer precisely and say what I am unsure of."
	}
	for i := range s.opts.Rules {
		r := &s.opts.Rules[i]
		if !r.re.MatchString(text) {
			continue
		}
		if r.TokenDelay != nil {
			out.Delay = r.TokenDelay.Duration
		}
		out.FailStatus = r.FailStatus
		if r.Reasoning != "" {
			out.Reasoning = r.expand(r.Reasoning, text)
		}
		out.Content = r.expand(r.Reply, text)
		offered := offeredTools(req)
		for j, tc := range r.ToolCalls {
			if !offered[tc.Name] {
				out.ToolCalls = nil
				out.Content = fmt.Sprintf("I would call the tool %s, but it is not available in this conversation.", tc.Name)
				return out
			}
			out.ToolCalls = append(out.ToolCalls, toolCall{
				ID:        fmt.Sprintf("call_%08x%d", hash(text+tc.Name), j),
				Name:      tc.Name,
				Arguments: r.expand(tc.Arguments, text),
			})
		}
		return out
	}
	out.Content = defaultReply(text)
	return out
}

// defaultReply quotes the user and adds a fixed explanation, long enough to stream in many chunks.
func defaultReply(text string) string {
	return fmt.Sprintf("You said: %q. This is the offline model of sapagent: it answers deterministically, "+
		"without a network, so demos and tests behave the same every time. Configure OPENAI_API_KEY and "+
		"PRIMARY_MODEL to talk to a hosted model; the conversation, approvals and tools work the same way.", text)
}

func lastUserText(msgs []chatMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].text()
		}
	}
	return ""
}

// toolName finds the name of the tool whose result `result` is, via the assistant's tool calls.
func toolName(msgs []chatMessage, result chatMessage) string {
	if result.Name != "" {
		return result.Name
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == result.ToolCallID {
				return c.Function.Name
			}
		}
	}
	if result.ToolCallID != "" {
		return result.ToolCallID
	}
	return "call"
}

func offeredTools(req *chatRequest) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		out[t.Function.Name] = true
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
