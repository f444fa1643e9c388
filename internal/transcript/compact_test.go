package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanSummarisesWhatDoesNotFitAndKeepsWholeTurns(t *testing.T) {
	h := &rows{}
	for i := 1; i <= 40; i++ {
		h.user(fmt.Sprintf("message %d", i)).assistant("", fmt.Sprint("c", i)).tool(fmt.Sprint("c", i), strings.Repeat("row ", 50)).assistant("done")
	}
	p := Plan(h.msgs, 0, 1000)
	require.NotEmpty(t, p.Older)
	assert.Equal(t, int64(1), p.FromSeq)
	assert.Equal(t, 40, len(p.Older)+p.Kept)
	assert.Equal(t, int64(4*len(p.Older)), p.Through, "the summary stands for whole turns")
	assert.Equal(t, "user", h.msgs[p.Through].Role)
	kept := Build(Request{System: "", CoveredThrough: p.Through, History: h.msgs, Budget: 1 << 20})
	assert.LessOrEqual(t, kept.Tokens-MessagesTokens(kept.Messages[:1]), 1000)

	// A later plan starts after the previous summary's coverage.
	next := Plan(h.msgs, p.Through, 300)
	assert.Equal(t, p.Through+1, next.FromSeq)

	// Everything fits: nothing to summarise.
	none := Plan(h.msgs, 0, 1<<20)
	assert.Empty(t, none.Older)
	assert.Equal(t, 40, none.Kept)
}

func TestPlanAlwaysKeepsTheNewestTurn(t *testing.T) {
	h := (&rows{}).user("q1").assistant("a1").user(strings.Repeat("huge ", 10000))
	p := Plan(h.msgs, 0, 10)
	assert.Equal(t, 1, p.Kept)
	assert.Equal(t, int64(2), p.Through)
	require.Len(t, p.Older, 1)
	assert.Len(t, p.Older[0], 2)
}

func TestRenderShowsWhatHappenedInShortForm(t *testing.T) {
	h := (&rows{}).user("read KNA1").assistant("Reading.", "c1").tool("c1", strings.Repeat(`{"KUNNR":"1000"},`, 5000)).assistant("Found 5000 customers.")
	text := Render(h.msgs)
	assert.Contains(t, text, "User: read KNA1\n")
	assert.Contains(t, text, "Assistant: Reading.\n")
	assert.Contains(t, text, `Assistant called sap_read_table({"table":"KNA1"})`)
	assert.Contains(t, text, "Tool result: {\"KUNNR\"")
	assert.Contains(t, text, "[truncated: ")
	assert.Contains(t, text, "Assistant: Found 5000 customers.\n")
	assert.Less(t, Estimate(text), 1000)
}

func TestChunksStayWithinTheirBudget(t *testing.T) {
	var turns []string
	for i := 0; i < 100; i++ {
		turns = append(turns, fmt.Sprintf("User: message %d %s\n", i, strings.Repeat("word ", i*10)))
	}
	turns = append(turns, strings.Repeat("enormous ", 20000))
	chunks := Chunks(turns, 2000)
	require.Greater(t, len(chunks), 5)
	joined := strings.Join(chunks, "")
	for i := 0; i < 100; i++ {
		assert.Contains(t, joined, fmt.Sprintf("User: message %d ", i), "every turn is in some chunk, in order")
	}
	for _, c := range chunks {
		assert.LessOrEqual(t, Estimate(c), 2000)
	}
	assert.Contains(t, chunks[len(chunks)-1], "[truncated: ")
	assert.Empty(t, Chunks(nil, 100))
}
