package sapbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// pageAll pages a phase through the connector and returns its items and the pages it took.
func pageAll(t *testing.T, h *simHarness, endpoint string, limit int, after int64) ([]map[string]any, int) {
	t.Helper()
	var items []map[string]any
	cursor, pages := "", 0
	seen := map[string]bool{}
	for {
		var page sap.IndexPage
		if err := h.call(t, "", "", endpoint, sap.IndexRequest{Cursor: cursor, Limit: limit, AfterSeq: after}, &page); err != nil {
			t.Fatalf("%s page %d: %v", endpoint, pages+1, err)
		}
		pages++
		if len(page.Items) > limit {
			t.Fatalf("%s: a page of %d items, limit %d", endpoint, len(page.Items), limit)
		}
		items = append(items, page.Items...)
		if page.NextCursor == "" {
			if page.Total != len(items) {
				t.Fatalf("%s: total %d on the last page, %d items served", endpoint, page.Total, len(items))
			}
			return items, pages
		}
		if seen[page.NextCursor] {
			t.Fatalf("%s: cursor repeated", endpoint)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// simItems is the simulator's own protocol answer for a phase, all pages.
func simItems(t *testing.T, s *sapsim.System, endpoint string, after int64) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		body, _ := json.Marshal(sap.IndexRequest{Cursor: cursor, Limit: 1000, AfterSeq: after})
		res, err := s.Call(context.Background(), endpoint, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, body)
		if err != nil {
			t.Fatal(err)
		}
		page := res.(sap.IndexPage)
		out = append(out, page.Items...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

func keys(items []map[string]any, fields ...string) []string {
	var out []string
	for _, it := range items {
		k := ""
		for _, f := range fields {
			k += fmt.Sprint(it[f]) + "|"
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// set is items as keys of the fields, for comparing phases whatever their order.
func set(items []map[string]any, fields ...string) map[string]bool {
	out := map[string]bool{}
	for _, k := range keys(items, fields...) {
		out[k] = true
	}
	return out
}

// sameExcept fails unless got and want hold the same keys, apart from want's keys that
// mention one of the named objects (the mappings' known differences, see docs/connector.md).
func sameExcept(t *testing.T, what string, got, want map[string]bool, except ...string) {
	t.Helper()
	skip := func(k string) bool {
		for _, e := range except {
			if strings.Contains(k, "|"+e+"|") {
				return true
			}
		}
		return false
	}
	for k := range want {
		if !got[k] && !skip(k) {
			t.Errorf("%s: the connector lacks %s", what, k)
		}
	}
	for k := range got {
		if !want[k] && !skip(k) {
			t.Errorf("%s: the connector has %s, the simulator not", what, k)
		}
	}
}

func TestSimIndexCustomObjectsPages(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	got, pages := pageAll(t, h, sap.EndpointIndexCustomObjects, 4, 0)
	if pages < 4 {
		t.Fatalf("%d pages", pages)
	}
	want := simItems(t, h.sys, sap.EndpointIndexCustomObjects, 0)
	// changed_at is REPOSRC's last change (the simulator's item keeps the creation date);
	// enhancement implementations have no text table; MV45AFZZ is SAP's include (a modification).
	// Z_SAPAGENT_WRITE_TABLE is the connector's own abapGit package, installed in the simulated
	// systems (their TFDIR lists it, as a real system's would) but not in the simulator's
	// catalogue of the landscape's custom code.
	sameExcept(t, "custom_objects", set(got, "type", "name", "package", "created_by"), set(want, "type", "name", "package", "created_by"), "MV45AFZZ", sapsim.WriteTableFM)
	sameExcept(t, "custom_objects", set(got, "type", "name", "description"), set(want, "type", "name", "description"), "MV45AFZZ", "ZEI_SD_SALES_CHECK", "ZEI_ME_PO_CHECK", sapsim.WriteTableFM)
}

func TestSimIndexCodeRelationshipsEnhancements(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	// ADT serves no source of function groups or enhancement implementations.
	noSource := []string{"MV45AFZZ", "ZFG_PRICING", "ZEI_SD_SALES_CHECK", "ZEI_ME_PO_CHECK"}
	code, _ := pageAll(t, h, sap.EndpointIndexCustomCode, 3, 0)
	sameExcept(t, "custom_code", set(code, "type", "name", "lines", "source"), set(simItems(t, h.sys, sap.EndpointIndexCustomCode, 0), "type", "name", "lines", "source"), noSource...)
	rel, _ := pageAll(t, h, sap.EndpointIndexRelationships, 7, 0)
	f := []string{"from_type", "from", "to_type", "to", "kind", "usage", "line"}
	relWant := simItems(t, h.sys, sap.EndpointIndexRelationships, 0)
	sameExcept(t, "relationships", set(rel, f...), set(relWant, f...), noSource...)
	// The BAdIs come from ENHOBJ even without source.
	for _, k := range []string{"ENHO|ZEI_SD_SALES_CHECK|BADI|BADI_SD_SALES|implements_badi|implement|0|", "TABL|ZAKNA1|TABL|KNA1|extends|extend|0|"} {
		if !set(rel, f...)[k] {
			t.Errorf("relationships lack %s", k)
		}
	}
	enh, _ := pageAll(t, h, sap.EndpointIndexEnhancements, 2, 0)
	ef := []string{"type", "kind", "name", "enhances"}
	// User exits: the connector reads CMOD projects (MODACT), the simulator names the includes.
	sameExcept(t, "enhancements", set(enh, ef...), set(simItems(t, h.sys, sap.EndpointIndexEnhancements, 0), ef...), "MV45AFZZ", "ZXVVAU04", "ZV45A000")
	if !set(enh, ef...)["CMOD|user_exit|ZV45A000|V45A0002|"] {
		t.Errorf("enhancements lack the CMOD project: %v", keys(enh, ef...))
	}
}

func TestSimIndexCatalogGeneratedLandscape(t *testing.T) {
	h := startSim(t, sapsim.Options{GeneratedObjects: 2000}, "")
	got, pages := pageAll(t, h, sap.EndpointIndexCatalogContext, 500, 0)
	if pages < 4 {
		t.Fatalf("%d pages", pages)
	}
	want := simItems(t, h.sys, sap.EndpointIndexCatalogContext, 0)
	g := set(got, "type", "name", "description")
	w := set(want, "type", "name", "description")
	missing := 0
	for k := range w {
		// BAdI definitions have no R3TR entry; generated BAPI names beyond SAP's 30 characters
		// are cut in TFDIR (a generator artefact).
		if !g[k] && !strings.HasPrefix(k, "BADI|") && !(strings.HasPrefix(k, "FUNC|") && len(strings.Split(k, "|")[1]) > 30) {
			missing++
			t.Errorf("catalog lacks %s", k)
		}
		if missing > 10 {
			t.FailNow()
		}
	}
	// Real SAP names get their state from the Cloudification Repository.
	states := map[string]string{}
	for _, it := range got {
		states[fmt.Sprint(it["type"], "/", it["name"])] = fmt.Sprint(it["release_state"], "/", it["successor"])
	}
	if states["TABL/KONV"] != "notToBeReleased/I_SLSPRCGCONDITIONRECORD" && !strings.HasPrefix(states["TABL/KONV"], "notToBeReleased") {
		t.Errorf("KONV: %s", states["TABL/KONV"])
	}
	if states["TABL/KNA1"] == "" || states["TABL/KNA1"] == "unknown/" {
		t.Errorf("KNA1: %s", states["TABL/KNA1"])
	}
}

func TestSimIndexBadCursorsAreBadRequests(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	var page sap.IndexPage
	if err := h.call(t, "", "", sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 2}, &page); err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %v %+v", err, page)
	}
	edited := []byte(page.NextCursor)
	edited[len(edited)/2] ^= 1
	for name, req := range map[string]struct {
		endpoint string
		req      sap.IndexRequest
	}{
		"edited":       {sap.EndpointIndexCustomObjects, sap.IndexRequest{Cursor: string(edited)}},
		"cut":          {sap.EndpointIndexCustomObjects, sap.IndexRequest{Cursor: page.NextCursor[:10]}},
		"other phase":  {sap.EndpointIndexCustomCode, sap.IndexRequest{Cursor: page.NextCursor}},
		"other delta":  {sap.EndpointIndexCustomObjects, sap.IndexRequest{Cursor: page.NextCursor, AfterSeq: 3}},
		"simulator's":  {sap.EndpointIndexCustomObjects, sap.IndexRequest{Cursor: "MDAwMDAwMDBtfDB8MHw"}},
		"negative seq": {sap.EndpointIndexCustomObjects, sap.IndexRequest{AfterSeq: -1}},
	} {
		var p sap.IndexPage
		err := h.call(t, "", "", req.endpoint, req.req, &p)
		if se := protoCode(t, err); se.Status != 400 || se.Code != sap.ErrBadRequest {
			t.Errorf("%s: %+v", name, se)
		}
	}
	// S/4HANA extensions of an ECC system are NOT_SUPPORTED.
	err := h.call(t, "", "", sap.EndpointIndexS4Extensions, sap.IndexRequest{}, &page)
	if se := protoCode(t, err); se.Code != sap.ErrNotSupported {
		t.Fatalf("s4_extensions on ECC: %+v", se)
	}
}

func TestSimIndexS4Extensions(t *testing.T) {
	h := startSimSystem(t, "S4H", sapsim.Options{}, "")
	got, _ := pageAll(t, h, sap.EndpointIndexS4Extensions, 1, 0)
	body, _ := json.Marshal(sap.IndexRequest{Limit: 1000})
	res, err := h.sys.Call(context.Background(), sap.EndpointIndexS4Extensions, sapsim.Credentials{ConnectorKey: sapsim.S4HConnectorKey}, body)
	if err != nil {
		t.Fatal(err)
	}
	f := []string{"type", "kind", "name", "extends"}
	if len(got) < 3 {
		t.Fatalf("s4_extensions: %v", keys(got, f...))
	}
	sameExcept(t, "s4_extensions", set(got, f...), set(res.(sap.IndexPage).Items, f...))
}

// TestSimIndexCursorSurvivesADeletionBeforeIt: rows before the cursor go away between pages;
// the walk finds its row again and serves every remaining object once.
func TestSimIndexCursorSurvivesADeletionBeforeIt(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	all, _ := pageAll(t, h, sap.EndpointIndexCustomObjects, 1000, 0)
	var first sap.IndexPage
	if err := h.call(t, "", "", sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 5}, &first); err != nil {
		t.Fatal(err)
	}
	gone := first.Items[1]
	if err := h.sys.DeleteObject(fmt.Sprint(gone["type"]), fmt.Sprint(gone["name"])); err != nil {
		t.Fatal(err)
	}
	got := append([]map[string]any(nil), first.Items...)
	cursor := first.NextCursor
	for cursor != "" {
		var p sap.IndexPage
		if err := h.call(t, "", "", sap.EndpointIndexCustomObjects, sap.IndexRequest{Cursor: cursor, Limit: 5}, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Items...)
		cursor = p.NextCursor
	}
	if g := keys(got, "type", "name"); len(g) != len(all) || fmt.Sprint(g) != fmt.Sprint(keys(all, "type", "name")) {
		t.Fatalf("after a deletion before the cursor:\n got %v\nwant %v", g, keys(all, "type", "name"))
	}
}

// Without ADT the relationships come from the where-used tables (no lines), custom_code is
// NOT_SUPPORTED.
func TestSimIndexRelationshipsWithoutADTFromWhereUsedTables(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "    interfaces:\n      adt: false\n      routes:\n        search_objects: soap_rfc\n        abap_source: soap_rfc\n        where_used: soap_rfc\n")
	rel, _ := pageAll(t, h, sap.EndpointIndexRelationships, 50, 0)
	got := set(rel, "from_type", "from", "to_type", "to", "kind", "usage", "line")
	for _, k := range []string{"PROG|ZR_SALES_REPORT|TABL|KNA1|uses_table|type|0|", "PROG|ZR_SALES_REPORT|FUNC|BAPI_SALESORDER_GETLIST|calls_function|call|0|",
		"CLAS|ZCL_PO_HELPER|FUNC|BAPI_PO_CREATE1|calls_function|call|0|"} {
		if !got[k] {
			t.Errorf("relationships lack %s: %v", k, keys(rel, "from", "to", "usage"))
		}
	}
	var page sap.IndexPage
	if se := protoCode(t, h.call(t, "", "", sap.EndpointIndexCustomCode, sap.IndexRequest{}, &page)); se.Code != sap.ErrNotSupported {
		t.Fatalf("custom_code without ADT: %+v", se)
	}
}
