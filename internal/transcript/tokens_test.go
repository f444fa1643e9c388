package transcript

import (
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference counts measured with OpenAI's tokenizers (cl100k_base and o200k_base, the larger
// of the two, via tiktoken-go's offline encodings) for text like the product's: the estimate
// must never be lower.
func TestEstimateIsNotBelowRealTokenizers(t *testing.T) {
	for text, real := range map[string]int{
		`{"MANDT":"100","KUNNR":"0000001000","NAME1":"Becker Berlin","LAND1":"DE"}`: 27,
		"The quick brown fox jumps over the lazy dog.":                              10,
		"Bitte prüfen Sie die Kreditlimits aller Kunden im Buchungskreis 1000.":     21,
		"请检查公司代码1000中所有客户的信用额度":                                                     16,
	} {
		assert.GreaterOrEqual(t, Estimate(text), real, text)
		assert.LessOrEqual(t, Estimate(text), 2*real, "not wildly high: %s", text)
	}
	// Hex digests are the worst case (1.5 characters per token): within 3 %.
	sha := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	assert.GreaterOrEqual(t, Estimate(sha)*100, 43*97)
	assert.Zero(t, Estimate(""))
}

func TestTruncateFitsAndSaysSo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"KUNNR", "0000001000", `":"`, " ", "\n", "ü", "請", "{", "Becker"}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := r.IntN(3000); n > 0; n-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		limit := 40 + r.IntN(800)
		cut := Truncate(s, limit)
		if Estimate(s) <= limit {
			require.Equal(t, s, cut)
			continue
		}
		require.LessOrEqual(t, Estimate(cut), limit)
		require.Contains(t, cut, "[truncated: ")
		head, _, _ := strings.Cut(cut, "\n[truncated: ")
		require.True(t, strings.HasPrefix(s, head), "the cut keeps the start")
		require.True(t, len(head) == 0 || Estimate(s[:len(head)]) == Estimate(head))
	}
}

func TestRequestBudgetLeavesRoomForTheReply(t *testing.T) {
	assert.Equal(t, 32000-ReplyReserve, RequestBudget(32000))
	assert.Equal(t, 6000, RequestBudget(8000))
	assert.Equal(t, 128000-ReplyReserve, RequestBudget(128000))
}

func TestToolsTokensCountTheSchemas(t *testing.T) {
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "sap_read_table", Description: "Reads rows of a table.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"table": map[string]any{"type": "string"}}},
	}}}
	assert.Greater(t, ToolsTokens(tools), 20)
	assert.Zero(t, ToolsTokens(nil))
}
