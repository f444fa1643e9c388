package offlinellm

import (
	"fmt"
	"strings"
)

// Summarisation requests (context compaction) carry a system message that mentions a
// "conversation summary" and, as the user message, the previous summary and the turns to add:
//
//	Previous summary:
//	<text>
//
//	Turns to summarise:
//	User: …
//	Assistant: …
//	Assistant called <tool>(<arguments>)
//	Tool result: …
//
// The offline model answers with a deterministic summary built from those lines.
const (
	summaryPreviousHeader = "Previous summary:"
	summaryTurnsHeader    = "Turns to summarise:"
	summaryQuotes         = 8   // newest user requests quoted
	summaryQuoteRunes     = 80  // of each
	summaryCarryRunes     = 600 // of the previous summary
)

// asksForSummary recognises a summarisation request: its first message is a system message
// that mentions a conversation summary, and the user's message holds the turns to summarise (a
// summary inside an ordinary conversation's system prompt does not count).
func asksForSummary(msgs []chatMessage) bool {
	return msgs[0].Role == "system" && strings.Contains(strings.ToLower(msgs[0].text()), "conversation summary") &&
		strings.Contains(lastUserText(msgs), summaryTurnsHeader)
}

// summaryOf lists the user's requests (the newest quoted), the tools called, and the start of
// the previous summary; its length is bounded however long the input is.
func summaryOf(input string) string {
	previous, turns := "", input
	if i := strings.Index(input, summaryTurnsHeader); i >= 0 {
		previous, turns = input[:i], input[i+len(summaryTurnsHeader):]
	}
	previous = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(previous), summaryPreviousHeader))
	var requests, tools []string
	calls := map[string]int{}
	for _, line := range strings.Split(turns, "\n") {
		switch {
		case strings.HasPrefix(line, "User: "):
			requests = append(requests, strings.TrimSpace(strings.TrimPrefix(line, "User: ")))
		case strings.HasPrefix(line, "Assistant called "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "Assistant called "), "(")
			if calls[name] == 0 {
				tools = append(tools, name)
			}
			calls[name]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summary of %d earlier user request(s).", len(requests))
	if len(requests) > 0 {
		shown := requests[max(0, len(requests)-summaryQuotes):]
		quoted := make([]string, len(shown))
		for i, r := range shown {
			quoted[i] = fmt.Sprintf("%q", truncate(r, summaryQuoteRunes))
		}
		label := "The user asked"
		if len(shown) < len(requests) {
			label = "Most recently the user asked"
		}
		fmt.Fprintf(&b, " %s: %s.", label, strings.Join(quoted, "; "))
	}
	if len(tools) > 0 {
		used := make([]string, len(tools))
		for i, name := range tools {
			used[i] = fmt.Sprintf("%s (%d×)", name, calls[name])
		}
		fmt.Fprintf(&b, " Tools called: %s.", strings.Join(used, ", "))
	}
	if previous != "" {
		fmt.Fprintf(&b, " Before that: %s", truncate(previous, summaryCarryRunes))
	}
	return b.String()
}
