package transcript

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// Token accounting is an estimate made without a tokenizer or a network. It counts runs of
// characters the way BPE tokenizers split them: a run of letters costs one token per 4 letters, a
// run of digits one per 3 (tokenizers group at most 3 digits), a run of punctuation one per 2, a
// line break one, and every non-ASCII character one. Measured against OpenAI's cl100k_base and
// o200k_base encodings on the product's own content (system prompt, tool schemas, SAP table rows
// and schemas, ABAP, Go, English and German prose, CJK, UUIDs) it is 1.01–1.8 times the real
// count; a bare hex digest, the worst case, is 0.98 (docs/context.md). A flat bytes/3.5
// undercounts SAP table rows by a fifth and hex IDs by half.
const (
	lettersPerToken     = 4
	digitsPerToken      = 3
	punctuationPerToken = 2

	messageOverhead  = 4  // role and separators of each message
	toolCallOverhead = 10 // type, id and function wrapper of each call
	replyPriming     = 3  // the assistant header the reply starts with

	// ReplyReserve is the most of a model's context kept free for its reply.
	ReplyReserve = 4096
)

// Estimate returns a conservative token count of s.
func Estimate(s string) int {
	n, kind, run := 0, classSpace, 0
	for i := 0; i < len(s); i++ {
		k := classes[s[i]]
		if k == classContinuation {
			continue
		}
		if k != kind {
			n += runTokens(kind, run)
			kind, run = k, 0
		}
		switch k {
		case classOther, classNewline:
			n++
		case classLetter, classDigit, classPunct:
			run++
		}
	}
	return n + runTokens(kind, run)
}

// Byte classes of the estimate; classOther starts a non-ASCII character.
const (
	classSpace uint8 = iota
	classLetter
	classDigit
	classPunct
	classNewline
	classOther
	classContinuation // a UTF-8 continuation byte
)

var classes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0xC0:
			t[c] = classOther
		case c >= 0x80:
			t[c] = classContinuation
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = classLetter
		case c >= '0' && c <= '9':
			t[c] = classDigit
		case c == '\n':
			t[c] = classNewline
		case c == ' ', c == '\t', c == '\r':
			t[c] = classSpace
		default:
			t[c] = classPunct
		}
	}
	return t
}()

func runTokens(kind uint8, run int) int {
	switch kind {
	case classLetter:
		return (run + lettersPerToken - 1) / lettersPerToken
	case classDigit:
		return (run + digitsPerToken - 1) / digitsPerToken
	case classPunct:
		return (run + punctuationPerToken - 1) / punctuationPerToken
	}
	return 0
}

// prefix returns the longest prefix of s (cut on a character boundary) estimated at no more
// than limit tokens.
func prefix(s string, limit int) string {
	closed, kind, run := 0, classSpace, 0
	for i := 0; i < len(s); i++ {
		k := classes[s[i]]
		if k == classContinuation {
			continue
		}
		c, kd, r := closed, kind, run
		if k != kd {
			c += runTokens(kd, r)
			kd, r = k, 0
		}
		switch k {
		case classOther, classNewline:
			c++
		case classLetter, classDigit, classPunct:
			r++
		}
		if c+runTokens(kd, r) > limit {
			return s[:i]
		}
		closed, kind, run = c, kd, r
	}
	return s
}

// MessageTokens estimates one request message, tool calls included.
func MessageTokens(m openai.ChatCompletionMessage) int {
	n := messageOverhead + Estimate(m.Content) + Estimate(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += toolCallOverhead + Estimate(c.ID) + Estimate(c.Function.Name) + Estimate(c.Function.Arguments)
	}
	return n
}

// MessagesTokens estimates a whole request's messages (with the reply's priming).
func MessagesTokens(msgs []openai.ChatCompletionMessage) int {
	n := replyPriming
	for _, m := range msgs {
		n += MessageTokens(m)
	}
	return n
}

// ToolsTokens estimates the tool definitions a request offers, from their JSON (providers render
// them more compactly, so this errs high).
func ToolsTokens(tools []openai.Tool) int {
	if len(tools) == 0 {
		return 0
	}
	raw, _ := json.Marshal(tools)
	return Estimate(string(raw))
}

// RequestBudget is the part of a model's context a request may fill: the rest, up to
// ReplyReserve or a quarter of small contexts, stays free for the reply.
func RequestBudget(contextTokens int) int {
	return contextTokens - min(ReplyReserve, contextTokens/4)
}

// Truncate cuts s to at most maxTokens (estimated), marker included, and says so in the text.
func Truncate(s string, maxTokens int) string {
	total := Estimate(s)
	if total <= maxTokens {
		return s
	}
	marker := func(kept int) string {
		return fmt.Sprintf("\n[truncated: %d of %d bytes shown to fit the model's context]", kept, len(s))
	}
	room := maxTokens - Estimate(marker(len(s)))
	if room < 0 {
		room = 0
	}
	head := prefix(s, room)
	return head + marker(len(head))
}
