package integration

// Issue 18, finding 5: a NUL character reaching Postgres (which stores neither NUL nor invalid
// UTF-8 in text and jsonb) wedged a conversation: a script calling
// sap_read_table(table="T000\x00") left it answering 503 to Stop and to new messages, and a
// model reply holding a NUL was retried without end. Every such turn now ends cleanly, and the
// conversation answers the next message.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// nulRules make the offline model put a NUL character into every place model output reaches:
// a script's helper arguments, a script's output and error, a direct call's arguments, the reply
// text and the reasoning.
func nulRules() []offlinellm.Rule {
	code := func(script string) string {
		return `{"code":"` + strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(script) + `"}`
	}
	return []offlinellm.Rule{
		{Name: "nul-helper", Match: `^read the NUL table on (\S+)$`, Reply: "Reading.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				`r = sap_read_table(table="T000" + chr(0), connection_id="$1")` + "\n" + `print(r)`)}}},
		{Name: "nul-output", Match: `^print a NUL$`, Reply: "Printing.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(
				`print("before" + chr(0) + "after")` + "\n" + `fail("broken" + chr(0) + "script")`)}}},
		{Name: "nul-args", Match: `^save a NUL note$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"nul\u0000title","body":"x","draft":true}`}}},
		{Name: "nul-reply", Match: `^answer with a NUL$`, Reasoning: "Thinking\x00hard.", Reply: "A reply with a NUL \x00 inside."},
		{Name: "hello", Match: `^hello$`, Reply: "Hello, ready when you are."},
	}
}

func nulEnv(t *testing.T) (*env, connectionJSON, connectionJSON) {
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) { o.OfflineLLM.Rules = nulRules() })
	var ecc, s4 connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections",
		map[string]any{"name": "S4", "system_type": "S4HANA", "connector_url": e.stack.SAPSimURL + "/S4H"}, &s4))
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/workspaces/"+e.ws+"/connections/"+s4.ID+"/secrets/connector_key", map[string]any{"value": sapsim.S4HConnectorKey}, nil))
	return e, ecc, s4
}

// nulTurn sends content and requires the turn to end (idle) within a bound, with no model
// retry; it returns the turn's events.
func nulTurn(t *testing.T, e *env, ws *socket, agentID, content string) []event {
	t.Helper()
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agentID+"/message", map[string]any{"content": content}, nil))
	evs := ws.until(45*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	for _, ev := range evs {
		require.NotEqual(t, "retry", ev.Type, "%q: the model was called again", content)
	}
	return evs
}

// answersAfterwards checks what the user does next: Stop answers and the next message is
// answered.
func answersAfterwards(t *testing.T, e *env, ws *socket, agentID string) {
	t.Helper()
	require.Equal(t, http.StatusOK, e.do("POST", "/api/agents/"+agentID+"/stop", nil, nil))
	evs := nulTurn(t, e, ws, agentID, "hello")
	var reply *messageJSON
	for _, ev := range evs {
		if isAssistantMessage(ev) {
			reply = ev.Message
		}
	}
	require.NotNil(t, reply, "the next message is answered")
	assert.Equal(t, "Hello, ready when you are.", reply.Content)
}

func TestAttackNULInToolArgumentsAndResultsEndsTheTurnCleanly(t *testing.T) {
	t.Parallel()
	e, ecc, s4 := nulEnv(t)
	agent := e.createAgent("nul")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	// A script's helper call with a NUL in the table name, on the in-process simulator and
	// through the connector client: the helper refuses it, the script fails, the model reads why.
	for _, conn := range []connectionJSON{ecc, s4} {
		evs := nulTurn(t, e, ws, agent.ID, "read the NUL table on "+conn.ID)
		errs := toolEvents(t, evs, "tool_error")
		require.Len(t, errs, 1, "the script's failure is the tool's error")
		var te struct {
			Error string `json:"error"`
		}
		for _, ev := range evs {
			if ev.Type == "tool_error" {
				require.NoError(t, jsonUnmarshal(ev.Raw, &te))
			}
		}
		assert.Contains(t, te.Error, "NUL")
		assert.NotContains(t, te.Error, "\x00")
		answersAfterwards(t, e, ws, agent.ID)
	}

	// A script whose output and error hold NUL characters: its result is stored with U+FFFD.
	evs := nulTurn(t, e, ws, agent.ID, "print a NUL")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1)
	answersAfterwards(t, e, ws, agent.ID)

	// A direct call whose arguments hold a NUL is an invalid call the model reads: nothing runs.
	evs = nulTurn(t, e, ws, agent.ID, "save a NUL note")
	assert.Empty(t, toolEvents(t, evs, "tool_update"), "nothing ran")
	answersAfterwards(t, e, ws, agent.ID)

	// Nothing of it reached Postgres as a NUL, and the transcript says what happened.
	var results []string
	rows, err := e.stack.Deps.Store.Pool.Query(context.Background(), `SELECT content FROM messages WHERE agent_id = $1 AND role = 'tool' ORDER BY seq`, agent.ID)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		results = append(results, s)
	}
	require.NoError(t, rows.Err())
	require.Len(t, results, 4, "%v", e.messages(agent.ID))
	for _, r := range results[:2] {
		assert.Contains(t, r, "NUL", "the helper call was refused for its NUL")
	}
	assert.Contains(t, results[2], "broken\uFFFDscript", "the script's error is kept, its NUL replaced")
	assert.Contains(t, results[3], "NUL", "a direct call with a NUL argument is invalid")
	var notes int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_actions WHERE agent_id = $1`, agent.ID).Scan(&notes))
	assert.Equal(t, 3, notes, "the three scripts are in the action log")
}

func TestAttackNULInModelReplyIsStoredOnceNotRetried(t *testing.T) {
	t.Parallel()
	e, _, _ := nulEnv(t)
	agent := e.createAgent("nul reply")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	evs := nulTurn(t, e, ws, agent.ID, "answer with a NUL")
	var streamed, reasoning string
	var reply *messageJSON
	for _, ev := range evs {
		switch {
		case ev.Type == "stream":
			streamed += ev.Delta
		case ev.Type == "thinking":
			reasoning += ev.Delta
		case isAssistantMessage(ev):
			reply = ev.Message
		}
	}
	require.NotNil(t, reply)
	assert.Equal(t, "A reply with a NUL \uFFFD inside.", reply.Content)
	assert.Equal(t, reply.Content, streamed, "what streamed is what was stored")
	assert.Equal(t, "Thinking\uFFFDhard.", reasoning)
	answersAfterwards(t, e, ws, agent.ID)
}
