package integration

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
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

// The README's SAP demo phrases, a sync and the change log through the connector chain (issue
// 19): platform → connector HTTP → sapbackend → SOAP RFC / ADT HTTP → simulator, as make dev
// runs it. Both connections have no connector URL, so the dev stack routes them through its
// connector.
func TestConnectorChainServesTheDemoPhrases(t *testing.T) {
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

	var ecc, s4 connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "S4", "system_type": "S4HANA"}, &s4))

	agent := e.createAgent("sap")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	for _, phrase := range []string{
		"show the schema of table KNA1 on ECC",
		"read 5 rows from table KNA1 on ECC where LAND1 = 'DE'",
		"rename material 7 on ECC to Hex bolt M8 A2",
		"map table KNA1 from ECC to S4",
		"dry run customers from ECC to S4",
		"load customers from ECC to S4",
		"reconcile customers from ECC to S4",
	} {
		evs := turn(t, e, ws, agent.ID, phrase)
		if need := toolEvents(t, evs, "approval_needed"); len(need) == 1 {
			evs = approve(t, e, ws, agent.ID, need[0].ToolCallID)
		}
		for _, d := range toolEvents(t, evs, "tool_update") {
			t.Logf("%q → %s: %.400s", phrase, d.Tool, d.Result)
		}
	}
	eccRun, code := e.startSync(ecc.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	r := e.awaitSync(eccRun, 3*time.Minute)
	t.Logf("sync: %s %s %s", r.Status, r.Error, r.Phases)

	sys, _ := e.stack.Landscape.System("ECC")
	out, err := sys.Call(context.Background(), sap.EndpointProbeChanges, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, []byte(`{}`))
	require.NoError(t, err)
	raw, _ := json.Marshal(out)
	t.Logf("changes: %.1000s", raw)
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "connector call") {
			t.Log(l)
		}
	}
	assert.True(t, true)
}
