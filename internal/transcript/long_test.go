package transcript

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/store"
)

// longRun is what a simulated long conversation measured.
type longRun struct {
	budget, largest, requests, compactions int
	newestMissing                          int // requests whose newest user message was not sent
	buildTime                              time.Duration
	// The old loading (oldest 1,000 rows, no budget) over the same transcript.
	oldLargest, oldNewestMissing int
}

// simulateLongConversation plays turns the way the conversation workflow runs them: a user
// message, up to three model steps with SAP tool calls whose results are 2–32 KB, a final
// answer. Before every model step the request is built from the latest summary and the newest
// 1,000 rows after it; after a turn that left turns out, compaction replaces the older turns with
// a summary row of the largest size allowed. The old loading is measured on the same rows.
func simulateLongConversation(turns int) longRun {
	r := rand.New(rand.NewPCG(2000, 1))
	system := "You are sapagent, an assistant for SAP landscapes. " + strings.Repeat("Follow the rules of the workspace. ", 100)
	const toolTokens = 6000 // the product's tools with two connections estimate at about 5,700
	run := longRun{budget: RequestBudget(32000)}
	h := &rows{}
	var summary string
	var covered int64
	maxSummary := MaxSummaryTokens(run.budget)
	var newestSeq int64
	request := func(newest string) {
		var after []store.Message
		for i := len(h.msgs) - 1; i >= 0 && h.msgs[i].Seq > covered && len(after) < 1000; i-- {
			after = append(after, h.msgs[i])
		}
		for i, j := 0, len(after)-1; i < j; i, j = i+1, j-1 {
			after[i], after[j] = after[j], after[i]
		}
		start := time.Now()
		res := Build(Request{System: system, Summary: summary, CoveredThrough: covered, History: after,
			Earlier: after[0].Seq > covered+1, Budget: run.budget, ToolTokens: toolTokens})
		run.buildTime += time.Since(start)
		run.requests++
		run.largest = max(run.largest, res.Tokens)
		if !strings.HasPrefix(lastUser(res.Messages), newest) {
			run.newestMissing++
		}
		if newestSeq > 1000 { // the old loading read rows 1–1,000 only
			run.oldNewestMissing++
		}
		if res.Omitted {
			run.compactions++ // due after this step; the workflow runs it before the next one
			fixed := MessagesTokens(res.Messages[:1]) - Estimate(res.Messages[0].Content) + Estimate(system) + toolTokens
			p := Plan(after, covered, KeepTokens(run.budget, fixed))
			if len(p.Older) > 0 {
				covered = p.Through
				summary = strings.Repeat("The user and the assistant read KNA1 and MARA. ", maxSummary/12)
				summary = Truncate(summary, maxSummary)
				h.summary(summary, covered)
			}
		}
	}
	for t := 1; t <= turns; t++ {
		newest := fmt.Sprintf("message %d: %s", t, strings.Repeat("please check the customers ", r.IntN(30)))
		h.user(newest)
		newestSeq = h.msgs[len(h.msgs)-1].Seq
		for s := r.IntN(4); s > 0; s-- {
			request(newest)
			id := fmt.Sprintf("call_%d_%d", t, s)
			h.assistant("", id)
			size := 2<<10 + r.IntN(6<<10)
			if r.IntN(8) == 0 {
				size = 32 << 10 // the largest output shown in full (activities.ModelToolOutput)
			}
			h.tool(id, strings.Repeat(`{"KUNNR":"0000001000","NAME1":"Becker"},`, size/41))
		}
		request(newest)
		h.assistant(fmt.Sprintf("Answer %d. ", t) + strings.Repeat("The table holds customers. ", r.IntN(40)))
	}
	// The old request grew with every row up to the 1,000th: its largest is the last.
	run.oldLargest = MessagesTokens(oldTranscript(system, h.msgs[:1000])) + toolTokens
	return run
}

// A 2,000-turn conversation with tool calls and large results: every request stays within the
// budget and carries the newest message; the old loading exceeded it and lost the newest message.
func TestTwoThousandTurnsStayWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 2,000 turns")
	}
	run := simulateLongConversation(2000)
	require.LessOrEqual(t, run.largest, run.budget)
	require.Zero(t, run.newestMissing)
	require.Greater(t, run.compactions, 10)
	require.Greater(t, run.oldLargest, run.budget, "the baseline is the problem being fixed")
	require.Greater(t, run.oldNewestMissing, 0)
	t.Logf("%d requests: largest %d of %d tokens (%.2f); %d compactions; old loading: largest %d (%.1fx the budget), newest message missing in %d",
		run.requests, run.largest, run.budget, float64(run.largest)/float64(run.budget), run.compactions,
		run.oldLargest, float64(run.oldLargest)/float64(run.budget), run.oldNewestMissing)
}

// BenchmarkTwoThousandTurns reports the largest request of a 2,000-turn conversation against
// the budget, with the old loading (oldest 1,000 rows, no budget) measured in the same run.
func BenchmarkTwoThousandTurns(b *testing.B) {
	var run longRun
	for i := 0; i < b.N; i++ {
		run = simulateLongConversation(2000)
	}
	b.ReportMetric(float64(run.budget), "budget_tokens")
	b.ReportMetric(float64(run.largest), "largest_request_tokens")
	b.ReportMetric(float64(run.largest)/float64(run.budget), "largest/budget")
	b.ReportMetric(float64(run.oldLargest)/float64(run.budget), "old_largest/budget")
	b.ReportMetric(float64(run.newestMissing), "newest_missing")
	b.ReportMetric(float64(run.oldNewestMissing), "old_newest_missing")
	b.ReportMetric(float64(run.compactions), "compactions")
	b.ReportMetric(float64(run.requests), "requests")
	b.ReportMetric(float64(run.buildTime.Microseconds())/float64(run.requests), "build_µs/request")
}

// oldTranscript is the request the product built before windows (activities.transcript): every
// loaded row, calls sent only when some row answers them.
func oldTranscript(system string, history []store.Message) []openai.ChatCompletionMessage {
	answered := map[string]bool{}
	for _, m := range history {
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
		}
	}
	out := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}
	for _, m := range history {
		switch m.Role {
		case "user":
			out = append(out, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
		case "assistant":
			msg := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
			for _, c := range toolCalls(m.Parts) {
				if answered[c.ID] {
					msg.ToolCalls = append(msg.ToolCalls, c)
				}
			}
			if msg.Content != "" || len(msg.ToolCalls) > 0 {
				out = append(out, msg)
			}
		case "tool":
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: m.ToolCallID, Content: m.Content})
		}
	}
	return out
}
