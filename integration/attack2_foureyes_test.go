package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sap"
)

// Issue 18, findings 1 and 7: four eyes that the requester cannot skip, and approval
// classification enforced where a call runs.

// scriptCall is an execute_code tool call running code.
func scriptCall(code string) offlinellm.ToolCallRule {
	raw, _ := json.Marshal(map[string]string{"code": code})
	return offlinellm.ToolCallRule{Name: "execute_code", Arguments: string(raw)}
}

// fourEyesRules: a built-in write (save_note), a read (list_notes), an SAP write through a script
// (what an instruction planted in an SAP table row leads the model to), a script that hides its
// commit from the approval classifier, a function module named like a read that reserves
// numbers, and a slow reply that gives an admin time to switch four eyes on mid-turn.
func fourEyesRules(_ *config.Config, o *devstack.Options) {
	o.OfflineLLM.Rules = []offlinellm.Rule{
		{Name: "save", Match: `^save a note titled (\w+)$`, Reply: "Saving it.", ToolCalls: []offlinellm.ToolCallRule{
			{Name: "save_note", Arguments: `{"title":"$1","body":"Reconcile GR/IR account 191100"}`}}},
		{Name: "list", Match: `^list notes$`, ToolCalls: []offlinellm.ToolCallRule{{Name: "list_notes", Arguments: `{}`}}},
		{Name: "injected", Match: `^follow the note in row (\w+)$`, Reply: "The row says to rename the material; doing it.", ToolCalls: []offlinellm.ToolCallRule{
			scriptCall(`r = sap_execute_rfc(function="BAPI_MATERIAL_SAVEDATA", imports={"HEADDATA": {"MATERIAL": "$1"}}, ` +
				`tables={"MATERIALDESCRIPTION": [{"LANGU": "E", "MATL_DESC": "Injected"}]}, commit=True)` + "\nresult = r[\"committed\"]")}},
		{Name: "hidden-commit", Match: `^hidden commit$`, ToolCalls: []offlinellm.ToolCallRule{
			scriptCall(`r = sap_execute_rfc(function="BAPI_CUSTOMER_GETDETAIL2", imports={"CUSTOMERNO": "100003"}, **{"commit": True})` + "\nresult = r[\"committed\"]")}},
		{Name: "reserve", Match: `^reserve a material number$`, ToolCalls: []offlinellm.ToolCallRule{
			scriptCall(`r = sap_execute_rfc(function="BAPI_MATERIAL_GETINTNUMBER", imports={"MATERIAL_TYPE": "FERT"})` + "\nprint(r)")}},
		{Name: "slow-save", Match: `^slowly save a note titled (\w+)$`, Reply: strings.Repeat("Saving it. ", 10),
			TokenDelay: &offlinellm.Duration{Duration: 150 * time.Millisecond}, ToolCalls: []offlinellm.ToolCallRule{
				{Name: "save_note", Arguments: `{"title":"$1","body":"b"}`}}},
	}
}

// fourEyesEnv is alice (workspace admin), bob and carol (members) in one workspace with a
// simulated ECC connection, and a conversation of alice's everyone watches.
type fourEyesEnv struct {
	*env
	bob, carol string
	agent      string
	sock       *socket
}

func startFourEyes(t *testing.T) *fourEyesEnv {
	e := startEnv(t, fourEyesRules)
	f := &fourEyesEnv{env: e, bob: e.tokenFor("bob"), carol: e.tokenFor("carol")}
	for _, u := range []string{"bob", "carol"} {
		require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": u, "role": "member"}, nil))
		require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": u, "role": "member"}, nil))
	}
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	f.agent = e.createAgent("four eyes").ID
	f.sock = e.dial(f.agent, "")
	f.sock.next(5 * time.Second)
	return f
}

func (f *fourEyesEnv) path() string { return "/api/agents/" + f.agent }

func (f *fourEyesEnv) setWorkspace(token string, fields map[string]any) int {
	f.t.Helper()
	return f.doAs(token, "PATCH", "/api/workspaces/"+f.env.ws, fields, nil)
}

func (f *fourEyesEnv) setPolicy(token, policy string) toolPolicyJSON {
	f.t.Helper()
	var p toolPolicyJSON
	require.Equal(f.t, 200, f.doAs(token, "PUT", "/api/workspaces/"+f.env.ws+"/tool-policy", map[string]any{"policy": policy}, &p))
	return p
}

type toolPolicyJSON struct {
	Policy          string `json:"policy"`
	EffectivePolicy string `json:"effective_policy"`
	MaxToolPolicy   string `json:"max_tool_policy"`
	FourEyes        bool   `json:"four_eyes"`
}

// send posts token's message and returns the events until the turn asks for approval or ends.
func (f *fourEyesEnv) send(token, content string) []event {
	f.t.Helper()
	require.Equal(f.t, http.StatusAccepted, f.doAs(token, "POST", f.path()+"/message", map[string]any{"content": content}, nil))
	return f.sock.until(60*time.Second, func(ev event) bool {
		return ev.Type == "approval_needed" || (ev.Type == "status" && ev.Status == "idle")
	})
}

// pending is the one call the last turn asks approval for (failing when it asks none).
func (f *fourEyesEnv) pending(evs []event) authorityEvent {
	f.t.Helper()
	for _, ev := range evs {
		if ev.Type == "approval_needed" {
			var a authorityEvent
			require.NoError(f.t, json.Unmarshal(ev.Raw, &a))
			return a
		}
	}
	var seen []string
	for _, ev := range evs {
		seen = append(seen, ev.Type)
	}
	f.t.Fatalf("no approval was asked; the call ran (events: %v)", seen)
	return authorityEvent{}
}

func (f *fourEyesEnv) decide(token, callID string, approved bool) (int, errorJSON) {
	f.t.Helper()
	var got errorJSON
	status := f.doAs(token, "POST", f.path()+"/approve", map[string]any{"decisions": []any{map[string]any{"tool_call_id": callID, "approved": approved}}}, &got)
	return status, got
}

func (f *fourEyesEnv) finish() []event {
	f.t.Helper()
	return f.sock.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
}

// action is the action-log row of a call (nil: it never ran).
func (f *fourEyesEnv) action(callID string) *actionRow {
	f.t.Helper()
	var l struct{ Data []actionRow }
	require.Equal(f.t, 200, f.do("GET", f.path()+"/actions", nil, &l))
	for _, a := range l.Data {
		if a.ToolCallID == callID {
			return &a
		}
	}
	return nil
}

func toolErrorOf(t *testing.T, evs []event) string {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == "tool_error" {
			var te struct{ Error string }
			require.NoError(t, json.Unmarshal(ev.Raw, &te))
			return te.Error
		}
	}
	return ""
}

// A member's own run_everything policy cannot skip four eyes: an admin's and a plain member's
// writes (a built-in one and an SAP write through a script) wait for approval, the requester
// cannot give it, another member can, and the action log names that member (finding 1).
func TestAttack2FourEyesHoldsAgainstTheRequestersOwnPolicy(t *testing.T) {
	t.Parallel()
	f := startFourEyes(t)
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"four_eyes": true}))

	// alice, the workspace admin, chooses run_everything: it stays her choice, four eyes still applies.
	p := f.setPolicy(f.token, "run_everything")
	assert.Equal(t, toolPolicyJSON{Policy: "run_everything", EffectivePolicy: "run_everything", MaxToolPolicy: "run_everything", FourEyes: true}, p)
	need := f.pending(f.send(f.token, "save a note titled Admin"))
	assert.Equal(t, "alice", need.RequestedBy)
	assert.Nil(t, f.action(need.ToolCallID), "the write waits")
	var approvals struct {
		Data []struct {
			ToolCallID string `json:"tool_call_id"`
			FourEyes   bool   `json:"four_eyes"`
		} `json:"data"`
	}
	require.Equal(t, 200, f.do("GET", f.path()+"/approvals", nil, &approvals))
	require.Len(t, approvals.Data, 1)
	assert.True(t, approvals.Data[0].FourEyes, "the call carries the rule it was requested under")
	status, got := f.decide(f.token, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, got.Error, "four eyes")
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()
	row := f.action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, actionRow{ToolCallID: need.ToolCallID, UserID: "alice", DecidedBy: "bob", Success: true}, *row)

	// A read still follows her policy: it runs at once.
	evs := f.send(f.token, "list notes")
	assert.Empty(t, toolEvents(t, evs, "approval_needed"))

	// bob, a plain member, with run_everything: his write waits too; alice approves it.
	f.setPolicy(f.bob, "run_everything")
	need = f.pending(f.send(f.bob, "save a note titled Member"))
	assert.Equal(t, "bob", need.RequestedBy)
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	status, _ = f.decide(f.token, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()
	row = f.action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, actionRow{ToolCallID: need.ToolCallID, UserID: "bob", DecidedBy: "alice", Success: true}, *row)

	// An SAP write the model was led to by an instruction planted in a table row (a script): it
	// waits, bob cannot approve it, carol can, and only then does SAP change.
	mara := readSim(t, f.env, "ECC", sap.ReadTableRequest{Table: "MARA", Fields: []string{"MATNR"}, RowCount: 1})
	require.Len(t, mara.Rows, 1)
	matnr := strings.TrimSpace(mara.Rows[0][0])
	need = f.pending(f.send(f.bob, "follow the note in row "+matnr))
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status)
	desc := func() string {
		r := readSim(t, f.env, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '" + matnr + "' AND SPRAS = 'E'"}})
		require.Len(t, r.Rows, 1)
		return strings.TrimSpace(r.Rows[0][0])
	}
	assert.NotEqual(t, "Injected", desc(), "nothing changed in SAP before a second person's yes")
	status, _ = f.decide(f.carol, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()
	row = f.action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, actionRow{ToolCallID: need.ToolCallID, UserID: "bob", DecidedBy: "carol", Success: true}, *row)
	assert.Equal(t, "Injected", desc())
}

// Switching four eyes off does not let a requester approve a write requested under it; a write
// classified before four eyes was switched on is refused where it runs; the workspace maximum
// bounds every member's policy; every change is in the audit log, which only admins read.
func TestAttack2FourEyesCannotBeToggledAroundAndEveryChangeIsAudited(t *testing.T) {
	t.Parallel()
	f := startFourEyes(t)
	ws := "/api/workspaces/" + f.env.ws

	// 1. Toggle: alice's write is requested under four eyes; she switches four eyes off, still
	// cannot approve it herself, switches it back on; bob approves.
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"four_eyes": true}))
	need := f.pending(f.send(f.token, "save a note titled Toggle"))
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"four_eyes": false, "admins_may_approve": true}))
	status, got := f.decide(f.token, need.ToolCallID, true)
	assert.Equal(t, http.StatusForbidden, status, "four eyes of the request still holds")
	assert.Equal(t, "not_allowed", got.Code)
	assert.Contains(t, got.Error, "four eyes")
	assert.Nil(t, f.action(need.ToolCallID))
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()
	row := f.action(need.ToolCallID)
	require.NotNil(t, row)
	assert.Equal(t, "bob", row.DecidedBy)

	// 2. Where it runs: bob's write is classified under run_everything without four eyes (it runs
	// without asking), but alice switches four eyes on before it runs: it is refused, nothing ran.
	f.setPolicy(f.bob, "run_everything")
	require.Equal(t, http.StatusAccepted, f.doAs(f.bob, "POST", f.path()+"/message", map[string]any{"content": "slowly save a note titled Late"}, nil))
	f.sock.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"four_eyes": true}))
	evs := f.finish()
	assert.Empty(t, toolEvents(t, evs, "approval_needed"), "classified before four eyes")
	assert.Contains(t, toolErrorOf(t, evs), "second person's approval for writes (four eyes)")
	var notes struct{ Data []actionRow }
	require.Equal(t, 200, f.do("GET", f.path()+"/actions", nil, &notes))
	require.NotEmpty(t, notes.Data)
	assert.False(t, notes.Data[0].Success, "the refused write is logged as not run")
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"four_eyes": false, "admins_may_approve": false}))

	// 3. The workspace maximum bounds bob's run_everything: his writes ask (and, without four
	// eyes, he may approve them himself); with ask_every_time even a read asks.
	var bad errorJSON
	assert.Equal(t, http.StatusBadRequest, f.doAs(f.token, "PATCH", ws, map[string]any{"max_tool_policy": "run_anything"}, &bad))
	assert.Equal(t, "invalid_policy", bad.Code)
	assert.Equal(t, http.StatusForbidden, f.setWorkspace(f.bob, map[string]any{"max_tool_policy": "run_everything"}), "only admins set the maximum")
	var w struct {
		MaxToolPolicy string `json:"max_tool_policy"`
	}
	require.Equal(t, 200, f.do("PATCH", ws, map[string]any{"max_tool_policy": "run_reads_only"}, &w))
	assert.Equal(t, "run_reads_only", w.MaxToolPolicy)
	var p toolPolicyJSON
	require.Equal(t, 200, f.doAs(f.bob, "GET", ws+"/tool-policy", nil, &p))
	assert.Equal(t, toolPolicyJSON{Policy: "run_everything", EffectivePolicy: "run_reads_only", MaxToolPolicy: "run_reads_only"}, p)
	need = f.pending(f.send(f.bob, "save a note titled Bounded"))
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()
	assert.Empty(t, toolEvents(t, f.send(f.bob, "list notes"), "approval_needed"), "reads run under run_reads_only")
	require.Equal(t, 200, f.setWorkspace(f.token, map[string]any{"max_tool_policy": "ask_every_time"}))
	need = f.pending(f.send(f.bob, "list notes"))
	status, _ = f.decide(f.bob, need.ToolCallID, true)
	require.Equal(t, 200, status)
	f.finish()

	// 4. The audit log: every change, who made it, before and after; admins only.
	type auditRow struct {
		Actor   string         `json:"actor"`
		Action  string         `json:"action"`
		Subject string         `json:"subject"`
		Before  map[string]any `json:"before"`
		After   map[string]any `json:"after"`
	}
	var all []auditRow
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20)
		var l struct {
			Data       []auditRow `json:"data"`
			NextCursor *string    `json:"next_cursor"`
			HasMore    bool       `json:"has_more"`
		}
		require.Equal(t, 200, f.do("GET", ws+"/audit-log?limit=3&cursor="+cursor, nil, &l))
		all = append(all, l.Data...)
		if !l.HasMore {
			break
		}
		cursor = *l.NextCursor
	}
	// Oldest first: the log lists newest first.
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	want := []auditRow{
		{"alice", "member.add", "bob", map[string]any{}, map[string]any{"role": "member"}},
		{"alice", "member.add", "carol", map[string]any{}, map[string]any{"role": "member"}},
		{"alice", "workspace.update", "", map[string]any{"four_eyes": false}, map[string]any{"four_eyes": true}},
		{"alice", "workspace.update", "", map[string]any{"four_eyes": true, "admins_may_approve": false}, map[string]any{"four_eyes": false, "admins_may_approve": true}},
		{"bob", "member.tool_policy", "bob", map[string]any{"policy": "run_reads_only"}, map[string]any{"policy": "run_everything"}},
		{"alice", "workspace.update", "", map[string]any{"four_eyes": false}, map[string]any{"four_eyes": true}},
		{"alice", "workspace.update", "", map[string]any{"four_eyes": true, "admins_may_approve": true}, map[string]any{"four_eyes": false, "admins_may_approve": false}},
		{"alice", "workspace.update", "", map[string]any{"max_tool_policy": "run_everything"}, map[string]any{"max_tool_policy": "run_reads_only"}},
		{"alice", "workspace.update", "", map[string]any{"max_tool_policy": "run_reads_only"}, map[string]any{"max_tool_policy": "ask_every_time"}},
	}
	assert.Equal(t, want, all)

	// A role change and a settings change are recorded too; refused changes leave no row.
	require.Equal(t, 201, f.do("POST", ws+"/members", map[string]any{"user_id": "carol", "role": "admin"}, nil))
	require.Equal(t, 200, f.do("PUT", ws+"/settings", map[string]any{"theme": "dark"}, nil))
	require.Equal(t, http.StatusBadRequest, f.do("PATCH", ws, map[string]any{"max_tool_policy": ""}, nil))
	var l struct{ Data []auditRow }
	require.Equal(t, 200, f.do("GET", ws+"/audit-log?limit=2", nil, &l))
	require.Len(t, l.Data, 2)
	assert.Equal(t, auditRow{"alice", "workspace.settings", "", map[string]any{"settings": map[string]any{}}, map[string]any{"settings": map[string]any{"theme": "dark"}}}, l.Data[0])
	assert.Equal(t, auditRow{"alice", "member.role", "carol", map[string]any{"role": "member"}, map[string]any{"role": "admin"}}, l.Data[1])

	var denied errorJSON
	assert.Equal(t, http.StatusForbidden, f.doAs(f.bob, "GET", ws+"/audit-log", nil, &denied), "members do not read the audit log")
	assert.Equal(t, "forbidden", denied.Code)
	assert.Equal(t, http.StatusBadRequest, f.do("GET", ws+"/audit-log?cursor=nope", nil, nil))
	assert.Equal(t, 200, f.doAs(f.carol, "GET", ws+"/audit-log", nil, nil), "the new admin does")
}

// The rule "a script asks for approval when it writes" is enforced where each helper call runs,
// on its actual arguments, and function modules are writes unless known to read (finding 7).
func TestAttack2ScriptWritesAreCheckedWhereTheyRun(t *testing.T) {
	t.Parallel()
	f := startFourEyes(t)

	// **{"commit": True} hides the commit from the classifier: the script runs without asking,
	// but the helper call that would commit is refused before anything is sent.
	evs := f.send(f.token, "hidden commit")
	assert.Empty(t, toolEvents(t, evs, "approval_needed"))
	msg := toolErrorOf(t, evs)
	assert.Contains(t, msg, "sap_execute_rfc with these arguments changes data")
	assert.Contains(t, msg, "nothing was sent to SAP")

	// A BAPI named like a read that reserves numbers asks first.
	need := f.pending(f.send(f.token, "reserve a material number"))
	assert.Equal(t, "alice", need.RequestedBy)
	status, _ := f.decide(f.token, need.ToolCallID, false)
	require.Equal(t, 200, status)
	f.finish()
}
