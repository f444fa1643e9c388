package landscape_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/landscape/landscapetest"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

type E = landscapetest.Entry

// fixture: workspace 1 with an ECC connection (current generation 2, with rows of a stale
// generation 1 and a build in progress, 3), an S/4HANA one (generation 1) and one without an
// index; workspace 2 with an indexed connection of its own.
type fixture struct {
	r                 landscape.Reader
	ecc, s4, none, ot landscapetest.Conn
}

func newFixture(t *testing.T) fixture {
	ctx := context.Background()
	st, _ := storetest.New(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	ws2, err := st.CreateWorkspace(ctx, org.ID, "HR", "alice")
	require.NoError(t, err)
	f := fixture{r: landscape.Reader{Index: sapindex.New(st.Pool)},
		ecc: landscapetest.Connection(t, st, ws.ID, "ECC PRD", "ECC"), s4: landscapetest.Connection(t, st, ws.ID, "S4 QAS", "S4HANA"),
		none: landscapetest.Connection(t, st, ws.ID, "BW", "ECC"), ot: landscapetest.Connection(t, st, ws2.ID, "Other", "ECC")}

	full := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	f.ecc.Graph(t, 2, full, sapindex.Counts{CustomCode: 2, CodeLines: 120, CleanCore: map[string]int64{"A": 1, "D": 1}})
	f.s4.Graph(t, 1, full, sapindex.Counts{})
	f.ot.Graph(t, 1, full, sapindex.Counts{})

	stale, building := f.ecc, f.ecc
	stale.Generation, building.Generation = 1, 3
	f.ecc.Generation = 2
	stale.Entries(t, E{Type: "PROG", Name: "ZOLD", Custom: true})
	building.Entries(t, E{Type: "PROG", Name: "ZNEW", Custom: true})
	f.ecc.Entries(t,
		E{Type: "TABL", Name: "VBAK", Package: "VA", Title: "Sales Document: Header Data"},
		E{Type: "TABL", Name: "KNA1", Package: "VS", Title: "General Data in Customer Master"},
		E{Type: "FUNC", Name: "BAPI_SALESORDER_GETLIST", Package: "VA", Title: "Sales orders", ReleaseState: "classicAPI"},
		E{Type: "PROG", Name: "ZR_SALES_REPORT", Custom: true, Package: "ZSD", Title: "Sales report"},
		E{Type: "CLAS", Name: "ZCL_BONUS", Custom: true, Package: "ZSD", Title: "Bonus"},
		E{Type: "TABL", Name: "ZSALES_BONUS", Custom: true, Package: "ZSD", Title: "Bonus table"},
		E{Category: landscape.DocCategory, Type: "DOC", Name: "package:ZSD", Title: "Package ZSD"})
	f.s4.Entries(t,
		E{Type: "TABL", Name: "VBAK", Package: "VA", Title: "Sales Document: Header Data"},
		E{Type: "TABL", Name: "KNA1", Package: "VS", Title: "Customer Master (obsolete)"},
		E{Type: "TABL", Name: "MATDOC", Package: "MB", Title: "Material documents"},
		E{Type: "PROG", Name: "ZR_SALES_REPORT", Custom: true, Package: "ZSD", Title: "Sales report", Body: "migrated"},
		E{Type: "CLAS", Name: "ZCL_BONUS", Custom: true, Package: "ZSD", Title: "Bonus"})
	f.ot.Entries(t, E{Type: "PROG", Name: "ZSECRET", Custom: true})

	f.ecc.Item(t, sapindex.PhaseCustomCode, "PROG", "ZR_SALES_REPORT", "", "ZSD", map[string]any{"type": "PROG", "name": "ZR_SALES_REPORT", "source": "REPORT zr_sales_report.\nSELECT * FROM vbak.", "lines": 2})
	f.s4.Item(t, sapindex.PhaseCustomCode, "PROG", "ZR_SALES_REPORT", "", "ZSD", map[string]any{"type": "PROG", "name": "ZR_SALES_REPORT", "source": "REPORT zr_sales_report.\nSELECT * FROM i_salesorder.", "lines": 2})
	f.ecc.Item(t, sapindex.PhaseCustomObjects, "PROG", "ZR_SALES_REPORT", "", "ZSD", map[string]any{"type": "PROG", "name": "ZR_SALES_REPORT", "package": "ZSD", "application_component": "SD-SLS"})
	f.ecc.Item(t, sapindex.PhaseCustomObjects, "CLAS", "ZCL_BONUS", "", "ZSD", map[string]any{"type": "CLAS", "name": "ZCL_BONUS", "package": "ZSD"})
	for i, to := range []string{"VBAK", "KNA1", "BAPI_SALESORDER_GETLIST"} {
		f.ecc.Item(t, sapindex.PhaseRelationships, "PROG", "ZR_SALES_REPORT", to, "ZSD", map[string]any{"from": "ZR_SALES_REPORT", "to": to, "n": i})
	}
	building.Item(t, sapindex.PhaseRelationships, "PROG", "ZNEW", "X", "", map[string]any{"to": "X"})

	reason := func(name, state, level string, successors ...map[string]string) map[string]any {
		r := map[string]any{"usage": map[string]any{"type": "TABL", "name": name, "kind": "read"}, "state": state, "level": level, "why": state + " usage"}
		if successors != nil {
			r["successors"] = successors
		}
		return r
	}
	f.ecc.CleanCore(t, "PROG", "ZR_SALES_REPORT", "ZSD", "D", []any{
		reason("BAPI_SALESORDER_GETLIST", "classicAPI", "B"),
		reason("VBAK", "notToBeReleased", "C", map[string]string{"type": "DDLS", "name": "I_SALESDOCUMENT"}),
		reason("RFC_READ_TABLE", "noAPI", "D"),
		reason("KNA1", "notToBeReleased", "C", map[string]string{"type": "DDLS", "name": "I_CUSTOMER"}),
	}, []any{map[string]any{"object": map[string]string{"type": "TABL", "name": "KNA1"}, "state": "deprecated", "successors": []any{map[string]string{"type": "TABL", "name": "BUT000"}}}})
	f.ecc.CleanCore(t, "CLAS", "ZCL_BONUS", "ZSD", "A", []any{}, []any{})
	f.ecc.CleanCore(t, "TABL", "ZSALES_BONUS", "ZSD2", "B", []any{reason("MARA", "classicAPI", "B")}, []any{})
	stale.CleanCore(t, "PROG", "ZOLD", "ZSD", "D", []any{reason("X", "noAPI", "D")}, []any{})

	f.ecc.Doc(t, "package", "ZSD", "Package ZSD", "# ZSD\n\nSales custom code.", 2)
	f.ecc.Doc(t, "er_diagram", "ZSD", "ER diagram of ZSD", "```mermaid\nerDiagram\n```", 1)
	f.ecc.Doc(t, "object", "PROG/ZR_SALES_REPORT", "ZR_SALES_REPORT", "# Report", 2)
	f.ecc.Doc(t, "business_process", "Order to cash", "Order to cash", "# O2C", 3) // a build in progress wrote it
	f.ecc.Run(t, "full", "succeeded", full)
	f.ecc.Run(t, "delta", "failed", full.Add(24*time.Hour))
	f.ecc.Run(t, "delta", "skipped", full.Add(48*time.Hour))
	return f
}

func (f fixture) graph(t *testing.T, c landscapetest.Conn) landscape.Graph {
	g, err := f.r.Graph(context.Background(), c.WorkspaceID, c.ID)
	require.NoError(t, err)
	return g
}

func TestGraphIsScopedToTheWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.r.Graph(ctx, f.ecc.WorkspaceID, f.ot.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "a connection of another workspace is not found")
	_, err = f.r.Indexed(ctx, f.none.WorkspaceID, f.none.ID)
	assert.ErrorIs(t, err, landscape.ErrNoIndex)
	g := f.graph(t, f.ecc)
	assert.Equal(t, int64(2), g.Generation)
	assert.Equal(t, "ready", g.Status)
	graphs, err := f.r.Graphs(ctx, f.ecc.WorkspaceID)
	require.NoError(t, err)
	require.Len(t, graphs, 3)
	assert.Equal(t, []string{"BW", "ECC PRD", "S4 QAS"}, []string{graphs[0].Name, graphs[1].Name, graphs[2].Name})
	assert.Equal(t, "none", graphs[0].Status)
	assert.Equal(t, "none", graphs[0].SyncStatus)
}

func TestDashboardCountsTheCurrentGenerationOnly(t *testing.T) {
	f := newFixture(t)
	d, err := f.r.Dashboard(context.Background(), f.graph(t, f.ecc), 2)
	require.NoError(t, err)
	assert.Equal(t, int64(6), d.Objects, "the doc entry and other generations are left out")
	assert.Equal(t, int64(3), d.CustomObjects)
	assert.Equal(t, []landscape.TypeCount{{Type: "TABL", Objects: 3, Custom: 1}, {Type: "CLAS", Objects: 1, Custom: 1}, {Type: "FUNC", Objects: 1}, {Type: "PROG", Objects: 1, Custom: 1}}, d.ByType)
	assert.Equal(t, []landscape.PackageCount{{Name: "ZSD", Objects: 3, Custom: 3}, {Name: "VA", Objects: 2}}, d.ByPackage, "top 2 packages")
	assert.Equal(t, []landscape.PackageCount{{Name: "SD-SLS", Objects: 1, Custom: 1}}, d.ByComponent)
	assert.Equal(t, landscape.CustomCode{Objects: 2, Lines: 120}, d.CustomCode)
	assert.Equal(t, map[string]int64{"A": 1, "B": 1, "C": 0, "D": 1}, d.CleanCore)
	assert.Equal(t, int64(3), d.Relationships)
	require.Len(t, d.LastRuns, 2, "the latest run of each mode")
	assert.Equal(t, "delta", d.LastRuns[0].Mode)
	assert.Equal(t, "skipped", d.LastRuns[0].Status)
	assert.Equal(t, "full", d.LastRuns[1].Mode)

	d, err = f.r.Dashboard(context.Background(), f.graph(t, f.none), 2)
	require.NoError(t, err)
	assert.Equal(t, "none", d.Status)
	assert.Empty(t, d.ByType)
	assert.Empty(t, d.LastRuns)
	assert.Equal(t, map[string]int64{"A": 0, "B": 0, "C": 0, "D": 0}, d.CleanCore)
}

func names(items []landscape.Object) []string {
	var out []string
	for _, o := range items {
		out = append(out, o.Type+" "+o.Name)
	}
	return out
}

func TestObjectsPageAndFilter(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g := f.graph(t, f.ecc)
	var all []string
	var cur *landscape.Cursor
	pages := 0
	for {
		p, err := f.r.Objects(ctx, g, landscape.ObjectFilter{}, cur, 4)
		require.NoError(t, err)
		all = append(all, names(p.Items)...)
		pages++
		if p.Next == nil {
			break
		}
		// Through its string form, as clients pass it.
		cur, err = landscape.DecodeCursor(p.Next.Encode(), 2)
		require.NoError(t, err)
	}
	assert.Equal(t, 2, pages)
	assert.Equal(t, []string{"CLAS ZCL_BONUS", "FUNC BAPI_SALESORDER_GETLIST", "PROG ZR_SALES_REPORT", "TABL KNA1", "TABL VBAK", "TABL ZSALES_BONUS"}, all)

	yes, no := true, false
	for _, tc := range []struct {
		f    landscape.ObjectFilter
		want []string
	}{
		{landscape.ObjectFilter{Type: "TABL"}, []string{"TABL KNA1", "TABL VBAK", "TABL ZSALES_BONUS"}},
		{landscape.ObjectFilter{Custom: &yes, Type: "TABL"}, []string{"TABL ZSALES_BONUS"}},
		{landscape.ObjectFilter{Custom: &no, Package: "VA"}, []string{"FUNC BAPI_SALESORDER_GETLIST", "TABL VBAK"}},
		{landscape.ObjectFilter{Query: "sales_"}, []string{"FUNC BAPI_SALESORDER_GETLIST" /* no: "_" is literal */, "PROG ZR_SALES_REPORT", "TABL ZSALES_BONUS"}[1:]},
		{landscape.ObjectFilter{Query: "%"}, nil},
	} {
		p, err := f.r.Objects(ctx, g, tc.f, nil, 100)
		require.NoError(t, err)
		assert.Equal(t, tc.want, names(p.Items), "%+v", tc.f)
	}
	_, err := landscape.DecodeCursor("bm90LWpzb24", 2)
	assert.ErrorIs(t, err, landscape.ErrBadCursor)
}

func TestDiffOfTwoConnections(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ecc, s4 := f.graph(t, f.ecc), f.graph(t, f.s4)
	c, err := f.r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{})
	require.NoError(t, err)
	assert.Equal(t, landscape.DiffCounts{OnlyLeft: 2, OnlyRight: 1, Changed: 2, Same: 2}, c)

	p, err := f.r.Diff(ctx, ecc, s4, landscape.DiffOnlyLeft, landscape.ObjectFilter{}, nil, 1)
	require.NoError(t, err)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "BAPI_SALESORDER_GETLIST", p.Items[0].Name)
	assert.Nil(t, p.Items[0].Right)
	require.NotNil(t, p.Next)
	p, err = f.r.Diff(ctx, ecc, s4, landscape.DiffOnlyLeft, landscape.ObjectFilter{}, p.Next, 1)
	require.NoError(t, err)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "ZSALES_BONUS", p.Items[0].Name)
	assert.Nil(t, p.Next)

	p, err = f.r.Diff(ctx, ecc, s4, landscape.DiffOnlyRight, landscape.ObjectFilter{}, nil, 10)
	require.NoError(t, err)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "MATDOC", p.Items[0].Name)
	assert.Equal(t, "Material documents", p.Items[0].Right.Title)

	p, err = f.r.Diff(ctx, ecc, s4, landscape.DiffChanged, landscape.ObjectFilter{}, nil, 10)
	require.NoError(t, err)
	require.Len(t, p.Items, 2)
	assert.Equal(t, "PROG ZR_SALES_REPORT", p.Items[0].Type+" "+p.Items[0].Name)
	assert.Equal(t, []string{"body", "source"}, p.Items[0].Fields)
	assert.True(t, p.Items[0].Custom)
	assert.Equal(t, "TABL KNA1", p.Items[1].Type+" "+p.Items[1].Name)
	assert.Equal(t, []string{"title"}, p.Items[1].Fields)
	assert.Equal(t, "Customer Master (obsolete)", p.Items[1].Right.Title)

	yes := true
	c, err = f.r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{Custom: &yes})
	require.NoError(t, err)
	assert.Equal(t, landscape.DiffCounts{OnlyLeft: 1, Changed: 1, Same: 1}, c)
}

func TestCleanCore(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g := f.graph(t, f.ecc)
	s, err := f.r.CleanCoreSummary(ctx, g, "")
	require.NoError(t, err)
	assert.Equal(t, int64(3), s.Objects)
	assert.Equal(t, []landscape.LevelShare{{Level: "A", Objects: 1, Share: 1.0 / 3}, {Level: "B", Objects: 1, Share: 1.0 / 3}, {Level: "C"}, {Level: "D", Objects: 1, Share: 1.0 / 3}}, s.Levels)

	p, err := f.r.Findings(ctx, g, landscape.FindingFilter{}, nil, 10)
	require.NoError(t, err)
	require.Len(t, p.Items, 2, "objects without findings are left out")
	prog := p.Items[0]
	assert.Equal(t, "ZR_SALES_REPORT", prog.Name)
	assert.Equal(t, "D", prog.Level)
	assert.Equal(t, 4, prog.Reasons)
	var top []struct {
		Level string `json:"level"`
		Usage struct{ Name string }
	}
	require.NoError(t, json.Unmarshal(prog.TopReasons, &top))
	require.Len(t, top, 3)
	assert.Equal(t, "RFC_READ_TABLE", top[0].Usage.Name, "worst first")
	assert.Equal(t, []string{"D", "C", "C"}, []string{top[0].Level, top[1].Level, top[2].Level})
	assert.Equal(t, "VBAK", top[1].Usage.Name, "ties keep the analysis' order")
	assert.JSONEq(t, `[{"type":"DDLS","name":"I_CUSTOMER"},{"type":"DDLS","name":"I_SALESDOCUMENT"}]`, string(prog.Successors))

	p, err = f.r.Findings(ctx, g, landscape.FindingFilter{Level: "B"}, nil, 10)
	require.NoError(t, err)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "ZSALES_BONUS", p.Items[0].Name)
	assert.JSONEq(t, `[]`, string(p.Items[0].Successors))
	p, err = f.r.Findings(ctx, g, landscape.FindingFilter{Package: "ZSD2"}, nil, 10)
	require.NoError(t, err)
	assert.Len(t, p.Items, 1)

	o, err := f.r.CleanCoreObject(ctx, g, "PROG", "ZR_SALES_REPORT")
	require.NoError(t, err)
	assert.Equal(t, "D", o.Level)
	var reasons []any
	require.NoError(t, json.Unmarshal(o.Reasons, &reasons))
	assert.Len(t, reasons, 4)
	assert.Contains(t, string(o.Conversion), "BUT000")
	_, err = f.r.CleanCoreObject(ctx, g, "PROG", "ZOLD")
	assert.ErrorIs(t, err, store.ErrNotFound, "a stale generation's analysis is not read")
}

func TestDocsAndSource(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g := f.graph(t, f.ecc)
	p, err := f.r.Docs(ctx, g, "", nil, 2)
	require.NoError(t, err)
	require.Len(t, p.Items, 2)
	assert.Equal(t, "er_diagram", p.Items[0].Kind)
	assert.Empty(t, p.Items[0].Markdown, "lists carry no Markdown")
	p, err = f.r.Docs(ctx, g, "", p.Next, 2)
	require.NoError(t, err)
	require.Len(t, p.Items, 1, "the doc of a build in progress stays hidden")
	assert.Equal(t, "package", p.Items[0].Kind)
	assert.Nil(t, p.Next)

	d, err := f.r.Doc(ctx, g, "object", "PROG/ZR_SALES_REPORT")
	require.NoError(t, err)
	assert.Equal(t, "# Report", d.Markdown)
	_, err = f.r.Doc(ctx, g, "business_process", "Order to cash")
	assert.ErrorIs(t, err, store.ErrNotFound)

	src, ok, err := f.r.Source(ctx, g, "PROG", "ZR_SALES_REPORT")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(2), src.Lines)
	assert.Contains(t, src.Source, "FROM vbak")
	src, ok, err = f.r.Source(ctx, g, "", "ZR_SALES_REPORT")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "PROG", src.Type)
	_, ok, err = f.r.Source(ctx, g, "PROG", "ZNEW")
	require.NoError(t, err)
	assert.False(t, ok)
}

// The figures over a whole index are computed once per index version: more rows under the same
// version do not show (a sync changes the version when it changes the index), a new sync does.
func TestCacheFollowsTheIndexVersion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := landscape.Reader{Index: f.r.Index, Cache: &landscape.Cache{}}
	d, err := r.Dashboard(ctx, f.graph(t, f.ecc), 20)
	require.NoError(t, err)
	require.Equal(t, int64(6), d.Objects)
	c, err := r.DiffCounts(ctx, f.graph(t, f.ecc), f.graph(t, f.s4), landscape.ObjectFilter{})
	require.NoError(t, err)
	require.Equal(t, int64(2), c.OnlyLeft)

	f.ecc.Entries(t, E{Type: "TABL", Name: "ZNEW_TABLE", Custom: true})
	d, err = r.Dashboard(ctx, f.graph(t, f.ecc), 20)
	require.NoError(t, err)
	assert.Equal(t, int64(6), d.Objects, "same version: cached")

	f.ecc.Graph(t, 2, time.Date(2026, 11, 8, 2, 0, 0, 0, time.UTC), sapindex.Counts{}) // a sync finished
	d, err = r.Dashboard(ctx, f.graph(t, f.ecc), 20)
	require.NoError(t, err)
	assert.Equal(t, int64(7), d.Objects)
	c, err = r.DiffCounts(ctx, f.graph(t, f.ecc), f.graph(t, f.s4), landscape.ObjectFilter{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), c.OnlyLeft)
	yes := true
	c, err = r.DiffCounts(ctx, f.graph(t, f.ecc), f.graph(t, f.s4), landscape.ObjectFilter{Custom: &yes})
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.OnlyLeft, "the filter is part of the key")
}

// A diff page walks a bounded window of the listed index: pages may be short or empty, and
// following next_cursor still yields every object exactly once, in order.
func TestDiffPagesWalkABoundedWindow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ecc, s4 := f.graph(t, f.ecc), f.graph(t, f.s4)
	for _, window := range []int{1, 2, 3, 100} {
		r := landscape.Reader{Index: f.r.Index, DiffWindow: window}
		yes := true
		for _, tc := range []struct {
			kind   string
			filter landscape.ObjectFilter
			want   []string
		}{
			{landscape.DiffChanged, landscape.ObjectFilter{}, []string{"PROG ZR_SALES_REPORT", "TABL KNA1"}},
			{landscape.DiffOnlyLeft, landscape.ObjectFilter{}, []string{"FUNC BAPI_SALESORDER_GETLIST", "TABL ZSALES_BONUS"}},
			{landscape.DiffOnlyRight, landscape.ObjectFilter{}, []string{"TABL MATDOC"}},
			{landscape.DiffChanged, landscape.ObjectFilter{Type: "TABL"}, []string{"TABL KNA1"}},
			{landscape.DiffOnlyLeft, landscape.ObjectFilter{Custom: &yes}, []string{"TABL ZSALES_BONUS"}},
		} {
			kind, want := tc.kind, tc.want
			var got []string
			var cur *landscape.Cursor
			pages, short := 0, 0
			for {
				p, err := r.Diff(ctx, ecc, s4, kind, tc.filter, cur, 1)
				require.NoError(t, err)
				for _, d := range p.Items {
					got = append(got, d.Type+" "+d.Name)
				}
				pages++
				if p.Next == nil {
					break
				}
				if len(p.Items) == 0 {
					short++
				}
				require.Less(t, pages, 20, "paging ends")
				cur = p.Next
			}
			assert.Equal(t, want, got, "window %d, %s %+v", window, kind, tc.filter)
			if window == 1 && kind == landscape.DiffChanged && tc.filter.Type == "" {
				assert.Positive(t, short, "a window of one object leaves pages without a changed object")
			}
		}
	}
}

// A diff's counts under a new ?q= come from the comparison cached for the pair of index
// versions: no new merge of both indexes (a row added under the same version does not show,
// as with every cached figure), and the counts match the filter exactly.
func TestDiffCountsOfANewQueryReuseTheComparison(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := landscape.Reader{Index: f.r.Index, Cache: &landscape.Cache{}}
	ecc, s4 := f.graph(t, f.ecc), f.graph(t, f.s4)
	c, err := r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{Query: "sales"})
	require.NoError(t, err)
	assert.Equal(t, landscape.DiffCounts{OnlyLeft: 2, Changed: 1}, c) // ZSALES_BONUS, BAPI_SALESORDER_GETLIST; ZR_SALES_REPORT
	f.ecc.Entries(t, E{Type: "TABL", Name: "ZSALES_NEW", Custom: true, Package: "ZSD"})
	for _, q := range []string{"SAL", "sale", "S"} {
		c, err = r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{Query: q})
		require.NoError(t, err)
		assert.Equal(t, int64(2), c.OnlyLeft, "q=%s: counted from the cached comparison, not merged again", q)
	}
	yes := true
	c, err = r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{Query: "bonus", Custom: &yes, Package: "ZSD", Type: "CLAS"})
	require.NoError(t, err)
	assert.Equal(t, landscape.DiffCounts{Same: 1}, c)
	c, err = r.DiffCounts(ctx, ecc, s4, landscape.ObjectFilter{Package: "NOPE"})
	require.NoError(t, err)
	assert.Equal(t, landscape.DiffCounts{}, c)
}
