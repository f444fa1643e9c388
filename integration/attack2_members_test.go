package integration

// Issue 18 item 2 (second attack campaign): a removed member keeps acting. Her queued
// messages ran, her pending write could be approved by someone else, both with her stored SAP
// login, which outlived the membership. See docs/api.md, "Removing a member".

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/workflows"
)

// addMember makes user a plain member of the env's org and workspace and returns her token.
func (e *env) addMember(user string) string {
	e.t.Helper()
	require.Equal(e.t, http.StatusCreated, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": user, "role": "member"}, nil))
	require.Equal(e.t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": user, "role": "member"}, nil))
	return e.tokenFor(user)
}

// sendAs posts a message as the token's user with a client message ID and returns that ID.
func (e *env) sendAs(token, agentID, content string) string {
	e.t.Helper()
	id := uuid.NewString()
	require.Equal(e.t, http.StatusAccepted, e.doAs(token, "POST", "/api/agents/"+agentID+"/message", map[string]any{"content": content, "client_message_id": id}, nil))
	return id
}

// droppedErrors returns the error events that name a message (message_id), by message ID.
func droppedErrors(t *testing.T, evs []event) map[string]string {
	out := map[string]string{}
	for _, ev := range evs {
		if ev.Type != "error" {
			continue
		}
		var f struct {
			Error     string `json:"error"`
			MessageID string `json:"message_id"`
		}
		require.NoError(t, json.Unmarshal(ev.Raw, &f))
		if f.MessageID != "" {
			out[f.MessageID] = f.Error
		}
	}
	return out
}

func (e *env) storedContents(agentID string) string {
	var b strings.Builder
	for _, m := range e.messages(agentID) {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

// Her messages queued behind another member's turn never run: not stored, not answered, and
// every client is told which messages were dropped and why. The others' work goes on.
func TestAttack2RemovedMembersQueuedMessagesNeverRun(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	bob := e.addMember("bob")
	agent := e.createAgent("shared")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	first := e.sendAs(bob, agent.ID, "list notes")
	second := e.sendAs(bob, agent.ID, "save a note titled Payroll")

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/workspaces/"+e.ws+"/members/bob", nil, nil))
	require.Equal(t, http.StatusOK, e.do("POST", "/api/agents/"+agent.ID+"/stop", nil, nil)) // alice's story: shortened
	// (Her note would ask for approval: stop there too, so the checks below say what happened.)
	evs := ws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" || ev.Type == "approval_needed" })

	dropped := droppedErrors(t, evs)
	for _, id := range []string{first, second} {
		assert.Contains(t, dropped[id], "removed from the workspace", "clients learn that message %s will not be answered", id)
	}
	stored := e.storedContents(agent.ID)
	assert.NotContains(t, stored, "list notes", "her first queued message did not run")
	assert.NotContains(t, stored, "Payroll", "her second queued message did not run")
	var actions struct{ Data []actionRow }
	require.Equal(t, 200, e.do("GET", "/api/agents/"+agent.ID+"/actions", nil, &actions))
	assert.Empty(t, actions.Data, "no tool ran for her")

	// The conversation answers the next message.
	evs = turn(t, e, ws, agent.ID, "list notes")
	assert.Len(t, toolEvents(t, evs, "tool_update"), 1, "events: %v", evs)
	// Replayed by package workflows: the remove_member update dropping queued messages.
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, "agent/"+agent.ID, "", "conversation_member_removed_v1")
}

// Her SAP write waiting for a second person's approval (four eyes) is rejected with the reason
// the moment she is removed: another member can no longer approve it, and nothing reaches SAP.
func TestAttack2RemovedRequestersPendingWriteCannotBeApproved(t *testing.T) {
	t.Parallel()
	e, ecc, _ := sapEnv(t, nil)
	bob := e.addMember("bob")
	require.Equal(t, http.StatusOK, e.doAs(bob, "PUT", "/api/user/sap-credentials/"+ecc.ID,
		map[string]any{"sap_user": "DEVELOPER", "password": sapsim.DefaultUsers()["DEVELOPER"]}, nil))
	require.Equal(t, http.StatusOK, e.do("PATCH", "/api/workspaces/"+e.ws, map[string]any{"four_eyes": true}, nil))
	agent := e.createAgent("four eyes")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	matnr := firstMaterial(t, e)
	before := materialText(t, e, matnr)
	e.sendAs(bob, agent.ID, "rename material "+matnr+" on ECC to Removed bolt")
	evs := ws.until(60*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	need := toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1)

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/workspaces/"+e.ws+"/members/bob", nil, nil))
	var got errorJSON
	status := e.do("POST", "/api/agents/"+agent.ID+"/approve",
		map[string]any{"decisions": []any{map[string]any{"tool_call_id": need[0].ToolCallID, "approved": true}}}, &got)
	assert.Contains(t, []int{http.StatusNotFound, http.StatusConflict}, status, "alice cannot approve bob's write after his removal: %+v", got)
	evs = ws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })

	var rejected *struct {
		ToolCallID string `json:"tool_call_id"`
		Reason     string `json:"reason"`
	}
	for _, ev := range evs {
		if ev.Type == "tool_rejected" {
			require.NoError(t, json.Unmarshal(ev.Raw, &rejected))
		}
	}
	require.NotNil(t, rejected, "events: %v", evs)
	assert.Equal(t, need[0].ToolCallID, rejected.ToolCallID)
	assert.Equal(t, workflows.RemovedRequesterReason, rejected.Reason)
	assert.Equal(t, before, materialText(t, e, matnr), "nothing was written in SAP")
	var actions struct{ Data []actionRow }
	require.Equal(t, 200, e.do("GET", "/api/agents/"+agent.ID+"/actions", nil, &actions))
	assert.Empty(t, actions.Data, "the write never ran")
}

// Her SAP logins go with the membership: removed from the workspace, or from the
// organization (which removes her from its workspaces), she no longer lists the connections
// and no row is left; the others keep theirs.
func TestAttack2RemovedMembersSAPLoginsAreDeleted(t *testing.T) {
	t.Parallel()
	e, ecc, s4 := sapEnv(t, nil)
	tokens := map[string]string{"alice": e.token, "bob": e.addMember("bob"), "carol": e.addMember("carol")}
	for user, tok := range tokens {
		for _, conn := range []string{ecc.ID, s4.ID} {
			require.Equal(t, http.StatusOK, e.doAs(tok, "PUT", "/api/user/sap-credentials/"+conn,
				map[string]any{"sap_user": "DEVELOPER", "password": sapsim.DefaultUsers()["DEVELOPER"]}, nil), user)
		}
	}
	listed := func(user string) int {
		var l struct {
			Data []struct {
				ConnectionName string `json:"connection_name"`
			} `json:"data"`
		}
		require.Equal(t, http.StatusOK, e.doAs(tokens[user], "GET", "/api/user/sap-credentials", nil, &l))
		return len(l.Data)
	}
	rows := func(user string) int {
		var n int
		require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM user_connection_credentials WHERE user_id = $1`, user).Scan(&n))
		return n
	}
	require.Equal(t, 2, listed("carol"))

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/workspaces/"+e.ws+"/members/carol", nil, nil))
	assert.Zero(t, listed("carol"), "carol no longer lists the workspace's connections")
	assert.Zero(t, rows("carol"))

	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/orgs/"+e.org+"/members/bob", nil, nil))
	assert.Zero(t, listed("bob"), "bob's logins went with his organization membership")
	assert.Zero(t, rows("bob"))

	assert.Equal(t, 2, listed("alice"), "the admin's own logins stay")
	assert.Equal(t, 2, rows("alice"))
}

// The safety net: even when her conversation is never told (the removal's signal is lost), a
// script running for her that calls SAP after the removal gets an error, and her queued
// message is refused when its turn would begin. Bob's script renames a material 20 times
// (every simulated call takes 300 ms); he is removed after the first rename arrived.
func TestAttack2ScriptRunningForARemovedMemberCannotCallSAP(t *testing.T) {
	// Serial: races the removal against a script's loop (see TestMain).
	script := "for i in range(20):\n    sap_execute_rfc(function=\"BAPI_MATERIAL_SAVEDATA\", connection_id=\"ECC\", imports={\"HEADDATA\": {\"MATERIAL\": \"$1\"}}, " +
		"tables={\"MATERIALDESCRIPTION\": [{\"LANGU\": \"E\", \"MATL_DESC\": \"Loop \" + str(i)}]}, commit=True)\nresult = \"done\""
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.SAPSimLatency = 300 * time.Millisecond
		o.OfflineLLM.Rules = append([]offlinellm.Rule{{Name: "loop", Match: `^rename material (\w+) twenty times$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: `{"code":` + strconv.Quote(script) + `}`}}}}, devstack.DemoRules()...)
	})
	var ecc connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	bob := e.addMember("bob")
	require.Equal(t, http.StatusOK, e.doAs(bob, "PUT", "/api/user/sap-credentials/"+ecc.ID,
		map[string]any{"sap_user": "DEVELOPER", "password": sapsim.DefaultUsers()["DEVELOPER"]}, nil))
	agent := e.createAgent("loop")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	matnr := firstMaterial(t, e)
	base := simChanges(t, e, "ECC", 0).LatestSeq
	e.sendAs(bob, agent.ID, "rename material "+matnr+" twenty times")
	evs := ws.until(60*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	need := toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1)
	require.Equal(t, http.StatusOK, e.doAs(bob, "POST", "/api/agents/"+agent.ID+"/approve",
		map[string]any{"decisions": []any{map[string]any{"tool_call_id": need[0].ToolCallID, "approved": true}}}, nil))
	queued := e.sendAs(bob, agent.ID, "list my notes")
	require.Eventually(t, func() bool { return len(simChanges(t, e, "ECC", base).Changes) > 0 }, 30*time.Second, 50*time.Millisecond,
		"the first rename reaches SAP")

	// Removed behind the conversation's back: only the checks at execution time can stop him.
	_, err := e.stack.Deps.Store.RemoveWorkspaceMember(context.Background(), uuid.MustParse(e.ws), "bob", "alice")
	require.NoError(t, err)
	removedAt := simChanges(t, e, "ECC", base)
	evs = ws.until(2*time.Minute, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })

	after := simChanges(t, e, "ECC", removedAt.LatestSeq).Changes
	assert.LessOrEqual(t, len(after), 1, "at most the call already on its way completes; changes after the removal: %+v", after)
	assert.Less(t, len(removedAt.Changes)+len(after), 20, "the loop did not run to its end")
	errs := toolEvents(t, evs, "tool_error")
	require.Len(t, errs, 1, "events: %v", evs)
	assert.Contains(t, allText(evs), "no longer a member of this workspace")
	assert.Contains(t, droppedErrors(t, evs)[queued], "removed from the workspace", "his queued message was refused when its turn began")
	assert.NotContains(t, e.storedContents(agent.ID), "list my notes")
}

func firstMaterial(t *testing.T, e *env) string {
	mara := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MARA", Fields: []string{"MATNR"}, RowCount: 1})
	require.Len(t, mara.Rows, 1)
	return strings.TrimSpace(mara.Rows[0][0])
}

func materialText(t *testing.T, e *env, matnr string) string {
	r := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '" + matnr + "' AND SPRAS = 'E'"}})
	require.Len(t, r.Rows, 1)
	return strings.TrimSpace(r.Rows[0][0])
}

// simChanges reads the in-process simulated system's change log after seq.
func simChanges(t *testing.T, e *env, sid string, after int64) sap.ProbeChangesResponse {
	sys, ok := e.stack.Landscape.System(sid)
	require.True(t, ok)
	body, _ := json.Marshal(sap.ProbeChangesRequest{AfterSeq: after})
	out, err := sys.Call(context.Background(), sap.EndpointProbeChanges, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, body)
	require.NoError(t, err)
	return out.(sap.ProbeChangesResponse)
}

// A removal stands when the conversations cannot be told (Temporal is down): the DELETE answers
// 204 within the Temporal call timeout, her login is gone at once, and her queued message is
// refused when its turn would begin, after Temporal is back.
func TestAttack2RemovalStandsWhileTemporalIsDown(t *testing.T) {
	// Serial: asserts the removal answers within 10 s (see TestMain).
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.TemporalCallTimeout = 2 * time.Second
		scriptedTools(c, o)
	})
	var ecc connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	bob := e.addMember("bob")
	require.Equal(t, http.StatusOK, e.doAs(bob, "PUT", "/api/user/sap-credentials/"+ecc.ID,
		map[string]any{"sap_user": "DEVELOPER", "password": sapsim.DefaultUsers()["DEVELOPER"]}, nil))
	agent := e.createAgent("outage")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	queued := e.sendAs(bob, agent.ID, "list notes")

	e.stack.StopTemporal()
	removed := e.request("DELETE", "/api/workspaces/"+e.ws+"/members/bob", nil)
	assert.Equal(t, http.StatusNoContent, removed.status, "%s", removed.body)
	assert.Less(t, removed.took, 10*time.Second)
	var logins int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM user_connection_credentials WHERE user_id = 'bob'`).Scan(&logins))
	assert.Zero(t, logins, "his login went with the membership although Temporal was down")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, e.stack.StartTemporal(ctx))

	evs := ws.until(2*time.Minute, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" || ev.Type == "approval_needed" })
	assert.Contains(t, droppedErrors(t, evs)[queued], "removed from the workspace", "his queued message was refused when its turn would begin")
	assert.NotContains(t, e.storedContents(agent.ID), "list notes")
}
