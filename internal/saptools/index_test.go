package saptools

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
	"github.com/sapagent/sapagent/internal/tools"
)

// TestSearchIndexReadsTheIndexAndFallsBackToLiveSearch indexes the simulated ECC through its
// index phases (as the sync does), leaves S/4HANA unindexed, and searches both.
func TestSearchIndexReadsTheIndexAndFallsBackToLiveSearch(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.New(t)
	agent := storetest.Agent(t, st)
	land := sapsim.NewLandscape(sapsim.Options{})
	var conns []sapconn.Conn
	for _, sys := range []struct{ name, typ, key string }{{"ECC", "ECC", sapsim.ECCConnectorKey}, {"S4H", "S4HANA", sapsim.S4HConnectorKey}} {
		c, err := st.CreateConnection(ctx, store.Connection{WorkspaceID: agent.WorkspaceID, Name: sys.name, SystemType: sys.typ, Environment: "development", Simulated: true})
		require.NoError(t, err)
		s, _ := land.System(sys.name)
		conns = append(conns, sapconn.Conn{ID: c.ID.String(), Name: sys.name, SystemType: sys.typ, API: sapsim.InProcess{System: s, Cred: sapsim.Credentials{ConnectorKey: sys.key}}})
	}

	x := sapindex.New(st.Pool)
	ecc := uuid.MustParse(conns[0].ID)
	gen, _, err := x.BeginBuild(ctx, agent.WorkspaceID, ecc, "ECC")
	require.NoError(t, err)
	run := uuid.New()
	_, err = st.Pool.Exec(ctx, `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status, generation)
		VALUES ($1, $2, $3, 'sync/ecc', 'r1', 'full', 'manual', 'running', $4)`, run, agent.WorkspaceID, ecc, gen)
	require.NoError(t, err)
	for _, phase := range sapindex.Phases("ECC") {
		cursor := ""
		for {
			var page sap.IndexPage
			require.NoError(t, conns[0].API.Call(ctx, sapindex.Endpoint(phase), sap.IndexRequest{Cursor: cursor, Limit: 7}, &page))
			state, err := x.WritePage(ctx, sapindex.Target{RunID: run, WorkspaceID: agent.WorkspaceID, ConnectionID: ecc, Generation: gen, Phase: phase}, cursor, page)
			require.NoError(t, err)
			assert.Zero(t, state.Skipped, "%s: %v", phase, state.Malformed)
			if state.Done {
				break
			}
			cursor = state.Cursor
		}
	}
	counts, err := x.ComputeCounts(ctx, ecc, gen)
	require.NoError(t, err)
	assert.Positive(t, counts.CustomObjects)
	assert.Positive(t, counts.Relationships)
	require.NoError(t, x.SwitchFull(ctx, ecc, gen, 1, counts))

	e := New(conns)
	e.Index = sapindex.Searcher{Pool: st.Pool, WorkspaceID: agent.WorkspaceID}
	out, err := runDef(t, e, tools.SAPSearchIndex, `{"connection_id":"ECC","query":"Z_CALC_BONUS","detail":true}`)
	require.NoError(t, err)
	res := out.(SearchIndexResult)
	assert.Equal(t, "index", res.Source)
	require.NotEmpty(t, res.Objects)
	assert.Equal(t, "Z_CALC_BONUS", res.Objects[0].Name)
	assert.Equal(t, "function", res.Objects[0].Category)
	assert.True(t, res.Objects[0].Custom)
	assert.NotEmpty(t, res.Objects[0].Body)

	out, err = runDef(t, e, tools.SAPSearchIndex, `{"connection_id":"ECC","query":"BAPI_CUSTOMER_GETDETAIL2","mode":"keyword"}`)
	require.NoError(t, err)
	res = out.(SearchIndexResult)
	require.NotEmpty(t, res.Objects, "standard objects custom code uses are indexed from the catalog context")
	assert.Equal(t, "BAPI_CUSTOMER_GETDETAIL2", res.Objects[0].Name)
	assert.Equal(t, "bapi", res.Objects[0].Category)
	assert.Equal(t, "noAPI", res.Objects[0].ReleaseState)

	out, err = runDef(t, e, tools.SAPSearchIndex, `{"connection_id":"ECC","query":"bonus","category":"table","custom_only":true}`)
	require.NoError(t, err)
	res = out.(SearchIndexResult)
	require.NotEmpty(t, res.Objects)
	for _, o := range res.Objects {
		assert.Equal(t, "table", o.Category)
	}

	out, err = runDef(t, e, tools.SAPSearchIndex, `{"connection_id":"S4H","query":"ZCL*"}`)
	require.NoError(t, err)
	res = out.(SearchIndexResult)
	assert.Equal(t, "live", res.Source)
	assert.Contains(t, res.Note, "S4H has no index yet")
	assert.Contains(t, asJSON(t, res), `"name":"ZCL_PRODUCT_SUSTAINABILITY"`)
}
