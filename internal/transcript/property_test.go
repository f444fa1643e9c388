package transcript

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/store"
)

// randomTranscript writes turns the way the conversation workflow does (user message, model
// steps with parallel calls and their results) plus the damage real transcripts carry:
// interrupted steps, stopped replies, stray and duplicate results, reused provider call IDs,
// huge results, summary rows.
func randomTranscript(r *rand.Rand) (*rows, string) {
	h := &rows{}
	turns := 1 + r.IntN(60)
	newest := ""
	for t := 0; t < turns; t++ {
		newest = fmt.Sprintf("question %d %s", t, strings.Repeat("detail ", r.IntN(200)))
		if r.IntN(50) == 0 {
			newest += strings.Repeat("pasted log line 42: ERROR ", r.IntN(20000))
		}
		h.user(newest)
		for s := r.IntN(5); s > 0; s-- {
			n := r.IntN(4)
			var ids []string
			for c := 0; c < n; c++ {
				id := fmt.Sprint("call_", c) // providers reuse these
				if r.IntN(2) == 0 {
					id = fmt.Sprintf("call_%d_%d_%d", t, s, c)
				}
				ids = append(ids, id)
			}
			text := ""
			if n == 0 || r.IntN(3) == 0 {
				text = strings.Repeat("thinking aloud ", r.IntN(100))
			}
			h.assistant(text, ids...)
			for _, id := range ids {
				switch r.IntN(12) {
				case 0: // interrupted: no result
				case 1:
					h.tool(id, "dup").tool(id, "dup again")
				case 2:
					h.tool(id, strings.Repeat(`{"MATNR":"000000000000004711","MAKTX":"Hex bolt"},`, r.IntN(8000)))
				default:
					h.tool(id, strings.Repeat("row ", r.IntN(300)))
				}
			}
			if r.IntN(10) == 0 {
				h.tool("stray", "orphan result")
			}
		}
		if r.IntN(15) == 0 {
			h.summary("a summary row", h.next()-1)
		}
	}
	return h, newest
}

func TestPropertyRequestsAreWellFormedAndWithinBudget(t *testing.T) {
	shrunk, omitted := 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		h, newest := randomTranscript(r)
		history := h.msgs
		earlier := false
		if r.IntN(3) == 0 { // a window loaded with a row limit
			cut := r.IntN(len(history))
			history, earlier = history[cut:], cut > 0
		}
		sys := "You are sapagent. " + strings.Repeat("rule ", r.IntN(400))
		tools := r.IntN(3000)
		budget := 1500 + r.IntN(40000)
		if r.IntN(5) == 0 {
			budget = 1 << 20
		}
		res := Build(Request{System: sys, Summary: strings.Repeat("summary ", r.IntN(300)), History: history,
			Earlier: earlier, Budget: budget, ToolTokens: tools})
		name := fmt.Sprintf("seed %d", seed)

		require.NoError(t, wellFormed(res.Messages), name)
		require.Equal(t, MessagesTokens(res.Messages)+tools, res.Tokens, name)
		fixed := replyPriming + MessageTokens(res.Messages[0]) + tools
		if fixed+600 <= budget {
			require.LessOrEqual(t, res.Tokens, budget, name)
		}
		if history[len(history)-1].Seq == h.msgs[len(h.msgs)-1].Seq && hasUser(history) {
			got := lastUser(res.Messages)
			require.True(t, strings.HasPrefix(got, newest[:min(len(newest), 200)]) ||
				strings.HasPrefix(newest, strings.SplitN(got, "\n[truncated", 2)[0]),
				"%s: the newest user message is sent (got %.80q)", name, got)
		}
		if earlier {
			require.True(t, res.Omitted, name)
		}
		if res.Shrunk {
			shrunk++
		}
		if res.Omitted {
			omitted++
		}
	}
	// The generator must reach the interesting paths, or the properties prove little.
	require.Greater(t, shrunk, 10)
	require.Greater(t, omitted, 100)
	t.Logf("of 400 transcripts: %d shrunk, %d left older turns out", shrunk, omitted)
}

func hasUser(h []store.Message) bool {
	for _, m := range h {
		if m.Role == "user" {
			return true
		}
	}
	return false
}

// Compaction plans keep the newest turn, cut at turn boundaries and cover every row before
// the kept turns.
func TestPropertyPlansCutAtTurnBoundaries(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		h, _ := randomTranscript(r)
		keep := 500 + r.IntN(20000)
		p := Plan(h.msgs, 0, keep)
		name := fmt.Sprintf("seed %d", seed)
		require.GreaterOrEqual(t, p.Kept, 1, name)
		if len(p.Older) == 0 {
			require.Zero(t, p.Through, name)
			continue
		}
		kept := h.msgs[p.Through:] // seqs are 1-based and consecutive
		require.Equal(t, "user", kept[0].Role, name)
		require.Equal(t, p.Older[0][0].Seq, p.FromSeq, name)
		for _, turn := range p.Older {
			for _, m := range turn {
				require.LessOrEqual(t, m.Seq, p.Through, name)
			}
		}
		res := Build(Request{System: "s", CoveredThrough: p.Through, History: h.msgs, Budget: 1 << 30})
		require.Equal(t, p.Through+1, res.FirstSeq, name)
	}
}

// After a compaction planned with KeepTokens, the next request holds every turn after the
// summary (even with the largest summary): the model is not left without recent turns, and
// compaction is not due again at once.
func TestPropertyAfterCompactionTheWindowFits(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 13))
		h, _ := randomTranscript(r)
		system := "You are sapagent. " + strings.Repeat("rule ", r.IntN(400))
		tools, budget := r.IntN(3000), 6000+r.IntN(40000)
		fixed := MessagesTokens([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}) + tools
		p := Plan(h.msgs, 0, KeepTokens(budget, fixed))
		if len(p.Older) == 0 {
			continue
		}
		summary := Truncate(strings.Repeat("The user read KNA1 and MARA. ", 2000), MaxSummaryTokens(budget))
		res := Build(Request{System: system, Summary: summary, CoveredThrough: p.Through, History: h.msgs, Budget: budget, ToolTokens: tools})
		name := fmt.Sprintf("seed %d", seed)
		require.False(t, res.Omitted, name)
		require.Equal(t, p.Through+1, res.FirstSeq, name)
		require.LessOrEqual(t, res.Tokens, budget, name)
	}
}
