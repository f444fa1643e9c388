package sapenrich

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/sapindex"
)

// The expected levels below were checked by hand against ../shared/data/cloudification/
// (line numbers of that copy):
//   - FUNC BAPI_TRANSACTION_COMMIT: objectReleaseInfo_BTPLatest.json:47780 "state":"released" → A
//   - DDLS I_SALESORDER: objectReleaseInfo_PCELatest.csv:7309 CDS_STOB,I_SALESORDER,…,RELEASED → A
//   - BADI_DEF /ATL/BADI_FILL_BNKA_FIELDS: objectReleaseInfo_PCELatest.csv:33297 RELEASED → A (explicit)
//   - CLAS CL_AUNIT_ASSERT: objectReleaseInfo_PCELatest.csv:4 DEPRECATED, successor CLAS CL_ABAP_UNIT_ASSERT → A, flagged
//   - FUNC BAPI_SALESORDER_CREATEFROMDAT2: objectClassifications_SAP.json:27609-27612 "classicAPI";
//     objectReleaseInfo_PCELatest.csv:397 successor BDEF I_SALESORDERTP → B
//   - FUNC BAPI_ACC_DOCUMENT_POST: objectClassifications_SAP.json:31095 "classicAPI";
//     objectReleaseInfo_PCELatest.csv:438 successor BDEF I_JOURNALENTRYTP → B
//   - TABL MARA: objectReleaseInfo_PCELatest.csv:925 NOT_TO_BE_RELEASED, successor I_PRODUCT → C (read), D (write)
//   - TABL BSEG: objectReleaseInfo_PCELatest.csv:861 NOT_TO_BE_RELEASED, successor I_OPERATIONALACCTGDOCITEM → C
//   - CLAS CF_REBD_BUILDING: objectClassifications_SAP.json:2732-2736 "noAPI" → D
var ccObjects = []object{
	{typ: "CLAS", name: "ZCL_RELEASED_ONLY", pkg: "ZSD", desc: "Uses released APIs only"},
	{typ: "PROG", name: "ZNO_SAP_USAGE", pkg: "ZSD", desc: "Uses only custom objects"},
	{typ: "PROG", name: "ZCLASSIC_TIE", pkg: "ZSD", desc: "Two classic BAPIs"},
	{typ: "PROG", name: "ZREADS_INTERNAL", pkg: "ZFI", desc: "Reads SAP tables"},
	{typ: "PROG", name: "ZWRITES_TIE", pkg: "ZFI", desc: "Writes MARA and uses a noAPI class"},
	{typ: "CLAS", name: "ZCL_BANK_BADI", pkg: "ZFI", desc: "Released BAdI implementation"},
	{typ: "TABL", name: "ZKNA1_APPEND", pkg: "ZFI", desc: "Append to KNA1"},
}

var ccRels = []rel{
	{"CLAS", "ZCL_RELEASED_ONLY", "FUNC", "BAPI_TRANSACTION_COMMIT", "calls_function", "", 12},
	{"CLAS", "ZCL_RELEASED_ONLY", "DDLS", "I_SALESORDER", "uses_view", "", 20},
	{"CLAS", "ZCL_RELEASED_ONLY", "CLAS", "CL_AUNIT_ASSERT", "uses_class", "call", 30},
	{"CLAS", "ZCL_RELEASED_ONLY", "TABL", "ZSALES_BONUS", "uses_table", "write", 40}, // custom: ignored
	{"PROG", "ZNO_SAP_USAGE", "CLAS", "ZCL_RELEASED_ONLY", "uses_class", "", 0},
	{"PROG", "ZCLASSIC_TIE", "FUNC", "BAPI_SALESORDER_CREATEFROMDAT2", "calls_function", "", 5},
	{"PROG", "ZCLASSIC_TIE", "FUNC", "BAPI_ACC_DOCUMENT_POST", "calls_function", "", 9},
	{"PROG", "ZCLASSIC_TIE", "FUNC", "BAPI_TRANSACTION_COMMIT", "calls_function", "", 10},
	{"PROG", "ZREADS_INTERNAL", "TABL", "BSEG", "uses_table", "", 3},
	{"PROG", "ZREADS_INTERNAL", "FUNC", "BAPI_ACC_DOCUMENT_POST", "calls_function", "", 4},
	{"PROG", "ZWRITES_TIE", "TABL", "MARA", "uses_table", "read", 7},
	{"PROG", "ZWRITES_TIE", "TABL", "MARA", "uses_table", "write", 8},
	{"PROG", "ZWRITES_TIE", "CLAS", "CF_REBD_BUILDING", "uses_class", "instantiate", 9},
	{"CLAS", "ZCL_BANK_BADI", "BADI", "/ATL/BADI_FILL_BNKA_FIELDS", "implements_badi", "", 0},
	{"TABL", "ZKNA1_APPEND", "TABL", "KNA1", "extends", "", 0},
}

type ccRecord struct {
	Level      string
	Findings   []Finding
	Conversion []Conversion
}

func readLevels(t *testing.T, l *landscape) map[string]ccRecord {
	t.Helper()
	rows, err := l.db().Query(context.Background(), `SELECT object_name, level, findings, conversion FROM clean_core_analysis
		WHERE connection_id = $1 AND generation = $2`, l.scope.ConnectionID, l.scope.Generation)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]ccRecord{}
	for rows.Next() {
		var name, level string
		var f, c []byte
		require.NoError(t, rows.Scan(&name, &level, &f, &c))
		var r ccRecord
		r.Level = level
		require.NoError(t, json.Unmarshal(f, &r.Findings))
		require.NoError(t, json.Unmarshal(c, &r.Conversion))
		out[name] = r
	}
	require.NoError(t, rows.Err())
	return out
}

func usagesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Level+" "+f.Type+" "+f.Name+" "+f.Kind)
	}
	return out
}

func TestCleanCoreLevelsCoverAToDWithTies(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	l.index(1, ccObjects, ccRels, nil)
	var calls int
	var lastDone, lastTotal int64
	res, err := AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{BatchSize: 3}, func(done, total int64) {
		calls++
		lastDone, lastTotal = done, total
	})
	require.NoError(t, err)
	assert.EqualValues(t, 7, res.Objects)
	assert.Equal(t, map[string]int64{"A": 3, "B": 1, "C": 2, "D": 1}, res.Levels)
	assert.EqualValues(t, 7, lastDone)
	assert.EqualValues(t, 7, lastTotal)
	assert.Positive(t, calls)

	got := readLevels(t, l)
	require.Len(t, got, 7)

	a := got["ZCL_RELEASED_ONLY"]
	assert.Equal(t, "A", a.Level)
	assert.Equal(t, []string{"A CLAS CL_AUNIT_ASSERT call", "A DDLS I_SALESORDER read", "A FUNC BAPI_TRANSACTION_COMMIT call"}, usagesOf(a.Findings))
	assert.True(t, a.Findings[0].Deprecated, "deprecated but still released: A with a flag")
	assert.Equal(t, []cleancore.Object{{Type: "CLAS", Name: "CL_ABAP_UNIT_ASSERT"}}, a.Findings[0].Successors)
	assert.Equal(t, 30, a.Findings[0].Line)
	assert.Empty(t, a.Conversion, "S/4HANA: no conversion readiness")

	none := got["ZNO_SAP_USAGE"]
	assert.Equal(t, "A", none.Level, "no SAP usage is A")
	assert.Empty(t, none.Findings)

	b := got["ZCLASSIC_TIE"]
	assert.Equal(t, "B", b.Level)
	assert.Equal(t, []string{"B FUNC BAPI_ACC_DOCUMENT_POST call", "B FUNC BAPI_SALESORDER_CREATEFROMDAT2 call",
		"A FUNC BAPI_TRANSACTION_COMMIT call"}, usagesOf(b.Findings), "both classic BAPIs tie at B, worst first")
	assert.Equal(t, "classicAPI", b.Findings[0].State)
	assert.Contains(t, b.Findings[1].Successors, cleancore.Object{Type: "BDEF", Name: "I_SALESORDERTP"})

	c := got["ZREADS_INTERNAL"]
	assert.Equal(t, "C", c.Level)
	assert.Equal(t, []string{"C TABL BSEG read", "B FUNC BAPI_ACC_DOCUMENT_POST call"}, usagesOf(c.Findings))
	assert.Equal(t, "notToBeReleased", c.Findings[0].State)
	assert.Equal(t, 3, c.Findings[0].Line)

	d := got["ZWRITES_TIE"]
	assert.Equal(t, "D", d.Level)
	assert.Equal(t, []string{"D CLAS CF_REBD_BUILDING call", "D TABL MARA write", "C TABL MARA read"}, usagesOf(d.Findings),
		"a noAPI class and a write to MARA tie at D")
	assert.Equal(t, "noAPI", d.Findings[0].State)
	assert.Equal(t, "writes to an SAP object", d.Findings[1].Why)
	assert.Equal(t, 8, d.Findings[1].Line)

	badi := got["ZCL_BANK_BADI"]
	assert.Equal(t, "A", badi.Level, "implementing a released BAdI is an explicit enhancement")
	assert.Equal(t, []string{"A BADI_DEF /ATL/BADI_FILL_BNKA_FIELDS enhancement"}, usagesOf(badi.Findings))

	appendRow := got["ZKNA1_APPEND"]
	assert.Equal(t, "C", appendRow.Level, "an append depends on the unreleased KNA1")

	// Idempotent: a retry rewrites the same rows.
	_, err = AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	assert.Equal(t, got, readLevels(t, l))
	dist, err := l.x().LevelCounts(ctx, sapindex.Graph{ConnectionID: l.scope.ConnectionID, Generation: l.scope.Generation}, "")
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"A": 3, "B": 1, "C": 2, "D": 1}, dist)
}

func TestCleanCoreConversionReadinessOnECC(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "ECC")
	l.index(1, ccObjects, ccRels, nil)
	_, err := AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	got := readLevels(t, l)

	conv := func(name string) map[string][]cleancore.Object {
		out := map[string][]cleancore.Object{}
		for _, it := range got[name].Conversion {
			out[it.Type+" "+it.Name] = it.Successors
		}
		return out
	}
	c := conv("ZREADS_INTERNAL")
	assert.Equal(t, []cleancore.Object{{Type: "CDS_STOB", Name: "I_OPERATIONALACCTGDOCITEM"}}, c["TABL BSEG"])
	assert.Contains(t, c["FUNC BAPI_ACC_DOCUMENT_POST"], cleancore.Object{Type: "BDEF", Name: "I_JOURNALENTRYTP"})

	d := conv("ZWRITES_TIE")
	require.Contains(t, d, "TABL MARA")
	assert.Contains(t, d["TABL MARA"], cleancore.Object{Type: "CDS_STOB", Name: "I_PRODUCT"})
	assert.Len(t, got["ZWRITES_TIE"].Conversion, 2, "MARA once although read and written, plus CF_REBD_BUILDING")

	a := conv("ZCL_RELEASED_ONLY")
	assert.Equal(t, map[string][]cleancore.Object{"CLAS CL_AUNIT_ASSERT": {{Type: "CLAS", Name: "CL_ABAP_UNIT_ASSERT"}}}, a,
		"only the deprecated class; released, current APIs need no conversion")
	assert.Empty(t, got["ZNO_SAP_USAGE"].Conversion)
}

func TestCleanCoreDeltaTouchesOnlyChangedObjects(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	l.index(1, ccObjects, ccRels, nil)
	_, err := AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{}, nil)
	require.NoError(t, err)

	// A marker on an unchanged object shows whether the delta rewrote it.
	_, err = l.db().Exec(ctx, `UPDATE clean_core_analysis SET package = 'MARKER' WHERE object_name = 'ZCLASSIC_TIE'`)
	require.NoError(t, err)
	// The delta merged: ZREADS_INTERNAL now writes BSEG, ZNO_SAP_USAGE was deleted.
	l.index(1, nil, []rel{{"PROG", "ZREADS_INTERNAL", "TABL", "BSEG", "uses_table", "write", 11}}, nil)
	_, err = l.db().Exec(ctx, `DELETE FROM workspace_sap_index WHERE object_name = 'ZNO_SAP_USAGE'`)
	require.NoError(t, err)

	s := l.scope
	s.RunID = l.run([2]string{"PROG", "ZREADS_INTERNAL"}, [2]string{"PROG", "ZNO_SAP_USAGE"})
	res, err := AnalyzeCleanCore(ctx, l.x(), s, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Objects)
	assert.EqualValues(t, 1, res.Removed)

	got := readLevels(t, l)
	assert.Len(t, got, 6)
	assert.Equal(t, "D", got["ZREADS_INTERNAL"].Level)
	assert.NotContains(t, got, "ZNO_SAP_USAGE")
	var pkg string
	require.NoError(t, l.db().QueryRow(ctx, `SELECT package FROM clean_core_analysis WHERE object_name = 'ZCLASSIC_TIE'`).Scan(&pkg))
	assert.Equal(t, "MARKER", pkg, "an unchanged object is not rewritten by a delta")
}

func TestUsageOfDerivesKindFromRelationshipKind(t *testing.T) {
	cases := []struct {
		toType, kind, usage string
		want                cleancore.Usage
	}{
		{"TABL", "uses_table", "", cleancore.Usage{Type: "TABL", Name: "X", Kind: cleancore.KindRead}},
		{"TABL", "uses_table", "write", cleancore.Usage{Type: "TABL", Name: "X", Kind: cleancore.KindWrite}},
		{"FUNC", "calls_function", "", cleancore.Usage{Type: "FUNC", Name: "X", Kind: cleancore.KindCall}},
		{"CLAS", "uses_class", "instantiate", cleancore.Usage{Type: "CLAS", Name: "X", Kind: cleancore.KindCall}},
		{"CLAS", "uses_class", "type", cleancore.Usage{Type: "CLAS", Name: "X", Kind: cleancore.KindType}},
		{"BADI", "implements_badi", "", cleancore.Usage{Type: "BADI_DEF", Name: "X", Kind: cleancore.KindEnhancement}},
		{"PROG", "enhances", "", cleancore.Usage{Type: "PROG", Name: "X", Kind: cleancore.KindEnhancement}},
		{"TABL", "extends", "", cleancore.Usage{Type: "TABL", Name: "X", Kind: cleancore.KindType}},
		{"PROG", "uses", "modification", cleancore.Usage{Type: "PROG", Name: "X", Kind: cleancore.KindModification}},
	}
	for _, tc := range cases {
		got, ok := UsageOf(tc.toType, "X", tc.kind, tc.usage)
		assert.True(t, ok)
		assert.Equal(t, tc.want, got, "%s %s %s", tc.toType, tc.kind, tc.usage)
	}
	_, ok := UsageOf("TABL", " ", "uses_table", "")
	assert.False(t, ok)
}

// The system's own code is custom whatever its namespace: objects of a /DMO0/ repository
// that use each other (and one of its objects the index does not hold) grade as SAP's own
// ABAP Cloud samples do by hand, by their SAP usages alone.
func TestCleanCoreRepositoryNamespaceIsCustom(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	l.index(1, []object{
		{typ: "DDLS", name: "/DMO0/R_TRAVEL", pkg: "/DMO0/TRAVEL", desc: "Travel"},
		{typ: "CLAS", name: "/DMO0/BP_R_TRAVEL", pkg: "/DMO0/TRAVEL", desc: "Behaviour pool"},
		{typ: "TABL", name: "/DMO0/TRAVEL_A", pkg: "/DMO0/TRAVEL", desc: "Travel (active)"},
	}, []rel{
		{"DDLS", "/DMO0/R_TRAVEL", "TABL", "/DMO0/TRAVEL_A", "uses_table", "read", 4},
		{"CLAS", "/DMO0/BP_R_TRAVEL", "TABL", "/DMO0/TRAVEL_A", "uses_table", "write", 8},
		{"CLAS", "/DMO0/BP_R_TRAVEL", "CLAS", "/DMO0/CX_TRAVEL_ERROR", "uses_class", "type", 9},
		{"CLAS", "/DMO0/BP_R_TRAVEL", "FUNC", "BAPI_TRANSACTION_COMMIT", "calls_function", "", 12},
		{"CLAS", "/DMO0/BP_R_TRAVEL", "TABL", "/BOBF/D_NOT_CUSTOM", "uses_table", "read", 14},
	}, nil)
	res, err := AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 3, res.Objects)
	got := readLevels(t, l)
	assert.Equal(t, "A", got["/DMO0/R_TRAVEL"].Level)
	assert.Empty(t, got["/DMO0/R_TRAVEL"].Findings)
	assert.Equal(t, []string{"C TABL /BOBF/D_NOT_CUSTOM read", "A FUNC BAPI_TRANSACTION_COMMIT call"}, usagesOf(got["/DMO0/BP_R_TRAVEL"].Findings),
		"its own namespace is custom, another /…/ namespace stays SAP's")
}
