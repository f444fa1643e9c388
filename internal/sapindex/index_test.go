package sapindex_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapenrich"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// fixture is a workspace with one connection on a private database.
type fixture struct {
	st   *store.Store
	x    *sapindex.Index
	ws   uuid.UUID
	conn uuid.UUID
}

func newFixture(t testing.TB) fixture {
	st, _ := storetest.New(t)
	agent := storetest.Agent(t, st)
	f := fixture{st: st, x: sapindex.New(st.Pool), ws: agent.WorkspaceID}
	f.conn = f.addConnection(t, f.ws, "ECC")
	return f
}

func (f fixture) addConnection(t testing.TB, ws uuid.UUID, name string) uuid.UUID {
	c, err := f.st.CreateConnection(context.Background(), store.Connection{WorkspaceID: ws, Name: name, SystemType: "ECC", Environment: "development", Simulated: true})
	require.NoError(t, err)
	return c.ID
}

// run writes the sync run row a page's cursor belongs to (the workflow's job in the product).
func (f fixture) run(t testing.TB, ws, conn uuid.UUID, mode string, gen int64) uuid.UUID {
	id := uuid.New()
	_, err := f.st.Pool.Exec(context.Background(), `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status, generation)
		VALUES ($1, $2, $3, 'sync/x', 'r', $4, 'manual', 'running', $5)`, id, ws, conn, mode, gen)
	require.NoError(t, err)
	return id
}

// writePhase pages items through WritePage as a phase activity does.
func (f fixture) writePhase(t testing.TB, target sapindex.Target, items []map[string]any, pageSize int) sapindex.PhaseState {
	ctx := context.Background()
	cursor := ""
	var st sapindex.PhaseState
	for start := 0; ; start += pageSize {
		end := min(start+pageSize, len(items))
		page := sap.IndexPage{Items: items[start:end], Total: len(items)}
		if end < len(items) {
			page.NextCursor = fmt.Sprint(end)
		}
		var err error
		st, err = f.x.WritePage(ctx, target, cursor, page)
		require.NoError(t, err)
		if st.Done {
			return st
		}
		cursor = st.Cursor
	}
}

func (f fixture) count(t testing.TB, table string, gen int64) int {
	var n int
	require.NoError(t, f.st.Pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE connection_id = $1 AND generation = $2`, f.conn, gen).Scan(&n))
	return n
}

// fullBuild builds and switches a generation from custom objects and catalog items.
func (f fixture) fullBuild(t testing.TB, custom, catalog []map[string]any) int64 {
	ctx := context.Background()
	gen, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	run := f.run(t, f.ws, f.conn, sapindex.ModeFull, gen)
	f.writePhase(t, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCustomObjects}, custom, 2)
	f.writePhase(t, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCatalogContext}, catalog, 2)
	f.embedAll(t, gen)
	counts, err := f.x.ComputeCounts(ctx, f.conn, gen)
	require.NoError(t, err)
	require.NoError(t, f.x.SwitchFull(ctx, f.conn, gen, 10, counts))
	return gen
}

// embedAll computes the pending embeddings of a generation with the offline model's embedder,
// as the sync's enrichment does.
func (f fixture) embedAll(t testing.TB, gen int64) {
	_, err := sapenrich.EmbedEntries(context.Background(), f.x, sapenrich.Scope{WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen},
		sapenrich.EmbedOptions{Embedder: offlineEmbedder{}}, nil)
	require.NoError(t, err)
}

// offlineEmbedder is the offline model's deterministic trigram embedding, in process.
type offlineEmbedder struct{}

func (offlineEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = offlinellm.Embed(t)
	}
	return out, nil
}

func obj(typ, name, desc, pkg string) map[string]any {
	return map[string]any{"type": typ, "name": name, "description": desc, "package": pkg, "created_by": "JSMITH", "changed_at": "2021-03-15"}
}

func std(typ, name, desc, state string) map[string]any {
	return map[string]any{"type": typ, "name": name, "description": desc, "package": "SAP", "release_state": state, "application_component": "SD"}
}

var customObjects = []map[string]any{
	obj("PROG", "ZR_SALES_REPORT", "Sales report per customer", "ZSD_REPORTS"),
	obj("FUNC", "Z_CALC_BONUS", "Calculate customer bonus from revenue", "ZSD_PRICING"),
	obj("TABL", "ZSALES_BONUS", "Sales bonus percentage per customer", "ZSD_PRICING"),
	obj("CLAS", "ZCL_PO_HELPER", "Create purchase orders from MRP proposals", "ZMM_SERVICES"),
	obj("DDLS", "ZI_SALESORDER", "Sales orders with customer", "ZSD_CDS"),
}

var catalogObjects = []map[string]any{
	std("TABL", "VBAK", "Sales Document: Header Data", "notToBeReleased"),
	std("TABL", "VBAP", "Sales Document: Item Data", "notToBeReleased"),
	std("TABL", "KNA1", "General Data in Customer Master", "classicAPI"),
	std("TABL", "MARA", "General Material Data", "classicAPI"),
	std("TABL", "BKPF", "Accounting Document Header", "notToBeReleased"),
	std("FUNC", "BAPI_SALESORDER_GETLIST", "Sales orders: list of sales orders of a customer", "classicAPI"),
	std("FUNC", "BAPI_SALESORDER_CREATEFROMDAT2", "Sales order: create sales order", "classicAPI"),
	std("FUNC", "BAPI_PO_CREATE1", "Create purchase order", "classicAPI"),
	std("FUNC", "RFC_READ_TABLE", "External access to R/3 tables via RFC", "noAPI"),
	std("CLAS", "CL_ABAP_CONTEXT_INFO", "Context information (user, date, time zone)", "released"),
}

func TestWritePageIsExactlyOnceOnRetry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gen, cur, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	assert.Equal(t, int64(1), gen)
	assert.Equal(t, int64(0), cur)
	run := f.run(t, f.ws, f.conn, sapindex.ModeFull, gen)
	target := sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCustomObjects}

	page1 := sap.IndexPage{Items: customObjects[:3], NextCursor: "3", Total: 5}
	st, err := f.x.WritePage(ctx, target, "", page1)
	require.NoError(t, err)
	assert.Equal(t, sapindex.PhaseState{Cursor: "3", Items: 3}, st)

	// The activity died after the commit and its retry writes the same page again.
	st, err = f.x.WritePage(ctx, target, "", page1)
	require.NoError(t, err)
	assert.True(t, st.Replayed)
	assert.Equal(t, "3", st.Cursor)
	assert.Equal(t, int64(3), st.Items)
	assert.Equal(t, 3, f.count(t, "workspace_sap_index", gen))
	assert.Equal(t, 3, f.count(t, "sap_search_entries", gen))

	resumed, err := f.x.PhaseCursor(ctx, run, sapindex.PhaseCustomObjects)
	require.NoError(t, err)
	assert.Equal(t, "3", resumed.Cursor)

	page2 := sap.IndexPage{Items: customObjects[3:], Total: 5}
	st, err = f.x.WritePage(ctx, target, "3", page2)
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Equal(t, int64(5), st.Items)
	st, err = f.x.WritePage(ctx, target, "3", page2) // the last page once more
	require.NoError(t, err)
	assert.True(t, st.Replayed)
	assert.Equal(t, 5, f.count(t, "workspace_sap_index", gen))
	assert.Equal(t, 5, f.count(t, "sap_search_entries", gen))

	// Pages never go into the generation readers see, nor one not handed out.
	require.NoError(t, f.x.SwitchFull(ctx, f.conn, gen, 1, sapindex.Counts{}))
	g2, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	run2 := f.run(t, f.ws, f.conn, sapindex.ModeFull, g2)
	for _, bad := range []int64{gen, g2 + 1} {
		_, err = f.x.WritePage(ctx, sapindex.Target{RunID: run2, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: bad, Phase: sapindex.PhaseCustomObjects}, "", page1)
		assert.ErrorContains(t, err, "is not a build of this connection", "generation %d", bad)
	}

	// A page of another run's connection is refused, not written.
	other := f.addConnection(t, f.ws, "S4")
	_, err = f.x.WritePage(ctx, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: other, Generation: gen, Phase: sapindex.PhaseCustomObjects}, "", page1)
	assert.ErrorIs(t, err, sapindex.ErrNoRun)
}

func TestWritePageToleratesRepeatsAndMalformedItems(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gen, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	run := f.run(t, f.ws, f.conn, sapindex.ModeFull, gen)
	target := sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCustomObjects}

	items := []map[string]any{customObjects[0], customObjects[0], {"type": "PROG"}, {"type": "PROG", "name": []any{"x"}}, nil, customObjects[1]}
	st, err := f.x.WritePage(ctx, target, "", sap.IndexPage{Items: items, NextCursor: "6"})
	require.NoError(t, err)
	assert.Equal(t, 3, st.Skipped)
	require.Len(t, st.Malformed, 3)
	assert.Contains(t, st.Malformed[0], `field "name" is missing`)
	assert.Contains(t, st.Malformed[1], `field "name" is a []interface {}`)
	// The connector repeats an item of the first page on the second: the sync goes on.
	st, err = f.x.WritePage(ctx, target, "6", sap.IndexPage{Items: []map[string]any{customObjects[1], customObjects[2]}})
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Equal(t, 3, f.count(t, "sap_search_entries", gen))

	// Enhancements of objects custom_objects listed keep the custom object's entry.
	etarget := target
	etarget.Phase = sapindex.PhaseEnhancements
	st, err = f.x.WritePage(ctx, etarget, "", sap.IndexPage{Items: []map[string]any{
		{"kind": "append", "name": "ZSALES_BONUS", "enhances": "KNA1", "description": "Append"},
		{"kind": "badi", "name": "ZEI_SD_SALES_CHECK", "enhances": "BADI_SD_SALES", "description": "Block D-rated customers"},
	}})
	require.NoError(t, err)
	assert.Equal(t, 0, st.Skipped)
	assert.Equal(t, 4, f.count(t, "sap_search_entries", gen))
	var cat string
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT category FROM sap_search_entries WHERE object_name = 'ZEI_SD_SALES_CHECK'`).Scan(&cat))
	assert.Equal(t, "enhancement", cat)
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT category FROM sap_search_entries WHERE object_name = 'ZSALES_BONUS'`).Scan(&cat))
	assert.Equal(t, "table", cat)

	_, err = f.x.WritePage(ctx, target, "6", sap.IndexPage{Items: customObjects[3:], NextCursor: "6"})
	assert.ErrorContains(t, err, "would never end")

	_, err = f.x.WritePage(ctx, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: "bogus"}, "", sap.IndexPage{})
	assert.ErrorContains(t, err, "unknown index phase")
}

func TestMapItemPerPhase(t *testing.T) {
	row, entry, err := sapindex.MapItem(sapindex.PhaseRelationships, map[string]any{"from_type": "prog", "from": "zr_sales_report", "to_type": "TABL", "to": "VBAK", "kind": "uses_table", "usage": "read", "line": 12.0})
	require.NoError(t, err)
	assert.Nil(t, entry)
	assert.Equal(t, "PROG", row.ObjectType)
	assert.Equal(t, "ZR_SALES_REPORT", row.ObjectName)
	assert.Equal(t, "TABL|VBAK|uses_table|read|12", row.ItemKey)

	_, entry, err = sapindex.MapItem(sapindex.PhaseS4Extensions, map[string]any{"kind": "custom_field", "name": "YY1_SUSTAINABILITY", "extends": "MARA", "description": "Sustainability class"})
	require.NoError(t, err)
	require.NotNil(t, entry)
	assert.Equal(t, "CUSTOM_FIELD", entry.ObjectType)
	assert.Equal(t, "MARA-YY1_SUSTAINABILITY", entry.ObjectName)
	assert.Equal(t, "extension", entry.Category)

	_, entry, err = sapindex.MapItem(sapindex.PhaseCatalogContext, std("FUNC", "BAPI_PO_CREATE1", "Create purchase order", "classicAPI"))
	require.NoError(t, err)
	assert.Equal(t, "bapi", entry.Category)
	assert.False(t, entry.Custom)
	assert.Equal(t, "classicAPI", entry.ReleaseState)

	_, _, err = sapindex.MapItem(sapindex.PhaseRelationships, map[string]any{"from_type": "PROG", "from": "X"})
	assert.ErrorContains(t, err, `field "to" is missing`)
}

func TestGenerationsReadersSeeOldUntilSwitch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g1 := f.fullBuild(t, customObjects[:2], catalogObjects[:2])

	g2, cur, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	assert.Equal(t, g1, cur)
	run := f.run(t, f.ws, f.conn, sapindex.ModeFull, g2)
	f.writePhase(t, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: g2, Phase: sapindex.PhaseCustomObjects}, customObjects, 2)

	search := func(text string) []string {
		res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: text, Mode: sapindex.SearchKeyword}, nil)
		require.NoError(t, err)
		var names []string
		for _, h := range res.Hits {
			names = append(names, h.Name)
		}
		return names
	}
	assert.NotContains(t, search("ZCL_PO_HELPER"), "ZCL_PO_HELPER", "a build in progress is invisible")
	assert.Contains(t, search("VBAK"), "VBAK")

	// Cancelled: abandon removes the build, readers still see g1.
	require.NoError(t, f.x.Abandon(ctx, f.conn, g2))
	assert.Equal(t, 0, f.count(t, "workspace_sap_index", g2))
	assert.Error(t, f.x.Abandon(ctx, f.conn, g1), "the generation readers see is never abandoned")
	assert.Contains(t, search("VBAK"), "VBAK")

	g3 := f.fullBuild(t, customObjects, nil)
	assert.Equal(t, g2+1, g3)
	assert.Contains(t, search("ZCL_PO_HELPER"), "ZCL_PO_HELPER")
	assert.NotContains(t, search("VBAK"), "VBAK", "the old generation is gone after the switch")
	assert.Equal(t, 0, f.count(t, "sap_search_entries", g1))
	assert.Error(t, f.x.SwitchFull(ctx, f.conn, g1, 0, sapindex.Counts{}), "no switch back to an older generation")

	counts, err := f.x.ComputeCounts(ctx, f.conn, g3)
	require.NoError(t, err)
	assert.Equal(t, int64(5), counts.Entries)
	assert.Equal(t, int64(5), counts.CustomObjects)
	assert.Equal(t, int64(1), counts.Tables)
	assert.Equal(t, int64(1), counts.Functions)

	_, _, err = f.x.BeginBuild(ctx, uuid.New(), f.conn, "ECC")
	assert.ErrorIs(t, err, sapindex.ErrNoConnection, "a connection of another workspace")
}

func TestMergeDeltaReplacesChangedAndRemovesDeletedObjects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g1 := f.fullBuild(t, customObjects, catalogObjects)
	rel := func(to string) map[string]any {
		return map[string]any{"from_type": "PROG", "from": "ZR_SALES_REPORT", "to_type": "TABL", "to": to, "kind": "uses_table"}
	}
	staging, cur, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	assert.Equal(t, g1, cur)
	run := f.run(t, f.ws, f.conn, sapindex.ModeDelta, staging)
	require.NoError(t, f.x.RecordChanges(ctx, run, []sap.Change{
		{Seq: 11, ObjectType: "PROG", ObjectName: "ZR_SALES_REPORT", ChangeType: "modified"},
		{Seq: 12, ObjectType: "CLAS", ObjectName: "ZCL_PO_HELPER", ChangeType: "deleted"},
		{Seq: 13, ObjectType: "CLAS", ObjectName: "ZCL_PO_HELPER", ChangeType: "deleted"},
		{Seq: 14, ObjectType: "TABL", ObjectName: "ZNEW_TABLE", ChangeType: "created"},
	}))
	require.NoError(t, f.x.RecordChanges(ctx, run, []sap.Change{{Seq: 12, ObjectType: "CLAS", ObjectName: "ZCL_PO_HELPER", ChangeType: "deleted"}}), "idempotent")
	var changes int
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT count(*) FROM sap_sync_changes WHERE run_id = $1`, run).Scan(&changes))
	assert.Equal(t, 3, changes)

	target := sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: staging, Phase: sapindex.PhaseCustomObjects}
	f.writePhase(t, target, []map[string]any{
		obj("PROG", "ZR_SALES_REPORT", "Sales report per customer and quarter", "ZSD_REPORTS"),
		obj("TABL", "ZNEW_TABLE", "Delivery slot bookings", "ZSD_PRICING"),
	}, 10)
	target.Phase = sapindex.PhaseRelationships
	f.writePhase(t, target, []map[string]any{rel("VBAK"), rel("VBAP")}, 10)

	// Before the merge readers see the old description.
	res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: "ZR_SALES_REPORT", Mode: sapindex.SearchKeyword}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "Sales report per customer", res.Hits[0].Title)

	require.NoError(t, f.x.MergeDelta(ctx, f.conn, staging, run, 14))
	res, err = sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: "ZR_SALES_REPORT", Mode: sapindex.SearchKeyword}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "Sales report per customer and quarter", res.Hits[0].Title)

	names := map[string]bool{}
	rows, err := f.st.Pool.Query(ctx, `SELECT object_name FROM sap_search_entries WHERE connection_id = $1 AND generation = $2`, f.conn, g1)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		assert.False(t, names[n], "each object once: %s", n)
		names[n] = true
	}
	require.NoError(t, rows.Err())
	assert.False(t, names["ZCL_PO_HELPER"], "deleted object gone")
	assert.True(t, names["ZNEW_TABLE"], "created object merged")
	assert.True(t, names["Z_CALC_BONUS"], "unchanged object kept")
	assert.True(t, names["VBAK"])
	assert.Len(t, names, len(customObjects)+len(catalogObjects))
	assert.Equal(t, 0, f.count(t, "sap_search_entries", staging))
	assert.Equal(t, 2, f.count(t, "workspace_sap_index", g1)-len(customObjects)-len(catalogObjects), "the relationships were merged")

	var seq int64
	require.NoError(t, f.st.Pool.QueryRow(ctx, `SELECT change_seq FROM workspace_sap_graph WHERE connection_id = $1`, f.conn).Scan(&seq))
	assert.Equal(t, int64(14), seq)

	other := f.addConnection(t, f.ws, "fresh")
	assert.ErrorIs(t, f.x.MergeDelta(ctx, other, 1, run, 1), sapindex.ErrNoIndex)
}

// An entry whose content did not change finds its embedding in the earlier generation; a changed
// one does not, so only it goes to the model.
func TestCachedEmbeddingsFindUnchangedEntries(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g1 := f.fullBuild(t, customObjects, nil)
	g2, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(t, err)
	run := f.run(t, f.ws, f.conn, sapindex.ModeFull, g2)
	changed := append([]map[string]any{obj("PROG", "ZR_SALES_REPORT", "Changed", "ZSD_REPORTS")}, customObjects[1:]...)
	f.writePhase(t, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: g2, Phase: sapindex.PhaseCustomObjects}, changed, 10)
	at := sapindex.Scoped{ConnectionID: f.conn, WorkspaceID: f.ws, Generation: g2}

	missing, err := f.x.CountMissingEmbeddings(ctx, at)
	require.NoError(t, err)
	assert.Equal(t, int64(len(customObjects)), missing)
	gens, err := f.x.OtherGenerations(ctx, at)
	require.NoError(t, err)
	assert.Equal(t, []int64{g1}, gens)
	dim := len(offlinellm.Embed("SAP"))
	cached, err := f.x.CachedEmbeddings(ctx, at, sapindex.EntryKey{}, 100, gens, dim)
	require.NoError(t, err)
	require.Len(t, cached, len(customObjects))
	var uncached []string
	for _, c := range cached {
		if c.Embedding == nil {
			uncached = append(uncached, c.ObjectName)
		}
	}
	assert.Equal(t, []string{"ZR_SALES_REPORT"}, uncached)
	other, err := f.x.CachedEmbeddings(ctx, at, sapindex.EntryKey{}, 100, gens, dim+1)
	require.NoError(t, err)
	for _, c := range other {
		assert.Nil(t, c.Embedding, "an embedding of another dimension came from another model")
	}
}
