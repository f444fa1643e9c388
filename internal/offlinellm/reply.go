package offlinellm

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode/utf8"
)

type toolCall struct {
	ID        string
	Name      string
	Arguments string
}

// reply is what the model "decides" to answer; streaming and non-streaming responses are both
// rendered from it, so they always carry the same text.
type reply struct {
	Reasoning  string
	Content    string
	ToolCalls  []toolCall
	Delay      time.Duration
	FailStatus int
}

// quoteLimit keeps replies to huge prompts short; the model quotes, it does not echo.
const quoteLimit = 200

// decide computes the deterministic reply to a request.
func (s *Server) decide(req *chatRequest) reply {
	msgs := req.Messages
	last := msgs[len(msgs)-1]
	text := lastUserText(msgs)
	out := reply{Delay: s.opts.TokenDelay}
	if req.ReasoningEffort != "" {
		out.Reasoning = defaultReasoning(text)
	}
	if asksForTitle(msgs) {
		out.Content = titleOf(text)
		return out
	}
	if asksForSummary(msgs) {
		out.Content = summaryOf(text)
		return out
	}
	switch last.Role {
	case "tool":
		// Rules never fire here, so a tool-calling rule cannot loop on its own result.
		out.Content = toolSummary(msgs)
		return out
	case "user":
		for i := range s.opts.Rules {
			r := &s.opts.Rules[i]
			if groups := r.re.FindStringSubmatch(text); groups != nil {
				return s.applyRule(out, r, groups, text, req)
			}
		}
	}
	out.Content = defaultReply(text)
	return out
}

func (s *Server) applyRule(out reply, r *Rule, groups []string, text string, req *chatRequest) reply {
	if r.TokenDelay != nil {
		out.Delay = r.TokenDelay.Duration
	}
	if r.FailStatus != 0 {
		out.FailStatus = r.FailStatus
		return out
	}
	if r.Reasoning != "" {
		out.Reasoning = expandGroups(r.Reasoning, groups, nil)
	}
	out.Content = expandGroups(r.Reply, groups, nil)
	offered := offeredTools(req)
	for j, tc := range r.ToolCalls {
		if !offered[tc.Name] {
			out.ToolCalls = nil
			out.Content = fmt.Sprintf("I would call the tool %s, but it is not available in this conversation.", tc.Name)
			return out
		}
		// The message count makes ids differ when a user repeats a request in one conversation.
		id := fmt.Sprintf("call_%08x%02d", hash(fmt.Sprintf("%d\x00%s\x00%s", len(req.Messages), text, tc.Name)), j)
		switch r.CallIDs {
		case CallIDsPerResponse:
			id = fmt.Sprintf("call_%d", j)
		case CallIDsNone:
			id = ""
		}
		out.ToolCalls = append(out.ToolCalls, toolCall{
			ID:        id,
			Name:      tc.Name,
			Arguments: expandGroups(tc.arguments(), groups, jsonEscape),
		})
	}
	if out.Content == "" && len(out.ToolCalls) == 0 {
		// A rule that only sets reasoning or a delay still gets an answer.
		out.Content = defaultReply(text)
	}
	return out
}

// defaultReply quotes the user and adds a fixed explanation, long enough to stream in many chunks.
func defaultReply(text string) string {
	return fmt.Sprintf("You said: %q. This is the offline model of sapagent: it answers deterministically, "+
		"without a network, so demos and tests behave the same every time. Configure OPENAI_API_KEY and "+
		"PRIMARY_MODEL to talk to a hosted model; the conversation, approvals and tools work the same way.",
		truncate(text, quoteLimit))
}

func defaultReasoning(text string) string {
	return "Thinking about: " + truncate(text, quoteLimit) + ". I should answer precisely and say what I am unsure of."
}

// toolSummary reports every tool result since the assistant's last turn (parallel calls come
// back as consecutive tool messages), oldest first.
func toolSummary(msgs []chatMessage) string {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == "tool" {
		start--
	}
	parts := make([]string, 0, len(msgs)-start)
	for _, m := range msgs[start:] {
		parts = append(parts, fmt.Sprintf("The tool %s returned: %s", toolName(msgs, m), truncate(m.text(), 200)))
	}
	return strings.Join(parts, " ")
}

// toolName finds the name of the tool whose result `result` is, via the assistant's tool calls.
func toolName(msgs []chatMessage, result chatMessage) string {
	if result.Name != "" {
		return result.Name
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == result.ToolCallID && c.Function.Name != "" {
				return c.Function.Name
			}
		}
	}
	if result.ToolCallID != "" {
		return result.ToolCallID
	}
	return "call"
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// asksForTitle recognises a title request: a system message that mentions a conversation title.
// The product's title activity sends one; the offline model answers with the first words.
func asksForTitle(msgs []chatMessage) bool {
	for _, m := range msgs {
		if m.Role == "system" && strings.Contains(strings.ToLower(m.text()), "conversation title") {
			return true
		}
	}
	return false
}

// titleOf is the first six words of the user's message.
func titleOf(text string) string {
	words := strings.Fields(text)
	if len(words) > 6 {
		words = words[:6]
	}
	return strings.Join(words, " ")
}
