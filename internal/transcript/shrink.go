package transcript

import (
	"fmt"
	"sort"

	openai "github.com/sashabaranov/go-openai"
)

const (
	// OlderResultTokens is the most of a tool result sent again in turns after the one that
	// called it: the model read the whole result when it asked for it, and a later turn that needs
	// more calls the tool again. Long SAP reads would otherwise push out many turns.
	OlderResultTokens = 2000
	// minResultTokens is the least a tool result is cut to before older steps are dropped.
	minResultTokens = 256
	// minTextTokens is the least any text is cut to as a last resort.
	minTextTokens = 32
)

// shrink fits the newest turn into room tokens, in this order: cut the largest tool results
// (each to the same cap, never below minResultTokens); then drop the turn's oldest steps, keeping
// the newest; then cut every text of what is left, the user's message included. Cut text ends
// with a "[truncated …]" marker. When even that does not fit, the smallest form is returned.
func shrink(t turn, room int) turn {
	if out, ok := capResults(t, room, minResultTokens); ok {
		return out
	}
	full := t.steps
	for dropped := 1; dropped < len(full); dropped++ {
		c := t
		c.steps = full[dropped:]
		c.lead = withDroppedNote(t.lead, dropped)
		if out, ok := capResults(c, room, minResultTokens); ok {
			return out
		}
	}
	c := t
	if len(full) > 1 {
		c.steps = full[len(full)-1:]
		c.lead = withDroppedNote(t.lead, len(full)-1)
	}
	out, _ := capTexts(c, room)
	return out
}

// withDroppedNote appends to the user's message that earlier steps of the turn are not shown.
func withDroppedNote(lead []openai.ChatCompletionMessage, dropped int) []openai.ChatCompletionMessage {
	if len(lead) == 0 {
		return lead
	}
	out := append([]openai.ChatCompletionMessage(nil), lead...)
	out[0].Content += fmt.Sprintf("\n\n[truncated: %d earlier tool step(s) of this turn are left out to fit the model's context]", dropped)
	return out
}

// capResults cuts the turn's tool results to one common cap, the largest that fits room; ok is
// false when even floor-sized results do not fit.
func capResults(t turn, room, floor int) (turn, bool) {
	var texts []*string
	c := t
	c.steps = make([]step, len(t.steps))
	for i, s := range t.steps {
		c.steps[i] = step{assistant: s.assistant, results: append([]openai.ChatCompletionMessage(nil), s.results...)}
		for j := range c.steps[i].results {
			texts = append(texts, &c.steps[i].results[j].Content)
		}
	}
	return c, fitTexts(func() int { return c.tokens() }, texts, room, floor)
}

// capTexts cuts every text of the turn (user message, assistant texts, tool results) to a
// common cap, never below minTextTokens.
func capTexts(t turn, room int) (turn, bool) {
	c := t
	c.lead = append([]openai.ChatCompletionMessage(nil), t.lead...)
	var texts []*string
	for i := range c.lead {
		texts = append(texts, &c.lead[i].Content)
	}
	c.steps = make([]step, len(t.steps))
	for i, s := range t.steps {
		c.steps[i] = step{assistant: s.assistant, results: append([]openai.ChatCompletionMessage(nil), s.results...)}
		texts = append(texts, &c.steps[i].assistant.Content)
		for j := range c.steps[i].results {
			texts = append(texts, &c.steps[i].results[j].Content)
		}
	}
	return c, fitTexts(func() int { return c.tokens() }, texts, room, minTextTokens)
}

// fitTexts truncates the texts to the largest common cap (>= floor) that brings total() within
// room: the water level over the texts' sizes. ok reports whether it fits.
func fitTexts(total func() int, texts []*string, room, floor int) bool {
	if total() <= room {
		return true
	}
	sizes := make([]int, len(texts))
	sum := 0
	for i, s := range texts {
		sizes[i] = Estimate(*s)
		sum += sizes[i]
	}
	others := total() - sum // everything but the texts
	orig := make([]string, len(texts))
	for i, s := range texts {
		orig[i] = *s
	}
	apply := func(limit int) int {
		for i, s := range texts {
			*s = Truncate(orig[i], limit)
		}
		return total()
	}
	// Water level: the largest cap with others + Σ min(size, cap) <= room.
	sorted := append([]int(nil), sizes...)
	sort.Ints(sorted)
	avail, limit := room-others, 0
	for i, sz := range sorted {
		rest := len(sorted) - i
		if sz*rest <= avail {
			avail -= sz
			continue
		}
		limit = avail / rest
		break
	}
	if limit < floor {
		limit = floor
	}
	// Markers and run boundaries make the estimate a little non-additive: lower until it fits.
	for {
		if apply(limit) <= room {
			return true
		}
		if limit == floor {
			return false
		}
		limit = max(floor, limit*9/10)
	}
}

// trimmed cuts the tool results of a turn other than the newest to OlderResultTokens.
func trimmed(t turn) turn {
	var c *turn
	for i, s := range t.steps {
		for j, r := range s.results {
			// A result of no more bytes than the limit cannot estimate above it.
			if len(r.Content) <= OlderResultTokens || Estimate(r.Content) <= OlderResultTokens {
				continue
			}
			if c == nil {
				cp := t
				cp.steps = make([]step, len(t.steps))
				for k, st := range t.steps {
					cp.steps[k] = step{assistant: st.assistant, results: append([]openai.ChatCompletionMessage(nil), st.results...)}
				}
				c = &cp
			}
			c.steps[i].results[j].Content = Truncate(r.Content, OlderResultTokens)
		}
	}
	if c == nil {
		return t
	}
	return *c
}
