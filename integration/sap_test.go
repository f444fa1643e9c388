package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// syncBuffer collects log output from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type connectionJSON struct {
	ID string `json:"id"`
}

// sapEnv is a workspace with two connections: "ECC" served in-process by the simulator (no
// connector URL) and "S4" reached over HTTP through the connector client and URL guard.
func sapEnv(t *testing.T, logs *syncBuffer) (*env, connectionJSON, connectionJSON) {
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = devstack.DemoRules()
		if logs != nil {
			o.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	})
	var ecc, s4 connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections",
		map[string]any{"name": "S4", "system_type": "S4HANA", "connector_url": e.stack.SAPSimURL + "/S4H"}, &s4))
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/workspaces/"+e.ws+"/connections/"+s4.ID+"/secrets/connector_key", map[string]any{"value": sapsim.S4HConnectorKey}, nil))
	return e, ecc, s4
}

// turn sends a message and returns the events until the turn ends (idle) or asks for approval.
func turn(t *testing.T, e *env, ws *socket, agentID, content string) []event {
	t.Helper()
	// A 503 (Temporal busy, e.g. a restarted worker replaying) is retried with the same
	// client_message_id, as a client does.
	body := map[string]any{"content": content, "client_message_id": uuid.NewString()}
	status := 0
	for i := 0; i < 10; i++ {
		if status = e.do("POST", "/api/agents/"+agentID+"/message", body, nil); status != http.StatusServiceUnavailable {
			break
		}
		time.Sleep(time.Second)
	}
	require.Equal(t, http.StatusAccepted, status)
	return ws.until(60*time.Second, func(ev event) bool {
		return ev.Type == "approval_needed" || (ev.Type == "status" && ev.Status == "idle")
	})
}

func toolEvents(t *testing.T, evs []event, typ string) []toolEvent {
	var out []toolEvent
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var te toolEvent
		require.NoError(t, json.Unmarshal(ev.Raw, &te))
		if typ != "tool_update" || te.Status == "done" {
			out = append(out, te)
		}
	}
	return out
}

func approve(t *testing.T, e *env, ws *socket, agentID, callID string) []event {
	t.Helper()
	require.Equal(t, http.StatusOK, e.do("POST", "/api/agents/"+agentID+"/approve",
		map[string]any{"decisions": []any{map[string]any{"tool_call_id": callID, "approved": true}}}, nil))
	return ws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
}

// readSim reads a table straight from the simulator (what a user would check in SAP).
func readSim(t *testing.T, e *env, sid string, req sap.ReadTableRequest) sap.ReadTableResponse {
	t.Helper()
	sys, ok := e.stack.Landscape.System(sid)
	require.True(t, ok)
	body, _ := json.Marshal(req)
	out, err := sys.Call(context.Background(), sap.EndpointReadTable, sapsim.Credentials{ConnectorKey: map[string]string{"ECC": sapsim.ECCConnectorKey, "S4H": sapsim.S4HConnectorKey}[sid]}, body)
	require.NoError(t, err)
	raw, _ := json.Marshal(out)
	var res sap.ReadTableResponse
	require.NoError(t, json.Unmarshal(raw, &res))
	return res
}

func TestSAPConversationReadsProposesAWriteAndMigrates(t *testing.T) {
	t.Parallel()
	e, _, _ := sapEnv(t, nil)
	agent := e.createAgent("sap")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	// A schema lookup and a table read run at once (execute_code references only reads).
	evs := turn(t, e, ws, agent.ID, "show the schema of table MARA on ECC")
	done := toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1, "events: %v", evs)
	assert.Equal(t, "execute_code", done[0].Tool)
	assert.Contains(t, done[0].Result, "MATNR")
	assert.Empty(t, toolEvents(t, evs, "approval_needed"))

	evs = turn(t, e, ws, agent.ID, "read 3 rows from table KNA1 on S4 where LAND1 <> ''")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1)
	evs = turn(t, e, ws, agent.ID, "read 3 rows from table KNA1 on ECC where LAND1 = 'DE'")
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, "KUNNR")
	assert.Contains(t, done[0].Result, `\"LAND1\": \"DE\"`)

	// A write BAPI waits for approval, then commits in the simulator.
	mara := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MARA", Fields: []string{"MATNR"}, RowCount: 1})
	require.Len(t, mara.Rows, 1)
	matnr := strings.TrimSpace(mara.Rows[0][0])
	evs = turn(t, e, ws, agent.ID, "rename material "+matnr+" on ECC to Demo bolt M8")
	need := toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1)
	assert.Equal(t, "execute_code", need[0].Tool)
	before := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '" + matnr + "' AND SPRAS = 'E'"}})
	require.Len(t, before.Rows, 1)
	assert.NotEqual(t, "Demo bolt M8", strings.TrimSpace(before.Rows[0][0]), "nothing changes before approval")
	evs = approve(t, e, ws, agent.ID, need[0].ToolCallID)
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1, "events: %v", evs)
	after := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '" + matnr + "' AND SPRAS = 'E'"}})
	require.Len(t, after.Rows, 1)
	assert.Equal(t, "Demo bolt M8", strings.TrimSpace(after.Rows[0][0]))

	// ETL from the ECC simulator to the S/4HANA simulator: mapping, a refused load without dry
	// run is impossible to reach here (the dry run comes first), load with approval, zero differences.
	evs = turn(t, e, ws, agent.ID, "map table KNA1 from ECC to S4")
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, `"target":"KUNNR"`)

	evs = turn(t, e, ws, agent.ID, "dry run customers from ECC to S4")
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1, "events: %v", evs)
	var dry struct {
		Extracted, Inserted, Failed int
		DryRun                      bool `json:"dry_run"`
	}
	require.NoError(t, json.Unmarshal([]byte(done[0].Result), &dry), done[0].Result)
	assert.True(t, dry.DryRun)
	assert.Positive(t, dry.Extracted)
	assert.Zero(t, dry.Failed, done[0].Result)
	s4Before := readSim(t, e, "S4H", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}})

	evs = turn(t, e, ws, agent.ID, "load customers from ECC to S4")
	need = toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1)
	evs = approve(t, e, ws, agent.ID, need[0].ToolCallID)
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1, "events: %v", evs)
	var load struct{ Extracted, Inserted, Failed int }
	require.NoError(t, json.Unmarshal([]byte(done[0].Result), &load), done[0].Result)
	assert.Equal(t, dry.Extracted, load.Inserted)
	s4After := readSim(t, e, "S4H", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}})
	assert.Equal(t, len(s4Before.Rows)+load.Inserted, len(s4After.Rows))

	evs = turn(t, e, ws, agent.ID, "reconcile customers from ECC to S4")
	done = toolEvents(t, evs, "tool_update")
	require.Len(t, done, 1)
	var rec struct {
		Clean            bool
		SourceCount      int `json:"source_count"`
		MissingInTarget  int `json:"missing_in_target"`
		FieldDifferences int `json:"field_differences"`
		Sampled          int
	}
	require.NoError(t, json.Unmarshal([]byte(done[0].Result), &rec), done[0].Result)
	assert.True(t, rec.Clean, done[0].Result)
	assert.Equal(t, dry.Extracted, rec.SourceCount)
	assert.Zero(t, rec.MissingInTarget)
	assert.Zero(t, rec.FieldDifferences)
	assert.Positive(t, rec.Sampled)
}

// A restricted SAP user's authorization errors reach the model as readable tool errors, and the
// user's SAP password appears nowhere but in the connector's header.
func TestRestrictedSAPUserGetsReadableErrorsAndThePasswordNeverLeaks(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e, ecc, s4 := sapEnv(t, logs)
	password := sapsim.DefaultUsers()["RESTRICTED"]
	require.NotEmpty(t, password)
	for _, c := range []connectionJSON{ecc, s4} {
		require.Equal(t, http.StatusOK, e.do("PUT", "/api/user/sap-credentials/"+c.ID, map[string]any{"sap_user": "RESTRICTED", "password": password}, nil))
	}
	agent := e.createAgent("restricted")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)

	for _, conn := range []string{"ECC", "S4"} {
		evs := turn(t, e, ws, agent.ID, "read 2 rows from table BKPF on "+conn)
		errs := toolEvents(t, evs, "tool_error")
		require.Len(t, errs, 1, "events: %v", evs)
		var te struct{ Error string }
		require.NoError(t, json.Unmarshal(evs[indexOf(evs, "tool_error")].Raw, &te))
		assert.Contains(t, te.Error, "SAP authorization failed", conn)
		assert.Contains(t, te.Error, "BKPF", conn)
	}
	// Tables outside FI stay readable for the same user.
	evs := turn(t, e, ws, agent.ID, "read 2 rows from table MARA on ECC")
	assert.Len(t, toolEvents(t, evs, "tool_update"), 1)
	// A wrong password is a logon failure that does not echo the password.
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/user/sap-credentials/"+ecc.ID, map[string]any{"sap_user": "RESTRICTED", "password": "wrong-" + password}, nil))
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table MARA on ECC")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1)

	// Search everything the product wrote: workflow histories, the event log, the transcript,
	// the action log and the logs.
	var haystack strings.Builder
	resp, err := e.stack.Deps.Temporal.WorkflowService().ListWorkflowExecutions(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.TemporalNamespace})
	require.NoError(t, err)
	require.NotEmpty(t, resp.Executions)
	for _, ex := range resp.Executions {
		it := e.stack.Deps.Temporal.GetWorkflowHistory(context.Background(), ex.Execution.WorkflowId, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			raw, _ := json.Marshal(ev)
			haystack.Write(raw)
		}
	}
	logged, err := e.stack.Deps.Bus.Tail(context.Background(), "agent:"+agent.ID, 10000)
	require.NoError(t, err)
	for _, r := range logged {
		haystack.Write(r.JSON)
	}
	var msgs, actions json.RawMessage
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+agent.ID+"/messages", nil, &msgs))
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/actions", nil, &actions))
	haystack.Write(msgs)
	haystack.Write(actions)
	haystack.WriteString(logs.String())
	require.Greater(t, haystack.Len(), 10000, "the search covered real content")
	assert.NotContains(t, haystack.String(), password)
}

func indexOf(evs []event, typ string) int {
	for i, ev := range evs {
		if ev.Type == typ {
			return i
		}
	}
	return -1
}

func TestSAPRoutesTestConnectionsAndServeSource(t *testing.T) {
	t.Parallel()
	e, ecc, s4 := sapEnv(t, nil)
	base := "/api/workspaces/" + e.ws

	var health struct {
		Data []struct {
			ConnectionID string `json:"connection_id"`
			Reachable    bool
			SystemType   string `json:"system_type"`
		}
	}
	require.Equal(t, http.StatusOK, e.do("GET", base+"/connector-health", nil, &health))
	require.Len(t, health.Data, 2)
	for _, h := range health.Data {
		assert.True(t, h.Reachable, h.ConnectionID)
	}

	var checks struct {
		OK     bool
		Checks []struct {
			Name  string
			OK    bool
			Error string
		}
	}
	for _, c := range []connectionJSON{ecc, s4} {
		require.Equal(t, http.StatusOK, e.do("POST", base+"/test-connection", map[string]any{"connection_id": c.ID}, &checks))
		assert.True(t, checks.OK, "%+v", checks)
		assert.Len(t, checks.Checks, 5)
	}
	// Unsaved settings: a wrong connector key is reported, not stored.
	require.Equal(t, http.StatusOK, e.do("POST", base+"/test-connection-preview", map[string]any{"system_type": "S4HANA", "connector_url": e.stack.SAPSimURL + "/S4H", "connector_key": "nope"}, &checks))
	assert.False(t, checks.OK)
	require.NotEmpty(t, checks.Checks)
	assert.Contains(t, checks.Checks[0].Error, "connector key")
	require.Equal(t, http.StatusOK, e.do("POST", base+"/test-connection-preview", map[string]any{"system_type": "S4HANA", "connector_url": e.stack.SAPSimURL + "/S4H", "connector_key": sapsim.S4HConnectorKey}, &checks))
	assert.True(t, checks.OK, "%+v", checks)
	// Hostile URLs are refused with the reason, before any request leaves.
	var apiErr struct{ Error, Code string }
	for _, u := range []string{"http://169.254.169.254/latest", "http://10.0.0.5", "http://2130706433", "ftp://x"} {
		require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/test-connection-preview", map[string]any{"system_type": "ECC", "connector_url": u}, &apiErr), u)
		assert.Equal(t, "blocked_url", apiErr.Code, u)
		require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/connections", map[string]any{"name": "bad", "system_type": "ECC", "connector_url": u}, &apiErr), u)
	}
	require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/connections", map[string]any{"name": "prod", "system_type": "ECC", "environment": "production", "connector_url": e.stack.SAPSimURL + "/ECC"}, &apiErr))
	assert.Contains(t, apiErr.Error, "https")

	// Source of a custom program; unknown objects are 404; several connections need connection_id.
	var custom struct {
		Objects []sap.ObjectRef
	}
	sys, _ := e.stack.Landscape.System("ECC")
	out, err := sys.Call(context.Background(), sap.EndpointSearchObjects, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{"query":"Z*","object_type":"PROG","custom_only":true}`))
	require.NoError(t, err)
	raw, _ := json.Marshal(out)
	require.NoError(t, json.Unmarshal(raw, &custom))
	require.NotEmpty(t, custom.Objects)
	prog := custom.Objects[0].Name
	var src struct {
		Source string
		Lines  int
	}
	require.Equal(t, http.StatusOK, e.do("GET", base+"/source?connection_id="+ecc.ID+"&object_type=PROG&name="+prog, nil, &src))
	assert.Contains(t, strings.ToUpper(src.Source), "REPORT")
	assert.Positive(t, src.Lines)
	assert.Equal(t, http.StatusNotFound, e.do("GET", base+"/source?connection_id="+ecc.ID+"&object_type=PROG&name=ZDOES_NOT_EXIST", nil, &apiErr))
	assert.Equal(t, http.StatusBadRequest, e.do("GET", base+"/source?object_type=PROG&name="+prog, nil, &apiErr))
	assert.Equal(t, http.StatusBadRequest, e.do("GET", base+"/source?connection_id="+ecc.ID, nil, &apiErr))

	// A connector that is down: 502 for the source, reported unreachable by the health check.
	var down connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", base+"/connections",
		map[string]any{"name": "down", "system_type": "ECC", "connector_url": "http://127.0.0.1:" + itoa(int64(freePort(t)))}, &down))
	assert.Equal(t, http.StatusBadGateway, e.do("GET", base+"/source?connection_id="+down.ID+"&object_type=PROG&name="+prog, nil, &apiErr))
	assert.Equal(t, "connector_unavailable", apiErr.Code)
	require.Equal(t, http.StatusOK, e.do("GET", base+"/connector-health?connection_id="+down.ID, nil, &health))
	require.Len(t, health.Data, 1)
	assert.False(t, health.Data[0].Reachable)
}
