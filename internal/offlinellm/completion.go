package offlinellm

import (
	"net/http"
	"unicode/utf8"
)

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// usageFor estimates tokens the way people do for English: about four characters each.
func usageFor(inputChars int, rep reply) usage {
	out := utf8.RuneCountInString(rep.Content) + utf8.RuneCountInString(rep.Reasoning)
	for _, c := range rep.ToolCalls {
		out += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
	}
	u := usage{PromptTokens: (inputChars + 3) / 4, CompletionTokens: (out + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

type completionFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type completionToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function completionFunction `json:"function"`
}

type completionMessage struct {
	Role             string               `json:"role"`
	Content          *string              `json:"content"` // null when the model only calls tools, as OpenAI does
	ReasoningContent string               `json:"reasoning_content,omitempty"`
	ToolCalls        []completionToolCall `json:"tool_calls,omitempty"`
}

// writeCompletion renders a reply as a non-streaming chat.completion object.
func writeCompletion(w http.ResponseWriter, id, model string, rep reply, u usage) {
	msg := completionMessage{Role: "assistant", ReasoningContent: rep.Reasoning}
	if rep.Content != "" || len(rep.ToolCalls) == 0 {
		msg.Content = &rep.Content
	}
	finish := "stop"
	for _, c := range rep.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, completionToolCall{ID: c.ID, Type: "function",
			Function: completionFunction{Name: c.Name, Arguments: c.Arguments}})
		finish = "tool_calls"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": created, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   u,
	})
}
