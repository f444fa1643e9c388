package offlinellm

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// chatRequest is the subset of OpenAI's Chat Completions request the server reads.
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
	Content    json.RawMessage `json:"content"` // a string, an array of parts, or null
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// text returns the message's text: a plain string, or the text parts of a multi-part content
// array joined by spaces (image parts carry no text the fake model could use).
func (m chatMessage) text() string {
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, " ")
}

// contextChars is the size of the conversation as the context-length check sees it: message
// text plus the arguments of earlier tool calls, in characters (not bytes).
func contextChars(msgs []chatMessage) int {
	total := 0
	for _, m := range msgs {
		total += utf8.RuneCountInString(m.text())
		for _, c := range m.ToolCalls {
			total += utf8.RuneCountInString(c.Function.Arguments)
		}
	}
	return total
}

func lastUserText(msgs []chatMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].text()
		}
	}
	return ""
}

func offeredTools(req *chatRequest) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		out[t.Function.Name] = true
	}
	return out
}
