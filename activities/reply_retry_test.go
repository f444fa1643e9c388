package activities

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// A retry of a reply that was already stored (its attempt's result was lost with the worker)
// returns the stored reply with its call IDs: it neither asks the model again nor mints new IDs
// that would leave the stored calls without results. Provider IDs (call_0 in every response
// here) are replaced by the product's own.
func TestARetriedReplyReturnsWhatIsStored(t *testing.T) {
	e := newCompactEnv(t)
	var calls atomic.Int32
	model := offlinellm.New(offlinellm.Options{Rules: []offlinellm.Rule{{Name: "list", Match: `^list notes$`, CallIDs: offlinellm.CallIDsPerResponse,
		ToolCalls: []offlinellm.ToolCallRule{{Name: tools.ListNotes, Arguments: `{}`}, {Name: tools.ListNotes, Arguments: `{"limit":2}`}}}}}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			calls.Add(1)
		}
		model.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.a.Models = llm.NewRegistry(llm.Provider{Name: "offline", BaseURL: srv.URL + "/v1", APIKey: "offline", ContextTokens: testContextTokens})
	e.save(store.Message{Role: "user", Content: "list notes"})
	e.flush()
	e.env.RegisterActivity(e.a.GenerateReply)

	in := workflows.TurnInput{AgentID: e.agent.String(), MessageID: uuid.NewString(), Seq: e.seq + 1, Policy: string(tools.ReadsOnly)}
	reply := func() workflows.TurnResult {
		v, err := e.env.ExecuteActivity(e.a.GenerateReply, in)
		require.NoError(t, err)
		var res workflows.TurnResult
		require.NoError(t, v.Get(&res))
		return res
	}
	first := reply()
	require.Len(t, first.ToolCalls, 2)
	assert.NotEqual(t, first.ToolCalls[0].ID, first.ToolCalls[1].ID)
	for _, c := range first.ToolCalls {
		assert.True(t, strings.HasPrefix(c.ID, "call_") && c.ID != "call_0" && c.ID != "call_1", "the product's own ID, not the provider's: %s", c.ID)
		assert.Equal(t, string(tools.Auto), c.Mode, "the mode is decided and recorded by the activity")
	}
	again := reply()
	assert.Equal(t, int32(1), calls.Load(), "the model was asked once")
	assert.Equal(t, first.ToolCalls, again.ToolCalls, "the retry returns the stored calls")
	assert.Equal(t, first.MessageID, again.MessageID)
}

func TestCallsBeyondTheStepLimitAreNotRun(t *testing.T) {
	var calls []workflows.ToolCall
	for i := 0; i < MaxToolCallsPerStep+3; i++ {
		calls = append(calls, workflows.ToolCall{Name: tools.ListNotes, Arguments: "{}", ID: fmt.Sprint("p", i)})
	}
	got := decideCalls(tools.Default(), uuid.New(), calls, tools.Rule{Policy: tools.ReadsOnly})
	for i, c := range got {
		if i < MaxToolCallsPerStep {
			assert.Empty(t, c.Invalid)
			assert.Equal(t, string(tools.Auto), c.Mode)
		} else {
			assert.Contains(t, c.Invalid, "at most 16 tool calls per step")
		}
	}
}
