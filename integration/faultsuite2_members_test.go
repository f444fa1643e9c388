package integration

// Fault suite, issue 18 item 2: a member removed in the middle of her own turn. Nothing of hers
// runs afterwards — checked against Postgres, the event stream and the simulator's change log.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/workflows"
)

// sentByRemovedMember marks messages in tp.sent that checkInvariants (a) must not expect an
// answer for (they were accepted, then their sender was removed); the test checks them itself.
const sentByRemovedMember = -http.StatusAccepted

// renameFiveTimes renames a material five times in one script, each a committed write (the
// topology's simulator takes bapiLatency for each).
var renameFiveTimes = offlinellm.Rule{Name: "rename-five-times", Match: `^rename material (\w+) five times$`,
	ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: `{"code":` + strconv.Quote(
		"for i in range(5):\n    sap_execute_rfc(function=\"BAPI_MATERIAL_SAVEDATA\", connection_id=\"ECC\", imports={\"HEADDATA\": {\"MATERIAL\": \"$1\"}}, "+
			"tables={\"MATERIALDESCRIPTION\": [{\"LANGU\": \"E\", \"MATL_DESC\": \"Removed \" + str(i)}]}, commit=True)\nresult = \"done\"") + `}`}}}

// tokenFor mints a token for another user of the topology.
func (tp *topology) tokenFor(user string) string {
	tok, err := auth.Mint([]byte(tp.secret), user, 2*time.Hour, "", "")
	require.NoError(tp.t, err)
	return tok
}

// doAs is do with another user's token; the answer is recorded for check (d) as well.
func (tp *topology) doAs(i int, token, method, path string, body any, out any) httpCall {
	tp.t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(tp.t, err)
	req, err := http.NewRequest(method, tp.apiURLs[i]+path, bytes.NewReader(raw))
	require.NoError(tp.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	call := httpCall{method: method, path: path}
	start := time.Now()
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	call.took = time.Since(start)
	if err != nil {
		call.err = err.Error()
		tp.http.add(call)
		return call
	}
	defer resp.Body.Close()
	raw, _ = io.ReadAll(resp.Body)
	call.status = resp.StatusCode
	if resp.StatusCode >= 400 {
		var apiErr struct{ Code string }
		_ = json.Unmarshal(raw, &apiErr)
		call.code = apiErr.Code
	} else if out != nil && len(raw) > 0 {
		require.NoError(tp.t, json.Unmarshal(raw, out), "body: %s", raw)
	}
	tp.http.add(call)
	return call
}

// sendAs posts a message as another user through api i; it is recorded as sent but, being
// hers, not as one (a) expects an answer for.
func (tp *topology) sendAs(i int, token, agentID, content string) string {
	tp.t.Helper()
	id := newUUID()
	c := tp.doAs(i, token, "POST", "/api/agents/"+agentID+"/message", map[string]any{"content": content, "client_message_id": id}, nil)
	require.Equal(tp.t, http.StatusAccepted, c.status, "POST message %q: %+v", content, c)
	tp.sentMu.Lock()
	tp.sent[id] = &sentMessage{agentID: agentID, content: content, status: sentByRemovedMember}
	tp.sentMu.Unlock()
	return id
}

// TestFaultMemberRemovedMidTurn: bob's approved script renames a material five times with his
// own SAP login; while the first write is at the SAP system, with two more of his messages and
// one of alice's queued, alice removes him from the workspace (through the other api process).
// The write already at SAP completes; nothing else of his runs: no further write, his queued
// messages are never stored and the clients are told, his login is gone, and alice's message
// is answered.
func TestFaultMemberRemovedMidTurn(t *testing.T) {
	t.Parallel()
	tp := startTopology(t, topoOptions{apis: 2, workers: 2, bapiLatency: 3 * time.Second, rules: []offlinellm.Rule{renameFiveTimes}})
	ecc := tp.connectECC()
	tp.mustDo(0, "POST", "/api/orgs/"+tp.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil, http.StatusCreated)
	tp.mustDo(0, "POST", "/api/workspaces/"+tp.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil, http.StatusCreated)
	bob := tp.tokenFor("bob")
	login := tp.doAs(1, bob, "PUT", "/api/user/sap-credentials/"+ecc, map[string]any{"sap_user": "DEVELOPER", "password": sapsim.DefaultUsers()["DEVELOPER"]}, nil)
	require.Equal(t, http.StatusOK, login.status, "%+v", login)
	agent := tp.newAgent()
	c := tp.watch("watcher", 0, agent, -1)
	tp.warmUp(agent)

	matnr := tp.someMaterial()
	before := tp.materialText(matnr)
	base := tp.sim.changes(t, "ECC", 0).LatestSeq
	from := len(c.snapshot())
	turn := tp.sendAs(1, bob, agent, "rename material "+matnr+" five times")
	i := c.waitFor(time.Minute, from, "approval_needed", isType("approval_needed"))
	need := c.snapshot()[i]
	approved := tp.doAs(1, bob, "POST", "/api/agents/"+agent+"/approve",
		map[string]any{"decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": true}}}, nil)
	require.Equal(t, http.StatusOK, approved.status, "%+v", approved)
	queued := []string{tp.sendAs(1, bob, agent, "list my notes"), tp.sendAs(1, bob, agent, "save a note titled Bonus: for bob")}
	tp.sendOK(agent, "hello")
	tp.waitWriteArrives()

	tp.mustDo(0, "DELETE", "/api/workspaces/"+tp.ws+"/members/bob", nil, nil, http.StatusNoContent)
	tp.mustSettle(agent, 2*time.Minute)
	time.Sleep(2 * tp.simLatency()) // a write the script might still send would have arrived by now

	// The simulator's change log: the write that was at SAP, and nothing after it.
	var writes []string
	for _, ch := range tp.sim.changes(t, "ECC", base).Changes {
		writes = append(writes, fmt.Sprintf("#%d %s %s by %s", ch.Seq, ch.ChangeType, ch.ObjectName, ch.ChangedBy))
	}
	assert.Len(t, writes, 1, "only the write already at SAP when he was removed: %v (write calls received: %d)", writes, tp.sim.writeRequests())
	assert.Equal(t, 1, tp.sim.writeRequests(), "no further write reached the SAP system")
	assert.NotEqual(t, "Removed 4", tp.materialText(matnr), "the loop did not run to its end (was %q)", before)

	// Postgres: his queued messages were never stored (nor left parked), his login is gone.
	ctx := t.Context()
	for _, id := range queued {
		var n int
		require.NoError(t, tp.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE id = $1) + (SELECT count(*) FROM parked_messages WHERE id = $1)`, id).Scan(&n))
		assert.Zero(t, n, "queued message %s of the removed member is not in Postgres", id)
	}
	var logins, actions int
	require.NoError(t, tp.db.QueryRow(ctx, `SELECT count(*) FROM user_connection_credentials WHERE user_id = 'bob'`).Scan(&logins))
	assert.Zero(t, logins, "his SAP login went with the membership")
	require.NoError(t, tp.db.QueryRow(ctx, `SELECT count(*) FROM tool_actions WHERE agent_id = $1 AND user_id = 'bob' AND success`, agent).Scan(&actions))
	assert.Zero(t, actions, "no tool of his succeeded after the removal")

	// The event stream: his turn was stopped with the reason, each queued message named as
	// not answered; no tool of his finished.
	stopped, dropped := false, map[string]bool{}
	for _, f := range c.snapshot() {
		switch {
		case f.Type == "stopped" && f.MessageID == turn:
			stopped = true
		case f.Type == "error" && f.Error == "message not answered: "+workflows.RemovedSenderReason:
			dropped[f.MessageID] = true
		case f.Type == "tool_update" && f.ToolCallID == need.ToolCallID && f.Status == "done":
			t.Errorf("his script finished after the removal: %+v", f.wsEvent)
		}
	}
	assert.True(t, stopped, "his turn was stopped")
	for _, id := range queued {
		assert.True(t, dropped[id], "clients were told message %s will not be answered", id)
	}
	tp.checkInvariants([]string{agent}, []writeExpect{{sid: "ECC", table: "MAKT", after: base, want: 1}})
}

// simLatency is how long the simulator holds a write.
func (tp *topology) simLatency() time.Duration { return tp.sim.latency }
