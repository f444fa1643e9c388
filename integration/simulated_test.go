package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

type simConnJSON struct {
	ID           string `json:"id"`
	ConnectorURL string `json:"connector_url"`
	Simulated    bool   `json:"simulated"`
}

// In production the simulator answers only for connections created as simulated: a connection
// without a connector URL is refused on save, and one stored before the flag existed gives the
// model and the SAP routes a clear error instead of simulated data.
func TestProductionNeverServesSimulatedDataSilently(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.Environment = "production"
		o.OfflineLLM.Rules = devstack.DemoRules()
	})
	base := "/api/workspaces/" + e.ws
	var apiErr struct{ Error, Code string }

	require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &apiErr))
	assert.Equal(t, "connector_url_required", apiErr.Code)
	assert.Contains(t, apiErr.Error, `"simulated": true`)
	require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/connections",
		map[string]any{"name": "ECC", "system_type": "ECC", "simulated": true, "connector_url": "https://sap.example.com"}, &apiErr))
	assert.Equal(t, "simulated_with_url", apiErr.Code)
	require.Equal(t, http.StatusBadRequest, e.do("POST", base+"/test-connection-preview", map[string]any{"system_type": "ECC"}, &apiErr))
	assert.Equal(t, "connector_url_required", apiErr.Code)

	var demo simConnJSON
	require.Equal(t, http.StatusCreated, e.do("POST", base+"/connections", map[string]any{"name": "Demo", "system_type": "S4HANA", "simulated": true, "credential_mode": "technical_user_reads"}, &demo))
	assert.True(t, demo.Simulated)
	var checks struct{ OK bool }
	require.Equal(t, http.StatusOK, e.do("POST", base+"/test-connection-preview", map[string]any{"system_type": "ECC", "simulated": true}, &checks))
	assert.True(t, checks.OK)

	// A connection stored before the flag existed: no URL, not simulated.
	var legacy simConnJSON
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `INSERT INTO workspace_connections (id, workspace_id, name, system_type)
		VALUES (gen_random_uuid(), $1, 'ECC', 'ECC') RETURNING id`, e.ws).Scan(&legacy.ID))

	var health struct {
		Data []struct {
			ConnectionID string `json:"connection_id"`
			Reachable    bool
			Error        string
			SystemID     string `json:"system_id"`
		}
	}
	require.Equal(t, http.StatusOK, e.do("GET", base+"/connector-health", nil, &health))
	require.Len(t, health.Data, 2)
	for _, h := range health.Data {
		if h.ConnectionID == legacy.ID {
			assert.False(t, h.Reachable)
			assert.Contains(t, h.Error, "connection ECC has no connector URL")
			assert.Empty(t, h.SystemID, "no simulated system answered")
		} else {
			assert.True(t, h.Reachable, "the simulated connection works: %+v", h)
		}
	}
	assert.Equal(t, http.StatusUnprocessableEntity, e.do("GET", base+"/source?connection_id="+legacy.ID+"&object_type=PROG&name=ZR_SALES_REPORT", nil, &apiErr))
	assert.Equal(t, "connection_unusable", apiErr.Code)

	// The model gets the same sentence as a tool error, never simulated rows.
	agent := e.createAgent("prod")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	evs := turn(t, e, ws, agent.ID, "read 2 rows from table KNA1 on ECC")
	assert.Empty(t, toolEvents(t, evs, "tool_update"), "no rows came back: %v", evs)
	i := indexOf(evs, "tool_error")
	require.GreaterOrEqual(t, i, 0, "events: %v", evs)
	var te struct{ Error string }
	require.NoError(t, json.Unmarshal(evs[i].Raw, &te))
	assert.Contains(t, te.Error, "has no connector URL")
	assert.NotContains(t, te.Error, "KUNNR")

	// Renaming the old row is allowed; saving it without a URL again is not, unless simulated.
	require.Equal(t, http.StatusOK, e.do("PATCH", base+"/connections/"+legacy.ID, map[string]any{"name": "ECC old"}, nil))
	require.Equal(t, http.StatusBadRequest, e.do("PATCH", base+"/connections/"+legacy.ID, map[string]any{"connector_url": ""}, &apiErr))
	assert.Equal(t, "connector_url_required", apiErr.Code)
	require.Equal(t, http.StatusOK, e.do("PATCH", base+"/connections/"+legacy.ID, map[string]any{"simulated": true, "credential_mode": "technical_user_reads"}, &legacy))
	assert.True(t, legacy.Simulated)
	require.Equal(t, http.StatusOK, e.do("GET", base+"/connector-health?connection_id="+legacy.ID, nil, &health))
	require.Len(t, health.Data, 1)
	assert.True(t, health.Data[0].Reachable, "%+v", health.Data[0])
	// A real connector URL replaces the simulator.
	require.Equal(t, http.StatusOK, e.do("PATCH", base+"/connections/"+legacy.ID, map[string]any{"connector_url": "https://sap.example.com/ecc"}, &legacy))
	assert.False(t, legacy.Simulated)
}

// In development a connection without a connector URL is simulated, and says so.
func TestDevelopmentMarksConnectionsWithoutURLSimulated(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	base := "/api/workspaces/" + e.ws
	var c simConnJSON
	require.Equal(t, http.StatusCreated, e.do("POST", base+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &c))
	assert.True(t, c.Simulated)
	require.Equal(t, http.StatusOK, e.do("PATCH", base+"/connections/"+c.ID, map[string]any{"connector_url": e.stack.SAPSimURL + "/ECC"}, &c))
	assert.False(t, c.Simulated)
	var apiErr struct{ Error, Code string }
	require.Equal(t, http.StatusBadRequest, e.do("PATCH", base+"/connections/"+c.ID, map[string]any{"simulated": true}, &apiErr))
	assert.Equal(t, "simulated_with_url", apiErr.Code)
	require.Equal(t, http.StatusOK, e.do("PATCH", base+"/connections/"+c.ID, map[string]any{"connector_url": "", "simulated": true}, &c))
	assert.True(t, c.Simulated)
	assert.Empty(t, c.ConnectorURL)
}
