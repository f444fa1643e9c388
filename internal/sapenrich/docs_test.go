package sapenrich

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/offlinellm"
)

// The offline model answers each kind of doc prompt with a recognisable text, so the tests
// can tell that the stored docs carry the model's answers.
var docRules = []offlinellm.Rule{
	{Name: "object", Match: `(?s)^Write the technical documentation of this ABAP object.*?Object: (\S+ \S+)`, Reply: "Technical doc of $1 by the offline model."},
	{Name: "package", Match: `(?s)^Write the module documentation of this SAP package.*?Package: (\S+)`, Reply: "Module doc of $1 by the offline model."},
	{Name: "process", Match: `(?s)^Describe how.*?Business process: ([^\n]+)`, Reply: "Process doc of $1 by the offline model."},
}

var docObjects = append(append([]object(nil), ccObjects...),
	object{typ: "TABL", name: "/ACME/BONUS", pkg: "ZSD", desc: "Bonus per customer", fields: []map[string]any{
		{"name": "MANDT", "type": "CLNT", "length": 3, "key": true},
		{"name": "BONUS_ID", "type": "CHAR", "length": 10, "key": true, "description": "Bonus"},
		{"name": "KUNNR", "type": "CHAR", "length": 10, "check_table": "KNA1", "description": "Customer"},
		{"name": "VBELN", "type": "CHAR", "length": 10, "description": `Sales document "quoted" 100%`},
	}},
	object{typ: "TABL", name: "ZBONUS_ITEM", pkg: "ZSD", desc: "Bonus items", fields: []map[string]any{
		{"name": "MANDT", "type": "CLNT", "length": 3, "key": true},
		{"name": "BONUS_ID", "type": "CHAR", "length": 10, "key": true},
		{"name": "POSNR", "type": "NUMC", "length": 6, "key": true},
		{"name": "/ACME/AMOUNT", "type": "CURR", "length": 15},
	}},
)

var docRels = append(append([]rel(nil), ccRels...),
	rel{"PROG", "ZCLASSIC_TIE", "TABL", "/ACME/BONUS", "uses_table", "write", 0},
	rel{"PROG", "ZCLASSIC_TIE", "TABL", "VBAK", "uses_table", "", 0},
	rel{"PROG", "ZCLASSIC_TIE", "TABL", "KNA1", "uses_table", "", 0},
	rel{"PROG", "ZCLASSIC_TIE", "TABL", "ZBONUS_ITEM", "uses_table", "", 0},
)

var docCode = map[string]string{
	"PROG ZREADS_INTERNAL": "REPORT zreads_internal.\n" +
		"DATA lv_password TYPE string VALUE 'Sup3rSecret!'.\n" +
		"DATA(lv_header) = `Authorization: Bearer abcdefghijklmnop123456`.\n" +
		"SELECT * FROM bseg INTO TABLE @DATA(lt_bseg) UP TO 10 ROWS.\n",
}

func docRows(t *testing.T, l *landscape) map[string]struct {
	Markdown, Model string
	Generation      int64
} {
	t.Helper()
	rows, err := l.db().Query(context.Background(), `SELECT kind || ':' || subject, markdown, model, generation FROM sap_generated_docs WHERE connection_id = $1`, l.scope.ConnectionID)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]struct {
		Markdown, Model string
		Generation      int64
	}{}
	for rows.Next() {
		var k string
		var v struct {
			Markdown, Model string
			Generation      int64
		}
		require.NoError(t, rows.Scan(&k, &v.Markdown, &v.Model, &v.Generation))
		out[k] = v
	}
	require.NoError(t, rows.Err())
	return out
}

func docsOpts(ms *modelServer) DocsOptions {
	return DocsOptions{Models: ms.registry, Model: "offline:" + offlinellm.ModelName}
}

func prepareDocs(t *testing.T, systemType string) (*landscape, *modelServer) {
	t.Helper()
	l := newLandscape(t, systemType)
	l.index(1, docObjects, docRels, docCode)
	_, err := AnalyzeCleanCore(context.Background(), l.x(), l.scope, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	return l, newModelServer(t, docRules...)
}

func TestGenerateDocsWritesModelDocsDiagramsAndProcesses(t *testing.T) {
	ctx := context.Background()
	l, ms := prepareDocs(t, "ECC")
	var lastDone, lastTotal int64
	res, err := GenerateDocs(ctx, l.x(), l.scope, docsOpts(ms), func(done, total int64) { lastDone, lastTotal = done, total })
	require.NoError(t, err)
	// 9 objects, 2 packages, 4 processes (order to cash, record to report, plan to inventory,
	// customer master); diagrams for both packages (ZFI has the append to KNA1).
	assert.Equal(t, DocsResult{Written: 9 + 2 + 4, Diagrams: 2, Entries: 17}, res)
	assert.EqualValues(t, 15, ms.chatCalls.Load())
	assert.Equal(t, lastTotal, lastDone)

	docs := docRows(t, l)
	require.Len(t, docs, 17)
	obj := docs["object:PROG ZREADS_INTERNAL"]
	assert.Contains(t, obj.Markdown, "# PROG ZREADS_INTERNAL\n\nTechnical doc of PROG ZREADS_INTERNAL by the offline model.")
	assert.Contains(t, obj.Markdown, "Clean Core level: C")
	assert.Contains(t, obj.Markdown, "read TABL BSEG: level C")
	assert.Equal(t, "offline:"+offlinellm.ModelName, obj.Model)
	assert.EqualValues(t, 1, obj.Generation)
	assert.Contains(t, docs["package:ZSD"].Markdown, "Module doc of ZSD by the offline model.")
	assert.Contains(t, docs["business_process:record_to_report"].Markdown, "Process doc of Record to report by the offline model.")
	assert.Contains(t, docs["business_process:record_to_report"].Markdown, "PROG ZREADS_INTERNAL (package ZFI): uses BAPI_ACC_DOCUMENT_POST; uses BSEG")
	assert.Contains(t, docs["business_process:plan_to_inventory"].Markdown, "writes MARA")
	assert.Empty(t, docs["er_diagram:ZSD"].Model, "diagrams need no model")

	// No secret reaches the model; the code around it does.
	ms.mu.Lock()
	bodies := strings.Join(ms.bodies, "\n")
	ms.mu.Unlock()
	assert.Contains(t, bodies, "SELECT * FROM bseg")
	assert.NotContains(t, bodies, "Sup3rSecret")
	assert.NotContains(t, bodies, "abcdefghijklmnop123456")
	assert.NotContains(t, obj.Markdown, "Sup3rSecret", "the facts section quotes no source")

	// Every doc is searchable in the generation.
	var entries int
	require.NoError(t, l.db().QueryRow(ctx, `SELECT count(*) FROM sap_search_entries WHERE connection_id = $1 AND generation = 1
		AND category = 'doc' AND object_type = 'DOC' AND object_name = 'object:PROG ZREADS_INTERNAL' AND body LIKE '%Technical doc of%'`,
		l.scope.ConnectionID).Scan(&entries))
	assert.Equal(t, 1, entries)
	emb, err := EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(t)}, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 17, emb.Embedded)
}

func TestGenerateDocsCachesByInputAndRegeneratesOnlyChangedOnDelta(t *testing.T) {
	ctx := context.Background()
	l, ms := prepareDocs(t, "S4HANA")
	_, err := GenerateDocs(ctx, l.x(), l.scope, docsOpts(ms), nil)
	require.NoError(t, err)
	calls := ms.chatCalls.Load()

	// Generation 2 with the same content: no model call, every doc confirmed for 2.
	_, err = l.db().Exec(ctx, `INSERT INTO workspace_sap_index SELECT connection_id, workspace_id, 2, phase, object_type, object_name,
		item_key, package, description, data, content_hash FROM workspace_sap_index WHERE generation = 1`)
	require.NoError(t, err)
	s2 := l.scope
	s2.Generation = 2
	_, err = AnalyzeCleanCore(ctx, l.x(), s2, CleanCoreOptions{}, nil)
	require.NoError(t, err)
	res, err := GenerateDocs(ctx, l.x(), s2, docsOpts(ms), nil)
	require.NoError(t, err)
	assert.Equal(t, DocsResult{Unchanged: 17, Entries: 17}, res)
	assert.Equal(t, calls, ms.chatCalls.Load(), "unchanged input: no model call")
	for k, d := range docRows(t, l) {
		assert.EqualValues(t, 2, d.Generation, k)
	}
	_, err = EmbedEntries(ctx, l.x(), s2, EmbedOptions{Embedder: ms.embedder(t)}, nil)
	require.NoError(t, err)

	// A delta changes one object's description: its doc and its package's doc are rewritten.
	_, err = l.db().Exec(ctx, `UPDATE workspace_sap_index SET description = 'Reads FI line items for the audit'
		WHERE generation = 2 AND phase = 'custom_objects' AND object_name = 'ZREADS_INTERNAL'`)
	require.NoError(t, err)
	s2.RunID = l.run([2]string{"PROG", "ZREADS_INTERNAL"})
	res, err = GenerateDocs(ctx, l.x(), s2, docsOpts(ms), nil)
	require.NoError(t, err)
	assert.EqualValues(t, 2, res.Written)
	assert.EqualValues(t, calls+2, ms.chatCalls.Load())
	assert.Contains(t, docRows(t, l)["object:PROG ZREADS_INTERNAL"].Markdown, "Reads FI line items for the audit")
	// The changed docs' search entries lost their embedding (to be recomputed), the others kept theirs.
	var missing []string
	rows, err := l.db().Query(ctx, `SELECT object_name FROM sap_search_entries WHERE generation = 2 AND embedding IS NULL ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		missing = append(missing, n)
	}
	assert.Equal(t, []string{"object:PROG ZREADS_INTERNAL", "package:ZFI"}, missing)

	// A deleted object's doc goes with it.
	_, err = l.db().Exec(ctx, `DELETE FROM workspace_sap_index WHERE generation = 2 AND object_name = 'ZNO_SAP_USAGE'`)
	require.NoError(t, err)
	s2.RunID = l.run([2]string{"PROG", "ZNO_SAP_USAGE"})
	res, err = GenerateDocs(ctx, l.x(), s2, docsOpts(ms), nil)
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Removed)
	assert.NotContains(t, docRows(t, l), "object:PROG ZNO_SAP_USAGE")
}

func TestGenerateDocsCapsModelCallsPerRun(t *testing.T) {
	ctx := context.Background()
	l, ms := prepareDocs(t, "S4HANA")
	opts := docsOpts(ms)
	opts.MaxModelDocs = 5
	res, err := GenerateDocs(ctx, l.x(), l.scope, opts, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 5, res.Written)
	assert.EqualValues(t, 10, res.Deferred)
	assert.EqualValues(t, 5, ms.chatCalls.Load())
	res, err = GenerateDocs(ctx, l.x(), l.scope, opts, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 5, res.Written, "the next run writes the next ones")
	assert.EqualValues(t, 7, res.Unchanged, "5 docs and 2 diagrams")
	assert.EqualValues(t, 5, res.Deferred)
}

func TestGenerateDocsSkipsAFailedDocAndReportsAnOutage(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	l.index(1, docObjects, docRels, docCode)
	rules := append([]offlinellm.Rule{{Name: "broken", Match: `Object: PROG ZWRITES_TIE`, FailStatus: 400}}, docRules...)
	ms := newModelServer(t, rules...)
	res, err := GenerateDocs(ctx, l.x(), l.scope, docsOpts(ms), nil)
	require.NoError(t, err, "one failed doc does not fail the enrichment")
	assert.EqualValues(t, 1, res.Failed)
	assert.EqualValues(t, 14, res.Written)
	assert.NotContains(t, docRows(t, l), "object:PROG ZWRITES_TIE")

	// The model is down: an error the activity retries; diagrams are still written.
	l2 := newLandscape(t, "S4HANA")
	l2.index(1, docObjects, docRels, docCode)
	ms2 := newModelServer(t, docRules...)
	ms2.failChat.Store(true)
	opts := docsOpts(ms2)
	opts.Concurrency = 1
	_, err = GenerateDocs(ctx, l2.x(), l2.scope, opts, nil)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrModelOutage), err)
	assert.LessOrEqual(t, ms2.chatCalls.Load(), int64(outageAfter+1), "an outage stops the run early")
	ms2.failChat.Store(false)
	res, err = GenerateDocs(ctx, l2.x(), l2.scope, opts, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 15, res.Written)
	assert.Len(t, docRows(t, l2), 17)

	// Requests the model refuses (4xx) are those docs' failures, not an outage, even all of them.
	l3 := newLandscape(t, "S4HANA")
	l3.index(1, docObjects, docRels, docCode)
	ms3 := newModelServer(t, offlinellm.Rule{Name: "refuse", Match: `.`, FailStatus: 400})
	res, err = GenerateDocs(ctx, l3.x(), l3.scope, docsOpts(ms3), nil)
	require.NoError(t, err)
	assert.EqualValues(t, 15, res.Failed)
	assert.EqualValues(t, 2, res.Diagrams)
}

// A line-by-line check of Mermaid's erDiagram grammar (mermaid's erDiagram.jison): quoted
// entity names without '"' or '%', attribute types and names of [A-Za-z_][A-Za-z0-9_-]*,
// keys PK/FK/UK, quoted comments and labels.
var (
	mmEntity = `"[^"%\r\n\\]+"`
	mmLines  = []*regexp.Regexp{
		regexp.MustCompile(`^erDiagram$`),
		regexp.MustCompile(`^    ` + mmEntity + `( \{)?$`),
		regexp.MustCompile(`^        [A-Za-z_][A-Za-z0-9_-]* [A-Za-z_*][A-Za-z0-9_\-\[\]()]*( (PK|FK|UK)(,(PK|FK|UK))*)?( "[^"\n]*")?$`),
		regexp.MustCompile(`^    \}$`),
		regexp.MustCompile(`^    ` + mmEntity + ` (\|o|\|\||\}o|\}\|)(--|\.\.)(o\||\|\||o\{|\|\{) ` + mmEntity + ` : "[^"\n]*"$`),
	}
)

func checkMermaid(t *testing.T, diagram string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimRight(diagram, "\n"), "\n") {
		ok := false
		for _, re := range mmLines {
			ok = ok || re.MatchString(line)
		}
		assert.True(t, ok, "not valid erDiagram syntax: %q", line)
	}
}

func TestERDiagramIsValidMermaidFromTablesFieldsAndUsage(t *testing.T) {
	ctx := context.Background()
	l, ms := prepareDocs(t, "S4HANA")
	_, err := GenerateDocs(ctx, l.x(), l.scope, docsOpts(ms), nil)
	require.NoError(t, err)
	md := docRows(t, l)["er_diagram:ZSD"].Markdown
	start, end := strings.Index(md, "```mermaid\n"), strings.LastIndex(md, "```")
	require.True(t, start >= 0 && end > start, md)
	diagram := md[start+len("```mermaid\n") : end]
	checkMermaid(t, diagram)
	assert.Contains(t, diagram, `    "/ACME/BONUS" {`)
	assert.Contains(t, diagram, `        CHAR_10 KUNNR FK "Customer"`)
	assert.Contains(t, diagram, `        CURR_15 _ACME_AMOUNT`)
	assert.Contains(t, diagram, `"Sales document  quoted  100 "`[:0]) // quotes and % are dropped from comments
	assert.NotContains(t, diagram, `"quoted"`)
	assert.Contains(t, diagram, `    "/ACME/BONUS" }o--|| "KNA1" : "KUNNR"`, "check table")
	assert.Contains(t, diagram, `    "ZBONUS_ITEM" }o--|| "/ACME/BONUS" : "BONUS_ID"`, "shared key field")
	assert.Contains(t, diagram, `    "/ACME/BONUS" }o..o{ "VBAK" : "used with by ZCLASSIC_TIE"`, "used together")
	// The same input renders the same diagram.
	again := mermaidER([]erTable{{Name: "A"}, {Name: "B"}}, []erLink{{From: "A", To: "B", Label: "x", Kind: "usage"}})
	assert.Equal(t, again, mermaidER([]erTable{{Name: "A"}, {Name: "B"}}, []erLink{{From: "A", To: "B", Label: "x", Kind: "usage"}}))
	checkMermaid(t, mermaidER([]erTable{{Name: `we"ird%name\x`, Fields: []erField{{Name: "1ST", Type: "", Desc: "a\nb"}}}}, nil))

	fi := docRows(t, l)["er_diagram:ZFI"].Markdown
	assert.Contains(t, fi, `    "ZKNA1_APPEND" ||--|| "KNA1" : "appends"`)
}

func TestRedactSecrets(t *testing.T) {
	out := redactSecrets("DATA lv_pwd TYPE string VALUE 'hunter2'.\nlv_text = 'hello'.\nheader = |Bearer eyJhbGciOiJIUzI1NiJ9.abc|.\nkey = 'sk-abcdefghijklmnopqrstuvwx'.")
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, out, "'hello'")
	assert.NotContains(t, out, "eyJhbGciOiJIUzI1NiJ9")
	assert.NotContains(t, out, "sk-abcdefghijklmnopqrstuvwx")
}

func TestDocPromptsStayBoundedForHugeObjects(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	var rels []rel
	for i := 0; i < 3000; i++ {
		rels = append(rels, rel{"PROG", "ZHUGE", "TABL", fmt.Sprintf("ZT%05d", i), "uses_table", "", i + 1})
	}
	l.index(1, []object{{typ: "PROG", name: "ZHUGE", pkg: "ZBIG", desc: strings.Repeat("long description ", 200)}}, rels,
		map[string]string{"PROG ZHUGE": strings.Repeat("WRITE / 'a line of a very large report'.\n", 20000)})
	ms := newModelServer(t, docRules...)
	res, err := GenerateDocs(ctx, l.x(), l.scope, docsOpts(ms), nil)
	require.NoError(t, err)
	assert.EqualValues(t, 2, res.Written, "the object and its package")
	ms.mu.Lock()
	defer ms.mu.Unlock()
	require.Len(t, ms.bodies, 2)
	for _, b := range ms.bodies {
		assert.Less(t, len(b), 16000, "a prompt is bounded whatever the object's size")
	}
	assert.Contains(t, strings.Join(ms.bodies, ""), "first 3000 of 820000 characters")
}
