package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// The README's SAP demo phrases, a full sync and a delta from the change log through the
// connector chain (issue 19), as make dev runs it: platform → connector HTTP → sapbackend →
// SOAP RFC / ADT HTTP → simulator. Both connections have no connector URL, so the dev stack
// routes them through its connector; the connector's own log shows every call it served.
func TestConnectorChainServesTheDemoPhrases(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = devstack.DemoRules()
		o.SAPRoute = config.DevSAPRouteConnector
		o.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	require.NotEmpty(t, e.stack.ConnectorURL)
	res, err := http.Get(e.stack.ConnectorURL + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	base := "/api/workspaces/" + e.ws
	var ecc, s4 connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", base+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	require.Equal(t, http.StatusCreated, e.do("POST", base+"/connections", map[string]any{"name": "S4", "system_type": "S4HANA"}, &s4))
	var checks struct {
		OK bool
	}
	for _, c := range []connectionJSON{ecc, s4} {
		require.Equal(t, http.StatusOK, e.do("POST", base+"/test-connection", map[string]any{"connection_id": c.ID}, &checks))
		assert.True(t, checks.OK, "test-connection of %s through the connector", c.ID)
	}

	agent := e.createAgent("sap")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	done := toolEvents(t, turn(t, e, ws, agent.ID, "show the schema of table KNA1 on ECC"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, "KUNNR CHAR 10 Customer Number", "DDIF_FIELDINFO_GET's field texts")
	assert.Contains(t, done[0].Result, "General Data in Customer Master", "DD02T's table text")

	done = toolEvents(t, turn(t, e, ws, agent.ID, "read 5 rows from table KNA1 on ECC where LAND1 = 'DE'"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, `\"LAND1\": \"DE\"`)
	assert.NotContains(t, done[0].Result, `\"LAND1\": \"US\"`, "RFC_READ_TABLE applied the WHERE")

	evs := turn(t, e, ws, agent.ID, "rename material 7 on ECC to Hex bolt M8 A2")
	need := toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1, "a BAPI write waits for approval")
	done = toolEvents(t, approve(t, e, ws, agent.ID, need[0].ToolCallID), "tool_update")
	require.Len(t, done, 1)
	after := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '000000000000000007' AND SPRAS = 'E'"}})
	require.Len(t, after.Rows, 1)
	assert.Equal(t, "Hex bolt M8 A2", strings.TrimSpace(after.Rows[0][0]), "the BAPI and its commit ran in the simulator")

	done = toolEvents(t, turn(t, e, ws, agent.ID, "map table KNA1 from ECC to S4"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, `"target":"KUNNR"`)

	// ETL of customers into S/4HANA's KNA1 goes through write_table, which the connector maps
	// onto the released API_BUSINESS_PARTNER there (a business partner with its address, the
	// customer role and A_Customer; CVI writes KNA1). The dry run validates every row and saves
	// nothing; after its approval the load creates them; reconcile finds zero differences.
	src := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}})
	s4Before := readSim(t, e, "S4H", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}})
	done = toolEvents(t, turn(t, e, ws, agent.ID, "dry run customers from ECC to S4"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, `"failed":0`, "the dry run refused no row")
	assert.Contains(t, done[0].Result, fmt.Sprintf(`"inserted":%d`, len(src.Rows)))
	assert.Len(t, readSim(t, e, "S4H", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}}).Rows, len(s4Before.Rows), "a dry run saves nothing")
	evs = turn(t, e, ws, agent.ID, "load customers from ECC to S4")
	need = toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1, "the load waits for approval")
	done = toolEvents(t, approve(t, e, ws, agent.ID, need[0].ToolCallID), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, fmt.Sprintf(`"inserted":%d`, len(src.Rows)))
	assert.Contains(t, done[0].Result, `"failed":0`)
	s4After := readSim(t, e, "S4H", sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}})
	assert.Len(t, s4After.Rows, len(s4Before.Rows)+len(src.Rows), "every customer was loaded")
	bps := readSim(t, e, "S4H", sap.ReadTableRequest{Table: "BUT000", Fields: []string{"BU_TYPE"}, Options: []string{"PARTNER = '" + src.Rows[0][0] + "'"}})
	require.Len(t, bps.Rows, 1, "through the business partner, not into KNA1 directly")
	assert.Equal(t, "2", strings.TrimSpace(bps.Rows[0][0]))
	done = toolEvents(t, turn(t, e, ws, agent.ID, "reconcile customers from ECC to S4"), "tool_update")
	require.Len(t, done, 1)
	assert.Contains(t, done[0].Result, `"clean":true`, "reconcile finds zero differences")

	// A full sync of ECC through the connector: every phase, the simulator's custom objects once.
	run, code := e.startSync(ecc.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	r := e.awaitSync(run, 3*time.Minute)
	require.Equal(t, "succeeded", r.Status, "%s %s", r.Error, r.Phases)
	assert.Positive(t, r.Counts.Tables)
	assert.Positive(t, r.Counts.BAPIs)
	assert.Positive(t, r.Counts.Relationships)
	sys, _ := e.stack.Landscape.System("ECC")
	page, err := sys.Call(context.Background(), sap.EndpointIndexCustomObjects, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{"limit":1}`))
	require.NoError(t, err)
	var live struct {
		Total int `json:"total"`
	}
	raw, _ := json.Marshal(page)
	require.NoError(t, json.Unmarshal(raw, &live))
	q := `SELECT count(*) FROM workspace_sap_index i JOIN workspace_sap_graph g ON g.connection_id = i.connection_id AND g.generation = i.generation
		WHERE i.connection_id = $1 AND i.phase = 'custom_objects'`
	assert.EqualValues(t, live.Total, e.indexRows(ecc.ID, q))

	// The change log: an object activated in SAP reaches the index through probe_changes.
	require.NoError(t, sys.ActivateObject("PROG", "ZCHAIN_NEW_REPORT", "Report added by a transport", "ZFI", "REPORT zchain_new_report.\n"))
	delta, code := e.startSync(ecc.ID, "delta")
	require.Equal(t, http.StatusAccepted, code)
	d := e.awaitSync(delta, 2*time.Minute)
	require.Equal(t, "succeeded", d.Status, "%s %s", d.Error, d.Phases)
	assert.EqualValues(t, live.Total+1, e.indexRows(ecc.ID, q))

	// Every call crossed the connector: its log names each endpoint the demo and the syncs used.
	served := map[string]bool{}
	line := regexp.MustCompile(`msg="connector call" system=(\S+) endpoint=(\S+) user=(\S+) status=(\d+)`)
	for _, m := range line.FindAllStringSubmatch(logs.String(), -1) {
		served[m[1]+" "+m[2]+" "+m[4]] = true
	}
	for _, want := range []string{"ECC system_info 200", "S4H system_info 200", "ECC table_schema 200", "ECC read_table 200", "ECC execute_rfc 200",
		"S4H read_table 200", "S4H write_table 200", "ECC index/custom_objects 200", "ECC index/relationships 200", "ECC index/custom_code 200",
		"ECC index/catalog_context 200", "ECC index/enhancements 200", "ECC probe_changes 200"} {
		assert.True(t, served[want], "the connector served %s; it served %v", want, served)
	}
}
