package sapsim

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

var allPhases = []string{sap.EndpointIndexCustomObjects, sap.EndpointIndexRelationships, sap.EndpointIndexCustomCode,
	sap.EndpointIndexCatalogContext, sap.EndpointIndexEnhancements}

func generated(t *testing.T, n int) *System {
	s, ok := NewLandscape(Options{GeneratedObjects: n}).System("ECC")
	require.True(t, ok)
	return s
}

// itemKey is how a consumer keys an item of a phase.
func itemKey(endpoint string, it map[string]any) string {
	switch endpoint {
	case sap.EndpointIndexRelationships:
		return fmt.Sprint(it["from_type"], "/", it["from"], "->", it["to_type"], "/", it["to"], "/", it["usage"])
	case sap.EndpointIndexEnhancements, sap.EndpointIndexS4Extensions:
		return fmt.Sprint(it["kind"], "/", it["name"], "/", it["extends"], it["enhances"])
	}
	return fmt.Sprint(it["type"], "/", it["name"])
}

// pageAll reads a phase to its end and checks that no item repeats.
func pageAll(t *testing.T, s *System, endpoint string, req sap.IndexRequest) ([]map[string]any, int) {
	t.Helper()
	var all []map[string]any
	seen := map[string]bool{}
	total := -1
	for pages := 0; ; pages++ {
		require.Less(t, pages, 100000)
		p, err := call[sap.IndexPage](t, s, endpoint, eccKey, req)
		require.NoError(t, err)
		if total < 0 {
			total = p.Total
		}
		for _, it := range p.Items {
			k := itemKey(endpoint, it)
			require.False(t, seen[k], "%s: %s served twice", endpoint, k)
			seen[k] = true
		}
		all = append(all, p.Items...)
		if p.NextCursor == "" {
			return all, total
		}
		require.NotEmpty(t, p.Items, "a page with a next cursor has items")
		req.Cursor = p.NextCursor
	}
}

func TestPagingIsCompleteAndUniqueForEveryLimit(t *testing.T) {
	s := generated(t, 4000)
	for _, ep := range allPhases {
		one, total := pageAll(t, s, ep, sap.IndexRequest{Limit: 1000})
		assert.Equal(t, total, len(one), "%s: total matches the items served", ep)
		assert.NotEmpty(t, one, ep)
		for _, limit := range []int{1, 7, 200} {
			other, _ := pageAll(t, s, ep, sap.IndexRequest{Limit: limit})
			require.Equal(t, len(one), len(other), "%s limit %d", ep, limit)
			for i := range one {
				require.Equal(t, itemKey(ep, one[i]), itemKey(ep, other[i]), "%s limit %d item %d", ep, limit, i)
			}
		}
	}
	p, err := call[sap.IndexPage](t, s, sap.EndpointIndexCatalogContext, eccKey, sap.IndexRequest{Limit: 5000})
	require.NoError(t, err)
	assert.Equal(t, 1000, len(p.Items), "the page limit is at most 1000")
	p, err = call[sap.IndexPage](t, s, sap.EndpointIndexCustomObjects, eccKey, sap.IndexRequest{})
	require.NoError(t, err)
	assert.Len(t, p.Items, 200, "the default page limit")
	for _, bad := range []string{"5", "not base64!", "eHx8", p.NextCursor + "x"} {
		_, err = call[sap.IndexPage](t, s, sap.EndpointIndexCustomObjects, eccKey, sap.IndexRequest{Cursor: bad})
		require.Error(t, err, bad)
		assert.Equal(t, sap.ErrBadRequest, sapCode(t, err), bad)
	}
	// A catalog cursor is no cursor of another phase.
	cat, err := call[sap.IndexPage](t, s, sap.EndpointIndexCatalogContext, eccKey, sap.IndexRequest{Limit: 3})
	require.NoError(t, err)
	_, err = call[sap.IndexPage](t, s, sap.EndpointIndexCustomObjects, eccKey, sap.IndexRequest{Cursor: cat.NextCursor})
	assert.Equal(t, sap.ErrBadRequest, sapCode(t, err))
}

func TestGeneratedLandscape(t *testing.T) {
	s := generated(t, 20000)
	objs, _ := pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 1000})
	assert.Equal(t, 1000+len(customObjects("ECC")), len(objs), "n/20 generated custom objects besides the built-in ones")
	types := map[string]int{}
	for _, o := range objs {
		name := o["name"].(string)
		assert.True(t, isCustomName(name) || name == "MV45AFZZ", name)
		assert.True(t, strings.HasPrefix(o["package"].(string), "Z") || o["package"] == "VA", name)
		types[o["type"].(string)]++
	}
	assert.Greater(t, types["PROG"], 300)
	assert.Greater(t, types["CLAS"], 250)
	assert.Greater(t, types["DDLS"], 90)

	cat, total := pageAll(t, s, sap.EndpointIndexCatalogContext, sap.IndexRequest{Limit: 1000})
	assert.Equal(t, total, len(cat))
	assert.GreaterOrEqual(t, len(cat), 20000)
	states, ctypes := map[string]int{}, map[string]int{}
	byName := map[string]map[string]any{}
	for _, it := range cat {
		states[it["release_state"].(string)]++
		ctypes[it["type"].(string)]++
		byName[it["name"].(string)] = it
		for _, f := range []string{"type", "name", "description", "package", "application_component", "release_state", "successor"} {
			require.Contains(t, it, f)
		}
	}
	for _, st := range []string{"released", "classicAPI", "notToBeReleased", "noAPI", "deprecated"} {
		assert.Greater(t, states[st], 500, "%s in %v", st, states)
	}
	for _, ty := range []string{"TABL", "FUNC", "CLAS", "INTF", "DDLS", "PROG", "DTEL", "DOMA"} {
		assert.Greater(t, ctypes[ty], 500, "%s in %v", ty, ctypes)
	}
	bapis := 0
	for name, it := range byName {
		if strings.HasPrefix(name, "BAPI_") {
			bapis++
		}
		if it["release_state"] == "deprecated" || (it["release_state"] == "notToBeReleased" && it["successor"] != "") {
			if succ, ok := byName[it["successor"].(string)]; ok {
				assert.Equal(t, "released", succ["release_state"], "the successor of %s is released", name)
			}
		}
	}
	assert.Greater(t, bapis, 1900)
	// Real SAP names keep the Cloudification Repository's state.
	assert.Equal(t, "notToBeReleased", byName["BSEG"]["release_state"])
	assert.Equal(t, "I_OPERATIONALACCTGDOCITEM", byName["BSEG"]["successor"])
	assert.Equal(t, "FI-GL", byName["BSEG"]["application_component"])
	assert.Equal(t, "classicAPI", byName["BAPI_ACC_DOCUMENT_POST"]["release_state"])
	assert.Equal(t, "released", byName["CL_ABAP_CONTEXT_INFO"]["release_state"])

	// Relationships of generated code point at real and generated standard objects and at
	// custom objects; every used standard object is in the catalog.
	rels, total := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	assert.Equal(t, total, len(rels))
	usages := map[string]int{}
	for _, r := range rels {
		usages[r["usage"].(string)]++
		to := r["to"].(string)
		if !isCustomName(to) && r["to_type"] != "BADI" && r["to_type"] != "MSAG" {
			_, ok := byName[to]
			assert.True(t, ok, "%s %s used by %s is in the catalog", r["to_type"], to, r["from"])
		}
	}
	for _, u := range []string{"read", "write", "call", "type", "instantiate", "implement", "association"} {
		assert.Greater(t, usages[u], 10, "%s in %v", u, usages)
	}

	// Where-used finds generated users of real, generated standard and generated custom objects.
	for _, name := range []string{"BSEG", s.gen.stdName(20*30 + 0), s.gen.customName(49)} {
		wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: name, Limit: 500})
		require.NoError(t, err)
		assert.NotEmpty(t, wu.Usages, name)
		for _, u := range wu.Usages {
			assert.Contains(t, strings.ToUpper(u.Snippet), name, "%s: %+v", name, u)
		}
	}
	src, err := call[sap.ABAPSource](t, s, sap.EndpointABAPSource, eccKey, sap.ABAPSourceRequest{Name: s.gen.customName(4)})
	require.NoError(t, err)
	assert.Contains(t, src.Source, "CLASS "+strings.ToLower(s.gen.customName(4)))
}

// The generator's relationship counts per shape hold for every object (totals rely on them),
// and generated names parse back to their index.
func TestGeneratedShapesAndNames(t *testing.T) {
	g := newGenerator(100000)
	for i := 0; i < g.custom; i += 37 {
		o := g.customObject(i, 3, true)
		if o.Type != "TABL" {
			assert.Equal(t, g.relCount(i), len(abapref.Extract(o.Type, o.Source)), "object %d %s", i, o.Name)
		}
		got, ok := g.customIndex(o.Type, o.Name)
		assert.True(t, ok && got == i, o.Name)
	}
	names := map[string]bool{}
	for j := 0; j < g.std; j += 7 {
		o := g.stdObject(j)
		got, ok := g.stdIndex(o.typ, o.name)
		require.True(t, ok && got == j, o.name)
		require.False(t, names[o.typ+o.name])
		names[o.typ+o.name] = true
		if o.typ == "TABL" {
			assert.LessOrEqual(t, len(o.name), 16, o.name)
		}
	}
}

func TestDeltasAfterSeq(t *testing.T) {
	s := generated(t, 2000)
	start := s.Info().ChangeSeq
	for _, ep := range allPhases {
		p, err := call[sap.IndexPage](t, s, ep, eccKey, sap.IndexRequest{AfterSeq: start})
		require.NoError(t, err)
		assert.Empty(t, p.Items, "%s: nothing changed yet", ep)
	}
	touched := s.TouchCustomObjects(30)
	require.Len(t, touched, 30)
	require.NoError(t, s.ActivateObject("PROG", "ZR_NEW_FI_CHECK", "New FI check", "ZFI_REPORTS", `REPORT zr_new_fi_check.
SELECT SINGLE * FROM bseg INTO @DATA(ls_bseg) WHERE bukrs = '1000'.
CALL FUNCTION 'BAPI_ACC_DOCUMENT_POST'.`))
	require.NoError(t, s.ActivateObject("PROG", "ZR_SALES_REPORT", "", "", "REPORT zr_sales_report.\nSELECT * FROM vbak INTO TABLE @DATA(gt).\n"))
	require.NoError(t, s.DeleteObject("PROG", "ZR_MATERIAL_UPLOAD"))
	require.NoError(t, s.DeleteObject(s.gen.customType(1), s.gen.customName(1)))
	require.NoError(t, s.ChangeStandardObject("TABL", "BSEG"))
	assert.Error(t, s.DeleteObject("PROG", "ZR_NOPE"))
	assert.Error(t, s.ActivateObject("PROG", "RSNOPE", "", "", ""))

	objs, total := pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{AfterSeq: start, Limit: 7})
	assert.Equal(t, total, len(objs))
	names := map[string]bool{}
	for _, o := range objs {
		names[o["name"].(string)] = true
	}
	want := append([]string{"ZR_NEW_FI_CHECK", "ZR_SALES_REPORT"}, touched...)
	sort.Strings(want)
	var got []string
	for n := range names {
		got = append(got, n)
	}
	sort.Strings(got)
	if s.gen.customName(1) == touched[1] { // touched then deleted: a deleted object has no items
		want = append(want[:0:0], want...)
		for i, n := range want {
			if n == touched[1] {
				want = append(want[:i], want[i+1:]...)
				break
			}
		}
	}
	assert.Equal(t, want, got)
	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{AfterSeq: start})
	var fromNew []string
	for _, r := range rels {
		if r["from"] == "ZR_NEW_FI_CHECK" {
			fromNew = append(fromNew, fmt.Sprint(r["to"], ":", r["usage"], ":", r["kind"], ":", r["line"]))
		}
	}
	assert.ElementsMatch(t, []string{"BSEG:read:uses_table:2", "BAPI_ACC_DOCUMENT_POST:call:calls_function:3"}, fromNew)
	cat, _ := pageAll(t, s, sap.EndpointIndexCatalogContext, sap.IndexRequest{AfterSeq: start})
	require.Len(t, cat, 1)
	assert.Equal(t, "BSEG", cat[0]["name"])

	changes, err := call[sap.ProbeChangesResponse](t, s, sap.EndpointProbeChanges, eccKey, sap.ProbeChangesRequest{AfterSeq: start, Limit: 10})
	require.NoError(t, err)
	assert.True(t, changes.More)
	assert.Len(t, changes.Changes, 10)
	var all []sap.Change
	for after := start; ; {
		c, err := call[sap.ProbeChangesResponse](t, s, sap.EndpointProbeChanges, eccKey, sap.ProbeChangesRequest{AfterSeq: after, Limit: 10})
		require.NoError(t, err)
		all = append(all, c.Changes...)
		if !c.More {
			break
		}
		after = c.Changes[len(c.Changes)-1].Seq
	}
	assert.Len(t, all, 30+2+2+1)
	deleted := map[string]bool{}
	for _, c := range all {
		if c.ChangeType == "deleted" {
			deleted[c.ObjectName] = true
		}
	}
	assert.Equal(t, map[string]bool{"ZR_MATERIAL_UPLOAD": true, s.gen.customName(1): true}, deleted)

	// The full index reflects the changes too.
	full, total := pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 1000})
	assert.Equal(t, total, len(full))
	in := map[string]bool{}
	for _, o := range full {
		in[o["name"].(string)] = true
	}
	assert.True(t, in["ZR_NEW_FI_CHECK"])
	assert.False(t, in["ZR_MATERIAL_UPLOAD"])
	assert.False(t, in[s.gen.customName(1)])
	wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "BAPI_ACC_DOCUMENT_POST"})
	require.NoError(t, err)
	require.NotEmpty(t, wu.Usages)
	assert.Equal(t, "ZR_NEW_FI_CHECK", wu.Usages[0].Name, "loaded objects come first")

	// Activating a generated object's name replaces it: listed once, with the new source.
	g := s.gen.customName(10)
	require.NoError(t, s.ActivateObject(s.gen.customType(10), g, "", "", "REPORT x.\nSELECT * FROM mara INTO TABLE @DATA(x).\n"))
	full, _ = pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 1000})
	n := 0
	for _, o := range full {
		if o["name"] == g {
			n++
		}
	}
	assert.Equal(t, 1, n)
}

func TestWhereUsedFromRealABAP(t *testing.T) {
	s := ecc(t)
	src := `REPORT zr_fi_posting_check MESSAGE-ID zfi.
* SELECT * FROM vbak in a comment is no reference
TABLES: t001.
DATA: ls_bkpf TYPE bkpf,
      lt_bseg TYPE STANDARD TABLE OF bseg,
      lo_log  TYPE REF TO cl_bal_logobj,
      lv_text TYPE string VALUE 'SELECT * FROM lfa1'.
SELECT h~belnr, s~buzei FROM bkpf AS h
  INNER JOIN bseg AS s ON s~belnr = h~belnr
  INTO TABLE @DATA(lt_items).
INSERT zfi_log FROM @( VALUE #( belnr = '1' ) ).
UPDATE zfi_log SET status = 'X' WHERE belnr = '1'.
MODIFY zfi_log FROM @ls_bkpf.
DELETE FROM zfi_log WHERE belnr = '2'.
CALL FUNCTION 'BAPI_ACC_DOCUMENT_POST' TABLES return = lt_bseg.
lo_log = NEW cl_bal_logobj( ).
DATA(lv_user) = cl_abap_context_info=>get_user_technical_name( ).
CALL METHOD cl_gui_frontend_services=>gui_download EXPORTING filename = 'x'.
DATA: BEGIN OF ls_s.
        INCLUDE STRUCTURE bapiret2.
DATA: END OF ls_s.
CALL TRANSACTION 'FB03'.
SUBMIT rfbibl00 AND RETURN.
INCLUDE zfi_posting_forms.
`
	require.NoError(t, s.ActivateObject("PROG", "ZR_FI_POSTING_CHECK", "Posting check", "ZFI", src))
	require.NoError(t, s.ActivateObject("DDLS", "ZI_FI_ITEMS", "FI items", "ZFI", `@AbapCatalog.sqlViewName: 'ZIFIITEMS'
define view ZI_FI_ITEMS as select from bseg
  inner join bkpf on bkpf.belnr = bseg.belnr
  association [0..1] to I_CompanyCode as _CompanyCode on _CompanyCode.CompanyCode = bseg.bukrs
{ key bseg.belnr, _CompanyCode }`))
	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	got := map[string]bool{}
	for _, r := range rels {
		if r["from"] == "ZR_FI_POSTING_CHECK" || r["from"] == "ZI_FI_ITEMS" {
			got[fmt.Sprint(r["from"], " ", r["to_type"], " ", r["to"], " ", r["usage"], " ", r["kind"])] = true
		}
	}
	for _, w := range []string{
		"ZR_FI_POSTING_CHECK TABL BKPF read uses_table", "ZR_FI_POSTING_CHECK TABL BSEG read uses_table",
		"ZR_FI_POSTING_CHECK TABL BKPF type uses_table", "ZR_FI_POSTING_CHECK TABL ZFI_LOG write uses_table",
		"ZR_FI_POSTING_CHECK FUNC BAPI_ACC_DOCUMENT_POST call calls_function",
		"ZR_FI_POSTING_CHECK CLAS CL_BAL_LOGOBJ instantiate uses_class", "ZR_FI_POSTING_CHECK CLAS CL_BAL_LOGOBJ type uses_class",
		"ZR_FI_POSTING_CHECK CLAS CL_ABAP_CONTEXT_INFO call uses_class", "ZR_FI_POSTING_CHECK CLAS CL_GUI_FRONTEND_SERVICES call uses_class",
		"ZR_FI_POSTING_CHECK TABL BAPIRET2 type uses_table", "ZR_FI_POSTING_CHECK TRAN FB03 call uses",
		"ZR_FI_POSTING_CHECK PROG RFBIBL00 call uses", "ZR_FI_POSTING_CHECK PROG ZFI_POSTING_FORMS include includes",
		"ZR_FI_POSTING_CHECK TABL T001 type uses_table",
		"ZI_FI_ITEMS TABL BSEG read uses_table", "ZI_FI_ITEMS TABL BKPF read uses_table", "ZI_FI_ITEMS DDLS I_COMPANYCODE association uses_view",
	} {
		assert.True(t, got[w], "missing %q in %v", w, got)
	}
	for k := range got {
		assert.NotContains(t, k, "VBAK", "comments are no references")
		assert.NotContains(t, k, "LFA1", "string literals are no references")
	}
	// Where-used answers for SAP objects the simulator has no definition of.
	for _, name := range []string{"CL_BAL_LOGOBJ", "RFBIBL00", "I_COMPANYCODE"} {
		wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: name})
		require.NoError(t, err)
		require.NotEmpty(t, wu.Usages, name)
	}
	cat, _ := pageAll(t, s, sap.EndpointIndexCatalogContext, sap.IndexRequest{Limit: 1000})
	inCat := map[string]string{}
	for _, it := range cat {
		inCat[it["name"].(string)] = it["release_state"].(string)
	}
	assert.Contains(t, inCat, "CL_BAL_LOGOBJ", "referenced SAP objects are in the catalog")
	assert.Contains(t, inCat, "I_COMPANYCODE")
	assert.Equal(t, "released", inCat["I_COMPANYCODE"])
	assert.NotContains(t, inCat, "ZFI_LOG", "custom objects are not in the standard catalog")
}

func TestChangeDocuments(t *testing.T) {
	s := ecc(t)
	dev := Credentials{ConnectorKey: ECCConnectorKey, User: "DEVELOPER", Password: DefaultUsers()["DEVELOPER"]}
	before, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR", "ORT01"}, RowCount: 1})
	require.NoError(t, err)
	kunnr := before.Rows[0][0]
	_, err = call[sap.WriteTableResponse](t, s, sap.EndpointWriteTable, dev, sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: []map[string]string{{"KUNNR": kunnr, "ORT01": "Heidelberg"}}})
	require.NoError(t, err)
	hdr, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "CDHDR", Options: []string{"OBJECTCLAS = 'DEBI'"}})
	require.NoError(t, err)
	require.Len(t, hdr.Rows, 1)
	pos, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "CDPOS",
		Fields: []string{"OBJECTID", "TABNAME", "FNAME", "CHNGIND", "VALUE_NEW"}, Options: []string{"TABNAME = 'KNA1'"}})
	require.NoError(t, err)
	require.Len(t, pos.Rows, 1)
	assert.Equal(t, []string{kunnr, "KNA1", "ORT01", "U", "Heidelberg"}, pos.Rows[0])
	old, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "CDPOS", Fields: []string{"VALUE_OLD"}, Options: []string{"TABNAME = 'KNA1'"}})
	require.NoError(t, err)
	assert.Equal(t, before.Rows[0][1], old.Rows[0][0])
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "CDPOS"})
	assert.Equal(t, sap.ErrDataBufferExceeded, sapCode(t, err), "CDPOS is wider than RFC_READ_TABLE's buffer, as on a real system")
}

// BenchmarkIndexPage measures one page of 1000 items deep inside a generated landscape,
// against the same page of the built-in landscape (the baseline).
func BenchmarkIndexPage(b *testing.B) {
	for _, n := range []int{0, 1_000_000} {
		s, _ := NewLandscape(Options{GeneratedObjects: n}).System("ECC")
		s.init()
		for _, ep := range []string{sap.EndpointIndexCustomObjects, sap.EndpointIndexRelationships, sap.EndpointIndexCustomCode, sap.EndpointIndexCatalogContext} {
			b.Run(fmt.Sprintf("n=%d/%s", n, strings.TrimPrefix(ep, "index/")), func(b *testing.B) {
				from := position{sec: 'g', idx: s.gen.custom / 2}
				if ep == sap.EndpointIndexCatalogContext {
					from = position{sec: 's', idx: s.gen.std / 2}
				}
				if n == 0 {
					from = position{sec: sections(ep, false)[0]}
				}
				req := sap.IndexRequest{Cursor: from.encode(), Limit: 1000}
				_, _ = s.indexPhase(ep, req) // warm the per-shape counts
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p, err := s.indexPhase(ep, req)
					if err != nil || len(p.Items) == 0 {
						b.Fatal(err, len(p.Items))
					}
				}
			})
		}
	}
}

// TestGeneratedMemory reports the heap a generated landscape costs after a full index read of
// its custom objects and a deep catalog page (run with -v to see the figures).
func TestGeneratedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a large generated landscape")
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	for _, n := range []int{100_000, 1_000_000} {
		land := NewLandscape(Options{GeneratedObjects: n})
		s, _ := land.System("ECC")
		start := time.Now()
		pages := 0
		for req := (sap.IndexRequest{Limit: 1000}); ; pages++ {
			res, err := s.Call(context.Background(), sap.EndpointIndexCustomObjects, eccKey, []byte(fmt.Sprintf(`{"limit":1000,"cursor":%q}`, req.Cursor)))
			require.NoError(t, err)
			p := res.(sap.IndexPage)
			if p.NextCursor == "" {
				break
			}
			req.Cursor = p.NextCursor
		}
		elapsed := time.Since(start)
		_, err := s.indexPhase(sap.EndpointIndexCatalogContext, sap.IndexRequest{Cursor: position{sec: 's', idx: n - 500}.encode(), Limit: 1000})
		require.NoError(t, err)
		used := heap() - base
		t.Logf("n=%d: %d custom-object pages in %v (%.2f ms/page), heap %.1f MiB", n, pages+1, elapsed, float64(elapsed.Microseconds())/1000/float64(pages+1), float64(used)/(1<<20))
		assert.Less(t, used, uint64(64<<20), "a generated landscape stays small")
		runtime.KeepAlive(land)
	}
}
