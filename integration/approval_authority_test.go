package integration

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authorityEvent is an approval event with who asked and who decided.
type authorityEvent struct {
	Type        string `json:"type"`
	ToolCallID  string `json:"tool_call_id"`
	RequestedBy string `json:"requested_by"`
	DecidedBy   string `json:"decided_by"`
}

type actionRow struct {
	ToolCallID string `json:"tool_call_id"`
	UserID     string `json:"user_id"`
	DecidedBy  string `json:"decided_by"`
	Success    bool   `json:"success"`
}

// A write runs with its requester's SAP login: only the requester decides it, a workspace admin
// where the workspace allows it, and with four eyes someone other than the requester approves it
// (issue 11 item 2). alice administers the workspace; bob is a member.
func TestApprovalAuthorityDecidesWhoMayApproveAWrite(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	bob := e.tokenFor("bob")
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	agent := e.createAgent("approvals")
	path := "/api/agents/" + agent.ID
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	ask := func(token, title string) authorityEvent {
		t.Helper()
		require.Equal(t, http.StatusAccepted, e.doAs(token, "POST", path+"/message", map[string]any{"content": "save a note titled " + title}, nil))
		evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
		var need authorityEvent
		require.NoError(t, json.Unmarshal(evs[len(evs)-1].Raw, &need))
		return need
	}
	decide := func(token, callID string, approved bool) (int, errorJSON) {
		t.Helper()
		var got errorJSON
		status := e.doAs(token, "POST", path+"/approve", map[string]any{"decisions": []any{map[string]any{"tool_call_id": callID, "approved": approved}}}, &got)
		return status, got
	}
	finish := func() []event {
		t.Helper()
		return ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	}
	action := func(callID string) *actionRow {
		t.Helper()
		var l struct{ Data []actionRow }
		require.Equal(t, 200, e.do("GET", path+"/actions", nil, &l))
		for _, a := range l.Data {
			if a.ToolCallID == callID {
				return &a
			}
		}
		return nil
	}
	decidedBy := func(evs []event, typ, callID string) string {
		for _, ev := range evs {
			var a authorityEvent
			require.NoError(t, json.Unmarshal(ev.Raw, &a))
			if a.Type == typ && a.ToolCallID == callID {
				return a.DecidedBy
			}
		}
		return "<no " + typ + " event>"
	}

	// 1. bob cannot approve alice's write, over REST or the socket; the write does not run.
	need := ask(e.token, "One")
	assert.Equal(t, "alice", need.RequestedBy)
	status, got := decide(bob, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "not_allowed", got.Code)
	assert.Contains(t, got.Error, "only the user whose message led to")
	status, _ = decide(bob, need.ToolCallID, false)
	assert.Equal(t, http.StatusForbidden, status, "nor reject it")
	bobWS := e.dialAs(bob, path+"/ws")
	require.NoError(t, bobWS.WriteJSON(map[string]any{"type": "approve", "request_id": "b1",
		"decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": true}}}))
	assert.Equal(t, http.StatusForbidden, commandStatus(t, bobWS, "b1"))
	// A decider named in the body is refused as an unknown field, not believed.
	assert.Equal(t, http.StatusBadRequest, e.doAs(bob, "POST", path+"/approve", map[string]any{"decided_by": "alice",
		"decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": true}}}, nil))
	var approvals struct {
		Data []struct {
			ToolCallID  string `json:"tool_call_id"`
			RequestedBy string `json:"requested_by"`
		} `json:"data"`
	}
	require.Equal(t, 200, e.do("GET", path+"/approvals", nil, &approvals))
	require.Len(t, approvals.Data, 1, "still pending")
	assert.Equal(t, "alice", approvals.Data[0].RequestedBy)
	assert.Nil(t, action(need.ToolCallID), "the write did not run")
	// alice can.
	status, _ = decide(e.token, need.ToolCallID, true)
	require.Equal(t, 200, status)
	evs := finish()
	assert.Equal(t, "alice", decidedBy(evs, "tool_approved", need.ToolCallID))
	row := action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, actionRow{ToolCallID: need.ToolCallID, UserID: "alice", DecidedBy: "alice", Success: true}, *row)

	// 2. bob's write: alice, an admin, may decide it only where the workspace allows admins to.
	need = ask(bob, "Two")
	assert.Equal(t, "bob", need.RequestedBy)
	status, got = decide(e.token, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, got.Error, "does not let admins decide")
	assert.Equal(t, http.StatusForbidden, e.doAs(bob, "PATCH", "/api/workspaces/"+e.ws, map[string]any{"admins_may_approve": true}, nil),
		"only admins change the rules")
	var w struct {
		AdminsMayApprove bool `json:"admins_may_approve"`
		FourEyes         bool `json:"four_eyes"`
	}
	require.Equal(t, 200, e.do("PATCH", "/api/workspaces/"+e.ws, map[string]any{"admins_may_approve": true}, &w))
	assert.True(t, w.AdminsMayApprove)
	status, _ = decide(e.token, need.ToolCallID, true)
	require.Equal(t, 200, status)
	evs = finish()
	assert.Equal(t, "alice", decidedBy(evs, "tool_approved", need.ToolCallID))
	row = action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, "bob", row.UserID, "the write ran as its requester")
	assert.Equal(t, "alice", row.DecidedBy)

	// 3. Four eyes: alice cannot approve her own write, bob can; alice may still reject hers.
	require.Equal(t, 200, e.do("PATCH", "/api/workspaces/"+e.ws, map[string]any{"admins_may_approve": false, "four_eyes": true}, &w))
	require.Equal(t, 200, e.doAs(bob, "GET", "/api/workspaces/"+e.ws, nil, &w), "members see the rules")
	assert.True(t, w.FourEyes)
	assert.False(t, w.AdminsMayApprove)
	need = ask(e.token, "Three")
	status, got = decide(e.token, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "not_allowed", got.Code)
	assert.Contains(t, got.Error, "four eyes")
	assert.Nil(t, action(need.ToolCallID))
	status, _ = decide(bob, need.ToolCallID, true)
	require.Equal(t, 200, status)
	evs = finish()
	assert.Equal(t, "bob", decidedBy(evs, "tool_approved", need.ToolCallID))
	row = action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, actionRow{ToolCallID: need.ToolCallID, UserID: "alice", DecidedBy: "bob", Success: true}, *row)

	need = ask(e.token, "Four")
	status, _ = decide(e.token, need.ToolCallID, false)
	require.Equal(t, 200, status)
	evs = finish()
	assert.Equal(t, "alice", decidedBy(evs, "tool_rejected", need.ToolCallID))
	assert.Nil(t, action(need.ToolCallID))
}

// commandStatus reads socket frames until the answer to request id and returns its http_status.
func commandStatus(t *testing.T, conn *websocket.Conn, id string) int {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(15*time.Second)))
	for {
		var f struct {
			Type       string `json:"type"`
			RequestID  string `json:"request_id"`
			HTTPStatus int    `json:"http_status"`
		}
		require.NoError(t, conn.ReadJSON(&f))
		if (f.Type == "ack" || f.Type == "command_error") && f.RequestID == id {
			return f.HTTPStatus
		}
	}
}
