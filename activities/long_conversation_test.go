package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/store"
	window "github.com/sapagent/sapagent/internal/transcript"
	"github.com/sapagent/sapagent/workflows"
)

// longConversation is what playing a long conversation against Postgres and the offline model
// measured.
type longConversation struct {
	turns, requests, compactions, summarised int
	largest, budget                          int
	newestMissing                            int
	windowTime                               time.Duration
	// The old loading (activities.transcript over ListMessages(…, 0, 1000)) on the same rows.
	oldLargest, oldNewestMissing int
}

// playLongConversation runs turns the way the conversation workflow does with the pieces of
// this package: before every model step the request is built from Postgres (latest summary and
// the newest rows after it); when a request left older turns out, CompactConversation runs
// before the next step. Turns read SAP tables with results of 2–32 KB.
func playLongConversation(t testing.TB, e *compactEnv, turns int) longConversation {
	r := rand.New(rand.NewPCG(2000, 2))
	run := longConversation{turns: turns, budget: e.budget}
	var newestSeq int64
	step := func(newest string) {
		start := time.Now()
		w := e.window()
		run.windowTime += time.Since(start)
		run.requests++
		run.largest = max(run.largest, w.Tokens)
		if !strings.HasPrefix(lastUserMessage(w.Messages), newest) {
			run.newestMissing++
		}
		if newestSeq > oldTranscriptRows {
			run.oldNewestMissing++ // the old loading read the oldest rows only
		}
		if w.Omitted {
			run.compactions++
			if res := e.compact(); res.Compacted {
				run.summarised += res.Turns
			}
		}
	}
	for n := 1; n <= turns; n++ {
		newest := fmt.Sprintf("message %d: check the customers of country %d", n, n%40)
		e.save(store.Message{Role: "user", Content: newest})
		newestSeq = e.seq
		for s := r.IntN(3); s > 0; s-- {
			step(newest)
			id := fmt.Sprintf("call_%d_%d", n, s)
			e.save(store.Message{Role: "assistant", Parts: assistantParts("", 0, "", []workflows.ToolCall{{ID: id, Name: "sap_read_table", Arguments: `{"table":"KNA1"}`}}, nil)})
			size := 2<<10 + r.IntN(6<<10)
			if r.IntN(8) == 0 {
				size = ModelToolOutput
			}
			e.save(store.Message{Role: "tool", ToolCallID: id, Content: strings.Repeat(`{"KUNNR":"0000001000","LAND1":"DE"},`, size/36)})
		}
		step(newest)
		answer := fmt.Sprintf("Country %d has %d customers.", n%40, n)
		e.save(store.Message{Role: "assistant", Content: answer, Parts: assistantParts("", 0, answer, nil, nil)})
	}
	e.flush()
	// The old request grew with every row up to the 1,000th: its largest is the last.
	ctx := context.Background()
	agent, err := e.a.Store.GetAgent(ctx, e.agent)
	require.NoError(t, err)
	conns, err := e.a.Store.ListConnections(ctx, agent.WorkspaceID)
	require.NoError(t, err)
	old, err := e.a.Store.ListMessages(ctx, e.agent, 0, oldTranscriptRows)
	require.NoError(t, err)
	require.NoError(t, e.a.expandStoredOutputs(ctx, e.agent, old))
	run.oldLargest = window.MessagesTokens(oldRequest(e.a.systemPrompt(context.Background(), agent.WorkspaceID, conns), old)) +
		window.ToolsTokens(e.a.modelTools(len(conns)))
	return run
}

// Every request of a long conversation stays within the budget and carries the newest message.
func TestALongConversationStaysWithinTheBudget(t *testing.T) {
	e := newCompactEnv(t)
	run := playLongConversation(t, e, 300)
	require.LessOrEqual(t, run.largest, run.budget)
	require.Zero(t, run.newestMissing)
	require.Greater(t, run.compactions, 10)
	require.Greater(t, run.oldLargest, run.budget, "the old loading overflowed the same budget")
	require.Greater(t, run.oldNewestMissing, 0, "and lost the newest message")
}

// BenchmarkTwoThousandTurnConversation plays 2,000 turns against Postgres and the offline
// model and reports the largest request against the budget of the default 32,000-token
// context, with two SAP connections (their system prompt and tools count too).
func BenchmarkTwoThousandTurnConversation(b *testing.B) {
	var run longConversation
	for i := 0; i < b.N; i++ {
		e := newCompactEnvWith(b, llm.DefaultContextTokens, 2)
		run = playLongConversation(b, e, 2000)
	}
	require.LessOrEqual(b, run.largest, run.budget)
	b.ReportMetric(float64(run.budget), "budget_tokens")
	b.ReportMetric(float64(run.largest), "largest_request_tokens")
	b.ReportMetric(float64(run.largest)/float64(run.budget), "largest/budget")
	b.ReportMetric(float64(run.newestMissing), "newest_missing")
	b.ReportMetric(float64(run.oldLargest)/float64(run.budget), "old_largest/budget")
	b.ReportMetric(float64(run.oldNewestMissing), "old_newest_missing")
	b.ReportMetric(float64(run.requests), "requests")
	b.ReportMetric(float64(run.compactions), "compactions")
	b.ReportMetric(float64(run.windowTime.Microseconds())/float64(run.requests), "window_µs/request")
}

// oldRequest is the request GenerateReply built before context windows (its transcript
// function, kept here as the baseline): every loaded row, calls sent only with a result.
func oldRequest(system string, history []store.Message) []openai.ChatCompletionMessage {
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
			for _, p := range parseParts(m.Parts) {
				if p.Type == "tool_call" && answered[p.ID] {
					msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: p.ID, Type: openai.ToolTypeFunction,
						Function: openai.FunctionCall{Name: p.Name, Arguments: p.Arguments}})
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

// oldTranscriptRows is how many rows the model activity used to load: the oldest ones.
const oldTranscriptRows = 1000
