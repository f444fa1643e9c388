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
	found, err := call[sap.SearchObjectsResponse](t, s, sap.EndpointSearchObjects, eccKey, sap.SearchObjectsRequest{Query: "BAPI_GOODSMVT_*", ObjectType: "FUNC", Limit: 20})
	require.NoError(t, err)
	assert.Len(t, found.Objects, 20, "generated standard objects are searchable")
	found, err = call[sap.SearchObjectsResponse](t, s, sap.EndpointSearchObjects, eccKey, sap.SearchObjectsRequest{Query: "ZCL_FI_*", CustomOnly: true, Limit: 5})
	require.NoError(t, err)
	assert.Len(t, found.Objects, 5, "generated custom objects are searchable")
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
	start := s.Info().ChangeSeq
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
	// A catalog delta lists the SAP objects new custom code named first, once.
	require.NoError(t, s.ActivateObject("PROG", "ZR_FI_POSTING_CHECK2", "", "", "REPORT x.\nDATA lo TYPE REF TO cl_bal_logobj.\n"))
	delta, total := pageAll(t, s, sap.EndpointIndexCatalogContext, sap.IndexRequest{AfterSeq: start, Limit: 2})
	assert.Equal(t, total, len(delta))
	var names []string
	for _, it := range delta {
		names = append(names, it["name"].(string))
	}
	assert.Contains(t, names, "CL_BAL_LOGOBJ")
	assert.Contains(t, names, "I_COMPANYCODE")
	assert.Contains(t, names, "RFBIBL00")
	assert.NotContains(t, names, "BSEG", "BSEG was in the catalog before")
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

func TestABAPGitRepositoryAsSAPKeepsIt(t *testing.T) {
	s := ecc(t)
	require.NoError(t, s.LoadABAPGit("testdata/abapgit"))
	schema, err := call[sap.TableSchema](t, s, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "ZCREDIT_EXPOSURE"})
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range schema.Fields {
		got[f.Name] = fmt.Sprintf("%s %s %d.%d key=%v %s", f.DataElement, f.Type, f.Length, f.Decimals, f.Key, f.Domain)
	}
	assert.Equal(t, map[string]string{
		"MANDT":      "MANDT CLNT 3.0 key=true MANDT",
		"KUNNR":      "KUNNR CHAR 10.0 key=true KUNNR",
		"EXPOSURE":   "ZD_CREDIT_AMOUNT CURR 15.2 key=false ZDO_AMOUNT", // from the .INCLUDE structure, typed by data element and domain
		"CURRENCY":   "WAERS CUKY 5.0 key=false WAERS",
		"RISK_CLASS": "ZD_RISK_CLASS CHAR 1.0 key=false ZDO_RISK",
		"CASE_ID":    "ZD_CASE_ID NUMC 10.0 key=false ZD_CASE_ID",
	}, got)
	assert.Equal(t, []string{"MANDT", "KUNNR", "EXPOSURE", "CURRENCY", "RISK_CLASS", "CASE_ID"}, func() []string {
		var names []string
		for _, f := range schema.Fields {
			names = append(names, f.Name)
		}
		return names
	}(), "included fields sit where the .INCLUDE line is")
	_, err = call[sap.WriteTableResponse](t, s, sap.EndpointWriteTable, Credentials{ConnectorKey: ECCConnectorKey, User: "DEVELOPER", Password: DefaultUsers()["DEVELOPER"]},
		sap.WriteTableRequest{Table: "ZCREDIT_EXPOSURE", Mode: "insert", Rows: []map[string]string{{"KUNNR": "0000100001", "EXPOSURE": "1234.50", "CURRENCY": "EUR", "RISK_CLASS": "A", "CASE_ID": "0000000001"}}})
	require.NoError(t, err)
	_, err = call[sap.TableSchema](t, s, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "ZCREDIT_S_AMOUNTS"})
	assert.Equal(t, sap.ErrNotFound, sapCode(t, err), "a structure is no database table")
	kna1, err := call[sap.TableSchema](t, s, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "KNA1"})
	require.NoError(t, err)
	last := kna1.Fields[len(kna1.Fields)-1]
	assert.Equal(t, "ZZ_CREDIT_GROUP CHAR 1 true", fmt.Sprint(last.Name, " ", last.Type, " ", last.Length, " ", last.Appended), "the append structure's field joins KNA1")

	fi, err := call[sap.FunctionInterface](t, s, sap.EndpointFunctionInterface, eccKey, sap.FunctionInterfaceRequest{Function: "Z_CREDIT_CHECK"})
	require.NoError(t, err)
	assert.Equal(t, "Check a customer against the credit limit", fi.Description)
	var params []string
	for _, p := range fi.Parameters {
		params = append(params, fmt.Sprint(p.Kind, " ", p.Name, " ", p.Type, " ", p.Optional, " ", p.Description))
	}
	assert.Equal(t, []string{"import IV_KUNNR KUNNR false Customer number", "import IV_AMOUNT ZD_CREDIT_AMOUNT true Amount of the new order",
		"export EV_OK ABAP_BOOL true Within the limit", "tables ET_RETURN BAPIRET2 true Messages"}, params)
	assert.Equal(t, []string{"CUSTOMER_NOT_FOUND"}, fi.Exceptions)

	objs, _ := pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 1000})
	types := map[string]string{}
	for _, o := range objs {
		types[o["name"].(string)+"/"+o["type"].(string)] = o["type"].(string) + " " + o["description"].(string)
	}
	for name, want := range map[string]string{
		"ZDO_AMOUNT": "DOMA Amount in document currency", "ZD_CREDIT_AMOUNT": "DTEL Credit exposure amount", "ZCREDIT_S_AMOUNTS": "TABL Credit amounts (structure)",
		"ZAKNA1_CREDIT": "TABL Append to KNA1: credit group", "ZFG_CREDIT": "FUGR Credit checks", "ZCL_CREDIT_SERVICE": "CLAS Credit exposure per customer",
		"ZI_CREDIT_CASE": "DDLS Credit case", "ZC_CREDIT_CASE": "DDLX ZC_CREDIT_CASE", "ZUI_CREDIT_CASE": "SRVD Credit cases (UI service)",
		"ZEI_CREDIT_BADI": "ENHO Block sales orders over the credit limit", "ZEI_MV45A_CREDIT": "ENHO Credit group into the order header",
		"ZIMP_ME_PO_CREDIT": "SXCI Vendor credit check on purchase orders", "ZSDCRED": "CMOD Credit checks in sales (customer exits)",
	} {
		assert.Equal(t, want, types[name+"/"+strings.Fields(want)[0]], name)
	}

	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	edges := map[string]bool{}
	for _, r := range rels {
		edges[fmt.Sprint(r["from_type"], " ", r["from"], " ", r["usage"], " ", r["to_type"], " ", r["to"])] = true
	}
	for _, want := range []string{
		"CLAS ZCL_CREDIT_SERVICE read TABL BSEG", // from the local class in locals_imp
		"CLAS ZCL_CREDIT_SERVICE read TABL BKPF",
		"CLAS ZCL_CREDIT_SERVICE write TABL ZCREDIT_EXPOSURE",
		"CLAS ZCL_CREDIT_SERVICE type TABL BSEG",                     // locals_def
		"CLAS ZCL_CREDIT_SERVICE call CLAS CL_OSQL_TEST_ENVIRONMENT", // testclasses
		"FUGR ZFG_CREDIT type TABL ZCREDIT_EXPOSURE",                 // the TOP include
		"FUGR ZFG_CREDIT type TABL KNA1",                             // TABLES kna1
		"BDEF ZI_CREDIT_CASE implement CLAS ZBP_I_CREDIT_CASE",       // behavior pool
		"BDEF ZI_CREDIT_CASE write TABL ZCREDIT_EXPOSURE",            // persistent table
		"CLAS ZBP_I_CREDIT_CASE write BDEF ZI_CREDIT_CASE",           // MODIFY ENTITIES
		"SRVD ZUI_CREDIT_CASE expose DDLS ZC_CREDIT_CASE",            // service definition
		"DDLS ZI_CREDIT_CASE read TABL ZCREDIT_EXPOSURE",             // CDS select from
		"DDLS ZI_CREDIT_CASE association DDLS I_CUSTOMER",            // association
		"DDLS ZC_CREDIT_CASE read DDLS ZI_CREDIT_CASE",               // projection
		"DDLX ZC_CREDIT_CASE annotate DDLS ZC_CREDIT_CASE",           // metadata extension
		"DCLS ZI_CREDIT_CASE read DDLS ZI_CREDIT_CASE",               // access control
		"ENHO ZEI_CREDIT_BADI implement BADI BADI_SD_SALES",          // BAdI implementation
		"ENHO ZEI_CREDIT_BADI implement CLAS ZCL_IM_CREDIT_BADI",     // its class
		"ENHO ZEI_MV45A_CREDIT read TABL KNA1",                       // hook source
		"ENHO ZEI_MV45A_CREDIT enhancement PROG SAPMV45A",            // the enhanced program
		"SXCI ZIMP_ME_PO_CREDIT implement BADI ME_PROCESS_PO_CUST",   // classic BAdI
		"CMOD ZSDCRED enhancement SMOD V45A0002",                     // customer exit
		"TABL ZAKNA1_CREDIT extend TABL KNA1",                        // append
		"CLAS ZCL_IM_CREDIT_BADI call FUNC Z_CREDIT_CHECK",
	} {
		assert.True(t, edges[want], "missing %q", want)
	}
	for e := range edges {
		assert.NotContains(t, e, "LCL_OPEN_ITEMS", "local classes are no references")
	}
	enh, _ := pageAll(t, s, sap.EndpointIndexEnhancements, sap.IndexRequest{})
	kinds := map[string]string{}
	for _, e := range enh {
		kinds[e["name"].(string)] = e["kind"].(string) + " " + e["enhances"].(string)
	}
	assert.Equal(t, "badi BADI_SD_SALES", kinds["ZEI_CREDIT_BADI"])
	assert.Equal(t, "enhancement SAPMV45A", kinds["ZEI_MV45A_CREDIT"])
	assert.Equal(t, "badi ME_PROCESS_PO_CUST", kinds["ZIMP_ME_PO_CREDIT"])
	assert.Equal(t, "user_exit V45A0002", kinds["ZSDCRED"])
	assert.Equal(t, "append KNA1", kinds["ZAKNA1_CREDIT"])
	wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "ZCREDIT_EXPOSURE"})
	require.NoError(t, err)
	users := map[string]bool{}
	for _, u := range wu.Usages {
		users[u.Name] = true
	}
	assert.True(t, users["ZCL_CREDIT_SERVICE"] && users["ZI_CREDIT_CASE"] && users["ZFG_CREDIT"], "%v", users)
	// IV_AMOUNT's type is named only in the function group's XML interface, not in the source.
	wu, err = call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "ZD_CREDIT_AMOUNT"})
	require.NoError(t, err)
	var amountUsers []string
	for _, u := range wu.Usages {
		amountUsers = append(amountUsers, u.ObjectType+" "+u.Name)
	}
	assert.Contains(t, amountUsers, "FUNC Z_CREDIT_CHECK", "the function module's XML interface types IV_AMOUNT with it")
	wu, err = call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "KUNNR", Limit: 500})
	require.NoError(t, err)
	var kunnrLines []int
	for _, u := range wu.Usages {
		if u.Name == "Z_CREDIT_CHECK" {
			kunnrLines = append(kunnrLines, u.Line)
		}
	}
	assert.Equal(t, []int{2}, kunnrLines, "named in the source's *\" block and in the XML: one usage, at its source line")
}

// Paging, where-used and changes may run at the same time (go test -race).
func TestIndexWhileTheSystemChanges(t *testing.T) {
	s := generated(t, 2000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			s.TouchCustomObjects(3)
			assert.NoError(t, s.ActivateObject("PROG", fmt.Sprintf("ZR_CONCURRENT_%d", i), "", "", "REPORT x.\nSELECT * FROM bseg INTO TABLE @DATA(x).\n"))
		}
	}()
	for _, ep := range allPhases {
		p, err := call[sap.IndexPage](t, s, ep, eccKey, sap.IndexRequest{Limit: 50})
		require.NoError(t, err)
		for p.NextCursor != "" {
			p, err = call[sap.IndexPage](t, s, ep, eccKey, sap.IndexRequest{Limit: 50, Cursor: p.NextCursor})
			require.NoError(t, err)
		}
		_, err = call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "BSEG"})
		require.NoError(t, err)
	}
	<-done
}
