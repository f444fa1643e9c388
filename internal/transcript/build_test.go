package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/store"
)

// rows builds a transcript with consecutive seqs.
type rows struct{ msgs []store.Message }

func (r *rows) next() int64 { return int64(len(r.msgs) + 1) }

func (r *rows) user(text string) *rows {
	r.msgs = append(r.msgs, store.Message{Seq: r.next(), Role: "user", Content: text})
	return r
}

func (r *rows) assistant(text string, callIDs ...string) *rows {
	var ps []map[string]string
	for _, id := range callIDs {
		ps = append(ps, map[string]string{"type": "tool_call", "id": id, "name": "sap_read_table", "arguments": `{"table":"KNA1"}`})
	}
	raw, _ := json.Marshal(ps)
	r.msgs = append(r.msgs, store.Message{Seq: r.next(), Role: "assistant", Content: text, Parts: raw})
	return r
}

func (r *rows) tool(id, content string) *rows {
	r.msgs = append(r.msgs, store.Message{Seq: r.next(), Role: "tool", ToolCallID: id, Content: content})
	return r
}

func (r *rows) summary(text string, through int64) *rows {
	r.msgs = append(r.msgs, store.SummaryMessage([16]byte{}, [16]byte{}, r.next(), text, "", store.SummaryCoverage{ThroughSeq: through}))
	return r
}

// checkWellFormed asserts what every provider requires (wellFormed).
func checkWellFormed(t *testing.T, msgs []openai.ChatCompletionMessage) {
	t.Helper()
	require.NoError(t, wellFormed(msgs))
}

// wellFormed checks the system message comes first and alone, each assistant call is answered
// by exactly one tool message right after it, and no tool message lacks its call.
func wellFormed(msgs []openai.ChatCompletionMessage) error {
	if len(msgs) == 0 || msgs[0].Role != openai.ChatMessageRoleSystem {
		return fmt.Errorf("the request does not start with the system message")
	}
	for i := 1; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case openai.ChatMessageRoleSystem:
			return fmt.Errorf("a second system message at %d", i)
		case openai.ChatMessageRoleTool:
			return fmt.Errorf("tool message %s at %d without the assistant call right before it", m.ToolCallID, i)
		case openai.ChatMessageRoleAssistant:
		default:
			continue
		}
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return fmt.Errorf("empty assistant message at %d", i)
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			if want[c.ID] {
				return fmt.Errorf("call %s twice in one message", c.ID)
			}
			want[c.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == openai.ChatMessageRoleTool; j++ {
			if !want[msgs[j].ToolCallID] {
				return fmt.Errorf("result %s at %d answers no open call of the assistant message before it", msgs[j].ToolCallID, j)
			}
			delete(want, msgs[j].ToolCallID)
		}
		if len(want) > 0 {
			return fmt.Errorf("calls sent without their results at %d", i)
		}
		i = j - 1
	}
	return nil
}

func lastUser(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

func TestSendsOnlyAnsweredToolCalls(t *testing.T) {
	h := (&rows{}).user("hi").assistant("", "c1", "c2").tool("c1", "[]")
	res := Build(Request{System: "system prompt", History: h.msgs, Budget: 10000})
	require.Len(t, res.Messages, 4) // system, user, assistant, tool
	require.Len(t, res.Messages[2].ToolCalls, 1, "the unanswered call (interrupted step) is left out")
	assert.Equal(t, "c1", res.Messages[2].ToolCalls[0].ID)
	assert.False(t, res.Omitted)
	assert.Equal(t, int64(1), res.FirstSeq)
	checkWellFormed(t, res.Messages)
}

// The finding of issue 10: after 500 turns the model saw "message 499" as the newest message.
func TestTheNewestMessageIsSentAfterManyTurns(t *testing.T) {
	h := &rows{}
	for i := 1; i <= 2000; i++ {
		h.user(fmt.Sprintf("message %d", i)).assistant(fmt.Sprintf("answer %d", i))
	}
	h.user("message 2001")
	res := Build(Request{System: "system prompt", History: h.msgs, Budget: 2000})
	assert.Equal(t, "message 2001", lastUser(res.Messages))
	assert.True(t, res.Omitted, "older turns were left out")
	assert.LessOrEqual(t, res.Tokens, 2000)
	assert.Equal(t, MessagesTokens(res.Messages), res.Tokens, "the estimate is the request's")
	// Only whole turns: the oldest message sent is a user message, and turns are contiguous.
	require.Equal(t, openai.ChatMessageRoleUser, res.Messages[1].Role)
	first := res.Messages[1].Content
	var n int
	fmt.Sscanf(first, "message %d", &n)
	assert.Equal(t, int64(2*n-1), res.FirstSeq)
	assert.Len(t, res.Messages, 1+2*(2001-n)+1)
	checkWellFormed(t, res.Messages)
}

func TestToolsAndSummaryCountAgainstTheBudget(t *testing.T) {
	h := &rows{}
	for i := 1; i <= 50; i++ {
		h.user(fmt.Sprintf("message %d", i)).assistant(strings.Repeat("word ", 40))
	}
	plain := Build(Request{System: "s", History: h.msgs, Budget: 3000})
	withTools := Build(Request{System: "s", History: h.msgs, Budget: 3000, ToolTokens: 1000})
	assert.Less(t, len(withTools.Messages), len(plain.Messages))
	assert.LessOrEqual(t, withTools.Tokens, 3000)
	assert.Equal(t, MessagesTokens(withTools.Messages)+1000, withTools.Tokens)

	sum := Build(Request{System: "s", Summary: "The user asked about KNA1.", History: h.msgs, Budget: 3000})
	assert.Contains(t, sum.Messages[0].Content, "The user asked about KNA1.")
	assert.Contains(t, sum.Messages[0].Content, SummaryHeading)
	assert.LessOrEqual(t, sum.Tokens, 3000)
}

func TestRowsTheSummaryCoversAndSummaryRowsAreNotSent(t *testing.T) {
	h := (&rows{}).user("old question").assistant("old answer").summary("they talked", 2).
		user("new question").assistant("new answer")
	res := Build(Request{System: "s", Summary: "they talked", CoveredThrough: 2, History: h.msgs, Budget: 10000})
	require.Len(t, res.Messages, 3)
	assert.Equal(t, "new question", res.Messages[1].Content)
	assert.Equal(t, int64(4), res.FirstSeq)
	assert.False(t, res.Omitted)
}

// A window loaded with a row limit may start in the middle of a turn: its tail is not sent
// (the results there would answer calls the request does not hold).
func TestAWindowStartingMidTurnDropsThatTurn(t *testing.T) {
	h := (&rows{}).user("q1").assistant("", "a", "b").tool("a", "1").tool("b", "2").assistant("done").
		user("q2").assistant("", "c").tool("c", "3").assistant("ok")
	res := Build(Request{System: "s", History: h.msgs[3:], Budget: 10000})
	assert.Equal(t, "q2", res.Messages[1].Content)
	assert.True(t, res.Omitted)
	checkWellFormed(t, res.Messages)

	// A window holding only the tail of one turn still sends what pairs up.
	res = Build(Request{System: "s", History: h.msgs[8:], Budget: 10000})
	checkWellFormed(t, res.Messages)
	assert.Equal(t, "ok", res.Messages[len(res.Messages)-1].Content)
}

// Providers reuse call IDs across turns ("call_0"): a result answers only the call of its own
// step, so an interrupted call is never paired with an older result of the same ID.
func TestResultsPairOnlyWithinTheirStep(t *testing.T) {
	h := (&rows{}).user("q1").assistant("", "call_0").tool("call_0", "old").assistant("fine").
		user("q2").assistant("", "call_0"). // interrupted: no result
		tool("stray", "orphan").
		user("q3")
	res := Build(Request{System: "s", History: h.msgs, Budget: 10000})
	checkWellFormed(t, res.Messages)
	calls := 0
	for _, m := range res.Messages {
		calls += len(m.ToolCalls)
		assert.NotEqual(t, "orphan", m.Content)
	}
	assert.Equal(t, 1, calls)
}

func TestDuplicateResultsAreSentOnce(t *testing.T) {
	h := (&rows{}).user("q").assistant("", "c1").tool("c1", "first").tool("c1", "again")
	res := Build(Request{System: "s", History: h.msgs, Budget: 10000})
	checkWellFormed(t, res.Messages)
	assert.Equal(t, "first", res.Messages[3].Content)
	assert.Len(t, res.Messages, 4)
}

func TestAHugeToolResultInTheNewestTurnIsCutWithAMarker(t *testing.T) {
	big := strings.Repeat(`{"KUNNR":"0000001000","NAME1":"Becker Berlin"},`, 4000) // ~190 KB
	h := (&rows{}).user("old").assistant("old answer").
		user("read KNA1").assistant("", "c1", "c2").tool("c1", big).tool("c2", `{"rows":3}`)
	res := Build(Request{System: "s", History: h.msgs, Budget: 4000})
	checkWellFormed(t, res.Messages)
	assert.True(t, res.Shrunk)
	assert.True(t, res.Omitted)
	assert.LessOrEqual(t, res.Tokens, 4000)
	assert.Equal(t, "read KNA1", lastUser(res.Messages))
	var cut string
	for _, m := range res.Messages {
		if m.ToolCallID == "c1" {
			cut = m.Content
		}
		if m.ToolCallID == "c2" {
			assert.Equal(t, `{"rows":3}`, m.Content, "small results stay whole")
		}
	}
	assert.Contains(t, cut, "[truncated: ")
	assert.True(t, strings.HasPrefix(cut, `{"KUNNR":"0000001000"`))
	assert.Greater(t, Estimate(cut), 2000, "the result gets the room there is")
}

func TestALongTurnDropsItsOldestStepsFirst(t *testing.T) {
	h := (&rows{}).user("migrate everything")
	for i := 0; i < 25; i++ {
		id := fmt.Sprint("c", i)
		h.assistant(fmt.Sprint("step ", i), id).tool(id, strings.Repeat("x1 ", 2000))
	}
	res := Build(Request{System: "s", History: h.msgs, Budget: 3000})
	checkWellFormed(t, res.Messages)
	assert.LessOrEqual(t, res.Tokens, 3000)
	assert.True(t, strings.HasPrefix(res.Messages[1].Content, "migrate everything"))
	assert.Contains(t, res.Messages[1].Content, "earlier tool step(s) of this turn are left out")
	last := res.Messages[len(res.Messages)-1]
	assert.Equal(t, "c24", last.ToolCallID, "the newest step stays")
}

func TestAHugeUserMessageIsCutNotLost(t *testing.T) {
	h := (&rows{}).user(strings.Repeat("Please check this invoice. ", 20000))
	res := Build(Request{System: "s", History: h.msgs, Budget: 2000})
	require.Len(t, res.Messages, 2)
	assert.True(t, strings.HasPrefix(res.Messages[1].Content, "Please check this invoice."))
	assert.Contains(t, res.Messages[1].Content, "[truncated: ")
	assert.LessOrEqual(t, res.Tokens, 2000)
}

// When the system prompt and tools alone exceed the budget, the newest user message is still
// sent in its smallest form and the estimate says the request is over.
func TestABudgetTooSmallForTheFixedPartStillSendsTheQuestion(t *testing.T) {
	h := (&rows{}).user("old").assistant("old").user("what now?")
	res := Build(Request{System: strings.Repeat("rules ", 2000), History: h.msgs, Budget: 500, ToolTokens: 100})
	assert.Equal(t, "what now?", lastUser(res.Messages))
	assert.Greater(t, res.Tokens, 500)
	checkWellFormed(t, res.Messages)
}

func TestEmptyHistory(t *testing.T) {
	res := Build(Request{System: "s", Budget: 100})
	require.Len(t, res.Messages, 1)
	assert.Zero(t, res.FirstSeq)
	assert.False(t, res.Omitted)
}
