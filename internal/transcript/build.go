// Package transcript builds a model request's messages from the stored transcript: the system
// prompt with the latest summary, then the newest whole turns that fit the model's token budget.
// It never sends a tool result without the call it answers, nor a call without its result, and
// it always sends the newest turn (cut down, with a marker, when it alone is too large). Tool
// results of earlier turns are sent cut to OlderResultTokens.
package transcript

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sapagent/sapagent/internal/store"
)

// SummaryHeading introduces the latest summary in the system message.
const SummaryHeading = "## Earlier in this conversation (summary)\nOlder turns are not shown; this summary stands for them:"

// Request is what a model request is built from.
type Request struct {
	System  string // the system prompt
	Summary string // text of the latest summary; "" when there is none
	// CoveredThrough is the last seq the summary covers: History rows up to it are skipped.
	CoveredThrough int64
	// History is the stored transcript after the summary's coverage, in ascending seq order.
	History []store.Message
	// Earlier says older rows exist that History does not hold (it was loaded with a limit).
	Earlier bool
	// Budget is the most tokens the request may use (RequestBudget of the model's context).
	Budget int
	// ToolTokens is the estimate of the tools offered with the request (ToolsTokens).
	ToolTokens int
}

// Result is the request's messages and what was left out.
type Result struct {
	Messages []openai.ChatCompletionMessage
	// Tokens estimates the whole request: messages and tools. It exceeds Budget only when the
	// system prompt and tools alone leave no room for the newest turn's minimum.
	Tokens int
	// Omitted says older turns were left out: compaction is due.
	Omitted bool
	// Shrunk says the newest turn alone exceeded the budget and parts of it were cut.
	Shrunk bool
	// FirstSeq is the seq of the oldest row sent (0 when no row was sent).
	FirstSeq int64
}

// Build assembles the request's messages within r.Budget.
func Build(r Request) Result {
	system := r.System
	if r.Summary != "" {
		system += "\n\n" + SummaryHeading + "\n" + r.Summary
	}
	sys := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system}
	fixed := replyPriming + MessageTokens(sys) + r.ToolTokens

	turns := splitTurns(r.History, r.CoveredThrough)
	res := Result{Omitted: r.Earlier}
	if len(turns) > 1 && !turns[0].user {
		// Rows before the first user message are the tail of a turn whose start was not loaded.
		turns, res.Omitted = turns[1:], true
	}
	used, start := fixed, len(turns)
	for i := len(turns) - 1; i >= 0; i-- {
		if i < len(turns)-1 {
			turns[i] = trimmed(turns[i])
		}
		t := turns[i]
		if used+t.tokens() > r.Budget {
			if i < len(turns)-1 {
				break
			}
			turns[i], res.Shrunk = shrink(t, r.Budget-used), true
			t = turns[i]
		}
		used += t.tokens()
		start = i
	}
	if start > 0 {
		res.Omitted = true
	}
	res.Messages = append(make([]openai.ChatCompletionMessage, 0, 32), sys)
	for _, t := range turns[start:] {
		res.Messages = append(res.Messages, t.messages()...)
		if res.FirstSeq == 0 {
			res.FirstSeq = t.seq
		}
	}
	res.Tokens = used
	return res
}

// turn is a user message and the model steps that answer it; the first turn of a window may
// lack its user message (user false).
type turn struct {
	seq   int64
	user  bool
	lead  []openai.ChatCompletionMessage // the user message (and a marker of dropped steps)
	steps []step
	rows  []store.Message // the stored rows, for compaction
}

// step is one assistant message with the results of the calls it sends.
type step struct {
	assistant openai.ChatCompletionMessage
	results   []openai.ChatCompletionMessage
}

func (t turn) messages() []openai.ChatCompletionMessage {
	out := append([]openai.ChatCompletionMessage(nil), t.lead...)
	for _, s := range t.steps {
		out = append(out, s.assistant)
		out = append(out, s.results...)
	}
	return out
}

func (t turn) tokens() int {
	n := 0
	for _, m := range t.lead {
		n += MessageTokens(m)
	}
	for _, s := range t.steps {
		n += s.tokens()
	}
	return n
}

func (s step) tokens() int {
	n := MessageTokens(s.assistant)
	for _, r := range s.results {
		n += MessageTokens(r)
	}
	return n
}

// part is the subset of a stored message part the transcript reads.
type part struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

func toolCalls(raw json.RawMessage) []openai.ToolCall {
	var ps []part
	_ = json.Unmarshal(raw, &ps)
	var out []openai.ToolCall
	for _, p := range ps {
		if p.Type == "tool_call" && p.ID != "" {
			out = append(out, openai.ToolCall{ID: p.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: p.Name, Arguments: p.Arguments}})
		}
	}
	return out
}

// splitTurns groups stored rows into turns (a user message starts one) and pairs every
// assistant call with the tool rows that follow that assistant message: a call without a
// result (an interrupted step) is not sent, nor is a result whose call is not in its step.
// Summary and system rows, and rows the summary covers, are skipped.
func splitTurns(history []store.Message, coveredThrough int64) []turn {
	var turns []turn
	var cur *turn
	var open *store.Message // the assistant row whose results are being collected
	var results []store.Message
	closeStep := func() {
		if open == nil {
			return
		}
		cur.steps = appendStep(cur.steps, *open, results)
		open, results = nil, nil
	}
	for i := range history {
		m := history[i]
		if m.Seq <= coveredThrough {
			continue
		}
		switch m.Role {
		case "user":
			closeStep()
			turns = append(turns, turn{seq: m.Seq, user: true,
				lead: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: m.Content}}})
			cur = &turns[len(turns)-1]
		case "assistant", "tool":
			if cur == nil {
				turns = append(turns, turn{seq: m.Seq})
				cur = &turns[len(turns)-1]
			}
			if m.Role == "assistant" {
				closeStep()
				open = &history[i]
			} else if open != nil {
				results = append(results, m)
			}
		default:
			continue
		}
		cur.rows = append(cur.rows, m)
	}
	closeStep()
	return turns
}

// appendStep adds an assistant message with only its answered calls, followed by one result
// per call in call order; an assistant message left with neither text nor calls is dropped.
func appendStep(steps []step, a store.Message, rows []store.Message) []step {
	byID := map[string]store.Message{}
	for _, r := range rows {
		if _, dup := byID[r.ToolCallID]; !dup {
			byID[r.ToolCallID] = r
		}
	}
	s := step{assistant: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.Content}}
	seen := map[string]bool{}
	for _, c := range toolCalls(a.Parts) {
		r, ok := byID[c.ID]
		if !ok || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		s.assistant.ToolCalls = append(s.assistant.ToolCalls, c)
		s.results = append(s.results, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Content: r.Content})
	}
	if s.assistant.Content == "" && len(s.assistant.ToolCalls) == 0 {
		return steps
	}
	return append(steps, s)
}
