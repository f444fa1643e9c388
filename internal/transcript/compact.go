package transcript

import (
	"fmt"
	"strings"

	"github.com/sapagent/sapagent/internal/store"
)

// Limits of what a summarisation request shows of each row: enough to say what happened.
const (
	renderTextTokens   = 1500
	renderArgsTokens   = 300
	renderResultTokens = 400
)

// MaxSummaryTokens bounds a stored summary: an eighth of the request budget, at most 2,000.
func MaxSummaryTokens(budget int) int { return min(2000, budget/8) }

// KeepTokens is what the turns kept after a compaction may fill: half of what the system prompt,
// tools (fixed) and the largest summary leave, so the window can grow for a few turns before the
// next compaction instead of compacting before every request.
func KeepTokens(budget, fixed int) int { return max(0, (budget-fixed-MaxSummaryTokens(budget))/2) }

// Split is a compaction plan: the older turns a summary should cover, and where the turns the
// model keeps seeing begin.
type Split struct {
	Older   [][]store.Message // the turns to summarise, oldest first, rows in seq order
	FromSeq int64             // first seq summarised
	Through int64             // last seq the summary will stand for (just before the kept turns)
	Kept    int               // turns kept
}

// Plan splits the transcript after coveredThrough into turns to summarise and the newest whole
// turns that fit keepTokens (at least the newest turn is kept). Older is empty when everything
// fits.
func Plan(history []store.Message, coveredThrough int64, keepTokens int) Split {
	turns := splitTurns(history, coveredThrough)
	keepFrom, used := len(turns), 0
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if i < len(turns)-1 {
			// Counted as Build sends it; a partial first turn is never kept (Build drops it).
			t = trimmed(t)
			if used+t.tokens() > keepTokens || !t.user && i == 0 {
				break
			}
		}
		used += t.tokens()
		keepFrom = i
	}
	var s Split
	s.Kept = len(turns) - keepFrom
	if keepFrom == 0 {
		return s
	}
	for _, t := range turns[:keepFrom] {
		if len(t.rows) > 0 {
			s.Older = append(s.Older, t.rows)
		}
	}
	if len(s.Older) > 0 {
		s.FromSeq = s.Older[0][0].Seq
	}
	s.Through = turns[keepFrom].seq - 1
	return s
}

// Render writes turns as plain text for a summarisation request; long texts are cut (the
// summary needs what happened, not every row of a table).
func Render(turn []store.Message) string {
	var b strings.Builder
	for _, m := range turn {
		switch m.Role {
		case "user":
			fmt.Fprintf(&b, "User: %s\n", Truncate(m.Content, renderTextTokens))
		case "assistant":
			if m.Content != "" {
				fmt.Fprintf(&b, "Assistant: %s\n", Truncate(m.Content, renderTextTokens))
			}
			for _, c := range toolCalls(m.Parts) {
				fmt.Fprintf(&b, "Assistant called %s(%s)\n", c.Function.Name, Truncate(c.Function.Arguments, renderArgsTokens))
			}
		case "tool":
			fmt.Fprintf(&b, "Tool result: %s\n", Truncate(m.Content, renderResultTokens))
		}
	}
	return b.String()
}

// Chunks joins rendered turns into pieces of at most maxTokens each, in order; a turn larger
// than maxTokens on its own is cut.
func Chunks(turns []string, maxTokens int) []string {
	var out []string
	var cur strings.Builder
	used := 0
	for _, t := range turns {
		n := Estimate(t) + 1
		if n > maxTokens {
			t = Truncate(t, maxTokens-1)
			n = Estimate(t) + 1
		}
		if used > 0 && used+n > maxTokens {
			out = append(out, cur.String())
			cur.Reset()
			used = 0
		}
		cur.WriteString(t)
		cur.WriteString("\n")
		used += n
	}
	if used > 0 {
		out = append(out, cur.String())
	}
	return out
}
