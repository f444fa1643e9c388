package sapsim

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
)

// A RAP/ABAP Cloud repository in its own namespace loads whole: standard DDIC it types with,
// the draft include, catalogue-only types and every function module; what the simulator cannot
// resolve or read is listed with its reason instead of stopping the load.
func TestABAPGitRAPRepositoryLoadsWithoutAborting(t *testing.T) {
	s := ecc(t)
	rep, err := s.LoadABAPGitReport("testdata/abapgit-rap")
	require.NoError(t, err)

	loaded := map[string]int{}
	for typ, tr := range rep.Types {
		loaded[typ] = tr.Loaded
	}
	assert.Equal(t, map[string]int{"DEVC": 2, "DOMA": 1, "DTEL": 4, "TABL": 3, "TTYP": 1, "MSAG": 1, "TRAN": 1, "PROG": 1,
		"DDLS": 1, "BDEF": 1, "CLAS": 1, "SRVD": 1, "SRVB": 1, "FUGR": 2, "FUNC": 5, "XSLT": 0, "NONT": 1}, loaded)

	issues := map[string]string{}
	for typ, tr := range rep.Types {
		for _, u := range tr.Unresolved {
			issues["unresolved "+typ+" "+u.Object+" -> "+u.Reference] = u.Reason
		}
		for _, u := range tr.Skipped {
			issues["skipped "+typ+" "+u.Object] = u.Reason
		}
	}
	assert.Len(t, issues, 6, "%v", issues)
	for key, reason := range map[string]string{
		"unresolved DTEL /DMO0/AGENCY_RATING -> DOMA FINS_RATING_CODE":    "standard domain FINS_RATING_CODE is unknown",
		"unresolved TABL /DMO0/S_TRAVEL_MSG -> TABL BAPIRET2_SIM_UNKNOWN": "included structure BAPIRET2_SIM_UNKNOWN is neither",
		"unresolved TABL /DMO0/S_TRAVEL_MSG -> DTEL FINS_NOTE_TEXT":       "data element FINS_NOTE_TEXT of field NOTE is unknown",
		"unresolved FUNC /DMO0/TRAVEL_DOC_ONLY -> source":                 "no include file holds its source",
		"skipped TABL /DMO0/BROKEN":                                       "XML syntax error",
		"skipped XSLT /DMO0/TRAVEL":                                       "without an XML or JSON file is not loaded",
	} {
		assert.Contains(t, issues[key], reason, key)
	}
	assert.Equal(t, []string{"/DMO0/"}, rep.Namespaces)
	assert.Contains(t, rep.String(), "TABL  loaded 3, unresolved 2, skipped 1")

	// Standard DDIC and the RAP draft include type the draft table.
	schema, err := call[sap.TableSchema](t, s, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "/DMO0/TRAVEL_D"})
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range schema.Fields {
		got[f.Name] = fmt.Sprintf("%s %d.%d", f.Type, f.Length, f.Decimals)
	}
	for name, want := range map[string]string{
		"TRAVEL_UUID": "RAW 16.0", "TRAVEL_ID": "NUMC 8.0", "DESCRIPTION": "CHAR 44.0", "IS_ACTIVE": "CHAR 1.0", "RATING": "CHAR 12.0",
		"CURRENCY_CODE": "CUKY 5.0", "CREATED_AT": "DEC 21.7", "TRAVEL_FLAG": "CHAR 1.0",
		"DRAFTENTITYCREATIONDATETIME": "DEC 21.7", "DRAFTENTITYLASTCHANGEDATETIME": "DEC 21.7", "DRAFTADMINISTRATIVEDATAUUID": "RAW 16.0",
		"DRAFTENTITYOPERATIONCODE": "CHAR 1.0", "HASACTIVEENTITY": "CHAR 1.0", "DRAFTFIELDCHANGES": "RSTR 0.0",
	} {
		assert.Equal(t, want, got[name], name)
	}

	// Every function module of the group, whatever its source opens with.
	for fm, want := range map[string]string{"/DMO0/TRAVEL_GET": "Read a travel", "/DMO0/TRAVEL_SET": "Change a travel",
		"/DMO0/TRAVEL_CHECK": "Check a travel", "/DMO0/TRAVEL_DOC_ONLY": "Listed, source kept elsewhere"} {
		fi, err := call[sap.FunctionInterface](t, s, sap.EndpointFunctionInterface, eccKey, sap.FunctionInterfaceRequest{Function: fm})
		require.NoError(t, err, fm)
		assert.Equal(t, "/DMO0/TRAVEL_API", fi.Group, fm)
		assert.Equal(t, want, fi.Description, fm)
	}
	fi, err := call[sap.FunctionInterface](t, s, sap.EndpointFunctionInterface, eccKey, sap.FunctionInterfaceRequest{Function: "/DMO0/LEGACY_READ"})
	require.NoError(t, err, "a group without XML: the module is its include's first statement")
	assert.Equal(t, "/DMO0/LEGACY", fi.Group)

	// Catalogue-only objects with their descriptions and packages.
	objs, _ := pageAll(t, s, sap.EndpointIndexCustomObjects, sap.IndexRequest{Limit: 1000})
	desc := map[string]string{}
	for _, o := range objs {
		desc[o["type"].(string)+" "+o["name"].(string)] = fmt.Sprint(o["description"], " | ", o["package"])
	}
	for key, want := range map[string]string{
		"TTYP /DMO0/T_TRAVEL": "Travels | /DMO0/TRAVEL", "MSAG /DMO0/TRAVEL": "Travel messages | /DMO0/TRAVEL",
		"TRAN /DMO0/TRAVEL": "List travels | /DMO0/TRAVEL", "SRVB /DMO0/UI_TRAVEL_O4": "Travel service, OData V4 UI | /DMO0/TRAVEL",
		"SRVD /DMO0/UI_TRAVEL": "Travel service | /DMO0/TRAVEL", "DEVC /DMO0/TRAVEL": "Travel demo: business object | /DMO0/TRAVEL",
		"DEVC $SRC": "Travel demo (root) | $SRC", "NONT /DMO0/TRAVEL_HINT": "Travel hint (ABAP file format) | /DMO0/TRAVEL", "FUNC /DMO0/TRAVEL_CHECK": "Check a travel | /DMO0/TRAVEL",
	} {
		assert.Equal(t, want, desc[key], key)
	}
	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	edges := map[string]bool{}
	for _, r := range rels {
		edges[fmt.Sprint(r["from_type"], " ", r["from"], " ", r["usage"], " ", r["to_type"], " ", r["to"])] = true
	}
	for _, want := range []string{"TRAN /DMO0/TRAVEL call PROG /DMO0/R_TRAVEL_LIST", "TTYP /DMO0/T_TRAVEL type TABL /DMO0/TRAVEL_A",
		"SRVB /DMO0/UI_TRAVEL_O4 expose SRVD /DMO0/UI_TRAVEL", "PROG /DMO0/R_TRAVEL_LIST call FUNC /DMO0/TRAVEL_GET"} {
		assert.True(t, edges[want], "missing %q", want)
	}

	// The summary is served.
	served, err := call[LoadReport](t, s, EndpointABAPGitLoad, eccKey, struct{}{})
	require.NoError(t, err)
	assert.Equal(t, rep.Loaded, served.Loaded)
	assert.Equal(t, 6, served.Unresolved+served.Skipped)
}

// The repository's own namespace is custom: none of its objects, not even one it names but
// does not hold, shows up among the SAP objects of the catalogue.
func TestABAPGitRepositoryNamespaceIsCustom(t *testing.T) {
	s := ecc(t)
	require.NoError(t, s.LoadABAPGit("testdata/abapgit-rap"))
	cat, _ := pageAll(t, s, sap.EndpointIndexCatalogContext, sap.IndexRequest{Limit: 1000})
	var sapNames []string
	for _, it := range cat {
		if n := it["name"].(string); strings.HasPrefix(n, "/DMO0/") {
			sapNames = append(sapNames, it["type"].(string)+" "+n)
		}
	}
	assert.Empty(t, sapNames, "objects of the loaded repository's namespace are no SAP objects")
	names := map[string]bool{}
	for _, it := range cat {
		names[it["name"].(string)] = true
	}
	assert.True(t, names["BAPI_TRANSACTION_COMMIT"], "SAP objects the repository uses are still in the catalogue")
	s.mu.RLock()
	defer s.mu.RUnlock()
	assert.True(t, s.isCustom("/DMO0/CX_TRAVEL_ERROR"))
	assert.False(t, s.isCustom("/BOBF/IF_FRW_ACTION"))
}

func TestFunctionStatement(t *testing.T) {
	for src, want := range map[string]string{
		"FUNCTION z_a.\nENDFUNCTION.":                            "Z_A",
		"\"! ABAP Doc\n\"! more\nFUNCTION /ns/b.":                "/NS/B",
		"*---\n* comment\n\n   FUNCTION z_c. \"trailing comment": "Z_C",
		"\n\n##NEEDED\nFUNCTION z_d.":                            "Z_D",
		"##NEEDED ##CALLED FUNCTION z_e.":                        "Z_E",
		"FUNCTION-POOL zfg.":                                     "",
		"* top include\nINCLUDE lzfgtop.\nFUNCTION z_late.":      "",
	} {
		assert.Equal(t, want, functionStatement(src), src)
	}
}

// A malformed or unreadable file never stops the load; an empty or missing folder is an error.
func TestABAPGitLoadFailsOnlyWithoutObjects(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zbad.dtel.xml"), []byte("<abapGit><asx:abap"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zr_ok.prog.abap"), []byte("REPORT zr_ok.\n"), 0o644))
	s := ecc(t)
	rep, err := s.LoadABAPGitReport(dir)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Loaded)
	require.Len(t, rep.Types["DTEL"].Skipped, 1)
	assert.Contains(t, rep.Types["DTEL"].Skipped[0].Reason, "malformed XML")
	_, err = ecc(t).LoadABAPGitReport(filepath.Join(dir, "missing"))
	assert.Error(t, err)
	_, err = ecc(t).Call(t.Context(), EndpointABAPGitLoad, eccKey, nil)
	assert.Equal(t, sap.ErrNotFound, sapCode(t, err), "no load, no summary")
}

// BenchmarkLoadABAPGit loads a generated 3,500-object repository (go test -run X -bench
// LoadABAPGit ./internal/sap/sapsim/).
func BenchmarkLoadABAPGit(b *testing.B) {
	dir := b.TempDir()
	writeGeneratedRepository(b, dir, 3500)
	b.ResetTimer()
	benchmarkLoad(b, dir, 3500)
}

// BenchmarkLoadPublicRepositories loads the public abapGit repositories named in
// ABAP_ORACLE_REPOS (name=folder,…; scripts/abap-oracle-repos.sh), one sub-benchmark each.
func BenchmarkLoadPublicRepositories(b *testing.B) {
	env := os.Getenv("ABAP_ORACLE_REPOS")
	if strings.TrimSpace(env) == "" {
		b.Skip("public repositories skipped: set ABAP_ORACLE_REPOS=name=folder,…")
	}
	for _, item := range strings.Split(env, ",") {
		name, dir, _ := strings.Cut(strings.TrimSpace(item), "=")
		b.Run(name, func(b *testing.B) { benchmarkLoad(b, dir, 1) })
	}
}

// benchmarkLoad loads dir into a fresh system per iteration and reports the load's wall time,
// the memory it allocated and the memory the loaded objects keep.
func benchmarkLoad(b *testing.B, dir string, min int) {
	for i := 0; i < b.N; i++ {
		land := NewLandscape(Options{})
		s, _ := land.System("ECC")
		s.Info() // the built-in landscape is built before the clock starts
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		rep, err := s.LoadABAPGitReport(dir)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(elapsed.Milliseconds()), "ms/load")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "MiB-allocated")
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-kept")
		b.ReportMetric(float64(rep.Loaded), "objects")
		if rep.Loaded < min {
			b.Fatalf("loaded %d", rep.Loaded)
		}
		runtime.KeepAlive(land)
	}
}

// writeGeneratedRepository writes an abapGit repository of about n objects in a /GEN/
// namespace: per block of 10 a domain, two data elements, a table, a structure, a report, a
// class, a function group with one module, a CDS view and a table type.
func writeGeneratedRepository(tb testing.TB, dir string, n int) {
	tb.Helper()
	src := filepath.Join(dir, "src", "#gen#core")
	require.NoError(tb, os.MkdirAll(src, 0o755))
	put := func(name, text string) {
		require.NoError(tb, os.WriteFile(filepath.Join(src, name), []byte(text), 0o644))
	}
	wrap := func(values string) string {
		return `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0"><asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0"><asx:values>` + values + `</asx:values></asx:abap></abapGit>`
	}
	for i := 0; i < n/11+1; i++ {
		id := fmt.Sprintf("%04d", i)
		put("#gen#d"+id+".doma.xml", wrap(`<DD01V><DOMNAME>/GEN/D`+id+`</DOMNAME><DATATYPE>CHAR</DATATYPE><LENG>000020</LENG><DDTEXT>Domain `+id+`</DDTEXT></DD01V>`))
		put("#gen#e"+id+".dtel.xml", wrap(`<DD04V><ROLLNAME>/GEN/E`+id+`</ROLLNAME><DOMNAME>/GEN/D`+id+`</DOMNAME><DDTEXT>Element `+id+`</DDTEXT></DD04V>`))
		put("#gen#f"+id+".dtel.xml", wrap(`<DD04V><ROLLNAME>/GEN/F`+id+`</ROLLNAME><DOMNAME>CHAR44</DOMNAME><DDTEXT>Text `+id+`</DDTEXT></DD04V>`))
		fields := `<DD03P><FIELDNAME>CLIENT</FIELDNAME><KEYFLAG>X</KEYFLAG><ROLLNAME>MANDT</ROLLNAME></DD03P>
<DD03P><FIELDNAME>ID</FIELDNAME><KEYFLAG>X</KEYFLAG><ROLLNAME>SYSUUID_X16</ROLLNAME></DD03P>
<DD03P><FIELDNAME>CODE</FIELDNAME><ROLLNAME>/GEN/E` + id + `</ROLLNAME></DD03P>
<DD03P><FIELDNAME>TEXT</FIELDNAME><ROLLNAME>/GEN/F` + id + `</ROLLNAME></DD03P>
<DD03P><FIELDNAME>ACTIVE</FIELDNAME><ROLLNAME>ABAP_BOOLEAN</ROLLNAME></DD03P>`
		put("#gen#t"+id+".tabl.xml", wrap(`<DD02V><TABNAME>/GEN/T`+id+`</TABNAME><TABCLASS>TRANSP</TABCLASS><DDTEXT>Table `+id+`</DDTEXT></DD02V><DD03P_TABLE>`+fields+
			`<DD03P><FIELDNAME>.INCLUDE</FIELDNAME><PRECFIELD>SYCH_BDL_DRAFT_ADMIN_INC</PRECFIELD></DD03P></DD03P_TABLE>`))
		put("#gen#s"+id+".tabl.xml", wrap(`<DD02V><TABNAME>/GEN/S`+id+`</TABNAME><TABCLASS>INTTAB</TABCLASS><DDTEXT>Structure `+id+`</DDTEXT></DD02V><DD03P_TABLE>`+fields+`</DD03P_TABLE>`))
		put("#gen#tt"+id+".ttyp.xml", wrap(`<DD40V><TYPENAME>/GEN/TT`+id+`</TYPENAME><ROWTYPE>/GEN/S`+id+`</ROWTYPE><DDTEXT>Rows `+id+`</DDTEXT></DD40V>`))
		put("#gen#r"+id+".prog.abap", "* Report "+id+"\nREPORT /gen/r"+id+".\nDATA lt TYPE /gen/tt"+id+".\nSELECT * FROM /gen/t"+id+" INTO TABLE @DATA(rows).\nSELECT * FROM bseg INTO TABLE @DATA(items) UP TO 10 ROWS.\nCALL FUNCTION '/GEN/FM"+id+"'.\n")
		put("#gen#cl"+id+".clas.abap", "CLASS /gen/cl"+id+" DEFINITION PUBLIC FINAL CREATE PUBLIC.\n  PUBLIC SECTION.\n    METHODS run.\nENDCLASS.\nCLASS /gen/cl"+id+" IMPLEMENTATION.\n  METHOD run.\n    DATA(o) = NEW cl_salv_table( ).\n    UPDATE /gen/t"+id+" SET text = 'x'.\n  ENDMETHOD.\nENDCLASS.\n")
		put("#gen#fg"+id+".fugr.xml", wrap(`<AREAT>Group `+id+`</AREAT><FUNCTIONS><item><FUNCNAME>/GEN/FM`+id+`</FUNCNAME><SHORT_TEXT>Module `+id+`</SHORT_TEXT></item></FUNCTIONS>`))
		put("#gen#fg"+id+".fugr.#gen#fm"+id+".abap", "\"! Module "+id+"\nFUNCTION /gen/fm"+id+".\n  SELECT SINGLE * FROM /gen/t"+id+" INTO @DATA(r).\nENDFUNCTION.\n")
		put("#gen#i"+id+".ddls.asddls", "define view entity /GEN/I"+id+" as select from /gen/t"+id+" { key id as Id, code as Code }\n")
	}
}

func TestXMLAttrTakesWholeAttributeNames(t *testing.T) {
	text := `<x shortdescription="no" adtcore:description="Travel app" description="plain"/>`
	assert.Equal(t, "Travel app", xmlAttr(text, "description"))
	assert.Equal(t, "", xmlAttr(`<x shortdescription="no"/>`, "description"))
}

// A function group whose XML cannot be read still loads from its includes.
func TestABAPGitFunctionGroupWithMalformedXML(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zfg_x.fugr.xml"), []byte("<abapGit><FUNCTIONS>"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zfg_x.fugr.z_x_read.abap"), []byte("\"! Reads\nFUNCTION z_x_read.\nENDFUNCTION.\n"), 0o644))
	rep, err := ecc(t).LoadABAPGitReport(dir)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Types["FUNC"].Loaded)
	assert.Equal(t, 1, rep.Types["FUGR"].Loaded)
	require.Len(t, rep.Types["FUGR"].Unresolved, 1)
	assert.Contains(t, rep.Types["FUGR"].Unresolved[0].Reason, "malformed XML")
	assert.Zero(t, rep.Skipped)
}
