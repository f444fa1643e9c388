package adt

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "adt", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseDiscoveryLegacyLacksWhatModernHas(t *testing.T) {
	legacy, err := ParseDiscovery(fixture(t, "discovery_e77.xml"))
	if err != nil {
		t.Fatal(err)
	}
	modern, err := ParseDiscovery(fixture(t, "discovery_e19.xml"))
	if err != nil {
		t.Fatal(err)
	}
	// Both systems serve what the connector needs for search and source of code objects.
	for _, f := range []Feature{FeatureQuickSearch, FeatureClasses, FeatureInterfaces, FeaturePrograms, FeatureIncludes,
		FeatureFunctionGroups, FeatureDDLSources, FeatureNodeStructure, FeatureATCRuns} {
		if !legacy.Has(f) || !modern.Has(f) {
			t.Errorf("%s: legacy %v modern %v, want both", f, legacy.Has(f), modern.Has(f))
		}
	}
	// What the recorded legacy system (SAP_BASIS < 7.50) lacks.
	for _, f := range []Feature{FeatureFreestyle, FeatureUsageReferences, FeatureDDICTables, FeatureDDICStructures,
		FeatureCTSRequests, FeatureSystemInfo} {
		if legacy.Has(f) || !modern.Has(f) {
			t.Errorf("%s: legacy %v modern %v, want only modern", f, legacy.Has(f), modern.Has(f))
		}
	}
	if got := legacy.Features(); len(got) != len(RoutingFeatures) || got[FeatureFreestyle] || !got[FeatureQuickSearch] {
		t.Errorf("legacy features %v", got)
	}
	// The legacy system keeps transports outside ADT.
	if !legacy.HasHref("/sap/bc/cts/transportrequests") {
		t.Error("legacy discovery should list /sap/bc/cts/transportrequests")
	}
	if len(legacy.Hrefs()) != 124 || len(modern.Hrefs()) != 818 {
		t.Errorf("distinct hrefs: legacy %d modern %d, want 124 and 818", len(legacy.Hrefs()), len(modern.Hrefs()))
	}
	var found bool
	for _, c := range modern.Collections {
		if c.Href == string(FeatureFreestyle) {
			found = len(c.Terms) > 0 && c.Terms[0].Term != "" && c.Terms[0].Scheme != ""
		}
	}
	if !found {
		t.Error("freestyle collection should carry its atom:category term and scheme")
	}
}

func TestParseSearch(t *testing.T) {
	refs, err := ParseSearch(fixture(t, "search_quick_z_fn_hello_world.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ObjectRef{
		{URI: "/sap/bc/adt/functions/groups/zfg_hello_world/fmodules/z_fn_hello_world", Type: "FUGR/FF", Name: "Z_FN_HELLO_WORLD", Package: "$TEST", Description: "Hello Function!"},
		{URI: "/sap/bc/adt/aps/iam/sush/z_fn_hello_world%20rf", Type: "SUSH", Name: "Z_FN_HELLO_WORLD RF", Package: "$TEST", Description: "Z_FN_HELLO_WORLD"},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("got %+v", refs)
	}
	refs, err = ParseSearch(fixture(t, "search_quick_empty.xml"))
	if err != nil || refs == nil || len(refs) != 0 {
		t.Errorf("empty search: %v %v", refs, err)
	}
}

// tokens is an XML document as a comparable list: elements with resolved names and attributes,
// non-blank text.
func tokens(t *testing.T, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case xml.StartElement:
			s := "<" + v.Name.Space + " " + v.Name.Local
			for _, a := range v.Attr {
				if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
					continue
				}
				s += " " + a.Name.Local + "=" + a.Value
			}
			out = append(out, s)
		case xml.EndElement:
			out = append(out, "</"+v.Name.Local)
		case xml.CharData:
			if s := strings.TrimSpace(string(v)); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestUsageScopeAndRequestBody(t *testing.T) {
	scope, err := ParseUsageScope(fixture(t, "usagereferences_scope.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if scope.ObjectIdentifier.GlobalType != "PROG/P" || len(scope.ObjectTypes) != 3 || scope.Payload != "dGVzdHBheWxvYWRiYXNlNjQ=" || scope.LocalUsage != "false" {
		t.Errorf("scope %+v", scope)
	}
	body, err := usageRequestBody(scope)
	if err != nil {
		t.Fatal(err)
	}
	got, want := tokens(t, body), tokens(t, fixture(t, "usagereferences_request.xml"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request body differs from the recorded one:\n got %q\nwant %q", got, want)
	}
	if got := tokens(t, []byte(usageScopeRequestX)); !reflect.DeepEqual(got, tokens(t, fixture(t, "usagereferences_scope_request.xml"))) {
		t.Errorf("scope request body differs from the recorded one: %q", got)
	}
}

func TestParseUsageResult(t *testing.T) {
	res, err := ParseUsageResult(fixture(t, "usagereferences_result.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if res.NumberOfResults != 2 || len(res.Objects) != 2 {
		t.Fatalf("%+v", res)
	}
	first := res.Objects[0]
	if first.Name != "ZCL_ABAPGIT_ABAP_LANGUAGE_VERS" || first.Type != "CLAS/OC" || first.Package != "$ABAPGIT_ENV" ||
		first.URI != "/sap/bc/adt/oo/classes/zcl_abapgit_abap_language_vers" {
		t.Errorf("first %+v", first)
	}
	second := res.Objects[1]
	if second.Name != "Local Test Classes" || second.Type != "" || second.ParentURI != first.URI || second.Info != "gradeDirect,includeTest" {
		t.Errorf("second %+v", second)
	}
	zero, err := ParseUsageResult(fixture(t, "usagereferences_zero.xml"))
	if err != nil || zero.NumberOfResults != 0 || len(zero.Objects) != 0 {
		t.Errorf("zero: %+v %v", zero, err)
	}
}

func TestParsePreview(t *testing.T) {
	cases := []struct {
		file     string
		cols     []string
		rows     int
		total    int
		hasTotal bool
		cell     string // Rows[0][last]
	}{
		{"datapreview_t000.xml", []string{"MANDT", "MTEXT", "ORT01", "MWAER", "ADRNR", "CCCATEGORY", "CCCORACTIV", "CCNOCLIIND", "CCCOPYLOCK", "CCNOCASCAD", "CCSOFTLOCK", "CCORIGCONT", "CCIMAILDIS", "CCTEMPLOCK", "CHANGEUSER", "CHANGEDATE", "LOGSYS"}, 2, 2, true, ""},
		{"datapreview_t000_740_no_total.xml", []string{"MANDT"}, 4, 0, false, "000"},
		{"datapreview_count_zero.xml", []string{"COUNT"}, 1, 0, true, "0 "},
		{"datapreview_abook_2rows.xml", []string{"TRAVEL_UUID", "BOOKING_DATE"}, 2, 74, true, "20210524"},
	}
	for _, c := range cases {
		tab, err := ParsePreview(fixture(t, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		var names []string
		for _, col := range tab.Columns {
			names = append(names, col.Name)
		}
		if !reflect.DeepEqual(names, c.cols) || len(tab.Rows) != c.rows || tab.TotalRows != c.total || tab.HasTotal != c.hasTotal {
			t.Errorf("%s: cols %v rows %d total %d/%v", c.file, names, len(tab.Rows), tab.TotalRows, tab.HasTotal)
		}
		if c.cell != "" && tab.Rows[0][len(tab.Columns)-1] != c.cell {
			t.Errorf("%s: cell %q, want %q", c.file, tab.Rows[0][len(tab.Columns)-1], c.cell)
		}
		if !strings.Contains(strings.ToUpper(tab.ExecutedQuery), "SELECT") {
			t.Errorf("%s: executed query %q", c.file, tab.ExecutedQuery)
		}
	}
}

func TestParseException(t *testing.T) {
	cases := map[string]struct{ typ, kind, msgPrefix string }{
		"error_package_not_found.xml":  {"ExceptionResourceNotFound", "NOT_FOUND", "Error while importing object PKG_NAME"},
		"error_resource_no_access.xml": {"ExceptionResourceNoAccess", "AUTHORIZATION_FAILED", "Request DEVK900042"},
		"error_lock_conflict.xml":      {"ExceptionResourceLockConflict", "SAP_EXCEPTION", "No suitable software component"},
	}
	for file, c := range cases {
		typ, msg, ok := ParseException(fixture(t, file))
		if !ok || typ != c.typ || !strings.HasPrefix(msg, c.msgPrefix) {
			t.Errorf("%s: %q %q %v", file, typ, msg, ok)
		}
		e := &Error{Kind: kindOf(500, typ), Type: typ, Message: msg}
		if p := e.Protocol(); p.Code != c.kind || p.Exception != c.typ {
			t.Errorf("%s: protocol %+v", file, p)
		}
	}
	if _, _, ok := ParseException([]byte("<html><body>500 Internal Server Error</body></html>")); ok {
		t.Error("HTML is no exc:exception")
	}
}
