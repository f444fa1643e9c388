package saptools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/tools"
)

// memLedger keeps ETL runs in memory (the worker keeps them in Postgres; integration tests
// cover that).
type memLedger struct {
	mu   sync.Mutex
	runs []Run
}

func (l *memLedger) SucceededDryRun(_ context.Context, fp string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.runs) - 1; i >= 0; i-- {
		if r := l.runs[i]; r.Fingerprint == fp && r.DryRun {
			return r.Failed == 0 && r.Extracted > 0, nil
		}
	}
	return false, nil
}

func (l *memLedger) Record(_ context.Context, r Run) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, r)
	return nil
}

// landscape: ECC reached over HTTP through the connector client, S/4HANA in-process.
func landscape(t *testing.T, user string) (*Executor, *sapsim.Landscape) {
	land := sapsim.NewLandscape(sapsim.Options{})
	srv := httptest.NewServer(land.Handler())
	t.Cleanup(srv.Close)
	s4, _ := land.System("S4H")
	pw := sapsim.DefaultUsers()[user]
	e := New([]sapconn.Conn{
		{ID: "c-ecc", Name: "ECC", SystemType: "ECC", API: sap.NewClient(sap.Guard{}, time.Minute).Connector(sap.Target{URL: srv.URL + "/ECC", ConnectorKey: sapsim.ECCConnectorKey, SAPUser: user, SAPPassword: pw})},
		{ID: "c-s4", Name: "S4", SystemType: "S4HANA", API: sapsim.InProcess{System: s4, Cred: sapsim.Credentials{ConnectorKey: sapsim.S4HConnectorKey, User: user, Password: pw}}},
	})
	e.Ledger = &memLedger{}
	return e, land
}

func args(t *testing.T, tool, raw string) map[string]any {
	t.Helper()
	def, ok := tools.Default().Get(tool)
	require.True(t, ok, tool)
	a, err := def.ParseArguments(raw)
	require.NoError(t, err, raw)
	return a
}

// sapEnv is the part of a tool call's environment the SAP tools use: the executor over the
// caller's connections (the worker resolves them from Postgres; integration tests cover that).
type sapEnv struct{ e *Executor }

func (s sapEnv) Notes() tools.Notes                             { return nil }
func (s sapEnv) SAP(context.Context) (tools.SAPExecutor, error) { return s.e, nil }
func (s sapEnv) Script(context.Context, string) (json.RawMessage, error) {
	return nil, errors.New("no scripts here")
}

// runDef runs a tool through its definition, as the worker does.
func runDef(t *testing.T, e *Executor, tool, raw string) (any, error) {
	t.Helper()
	def, ok := tools.Default().Get(tool)
	require.True(t, ok, tool)
	return def.Run(context.Background(), sapEnv{e}, args(t, tool, raw))
}

func asJSON(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

func TestEverySAPToolAgainstTheSimulator(t *testing.T) {
	e, _ := landscape(t, "")
	for _, tc := range []struct{ tool, args, want string }{
		{tools.SAPGetSystemInfo, `{"connection_id":"c-ecc"}`, `"system_type":"ECC"`},
		{tools.SAPGetSystemInfo, `{"connection_id":"S4"}`, `"system_type":"S4HANA"`},
		{tools.SAPGetTableSchema, `{"connection_id":"c-ecc","table":"vbak"}`, `"name":"VBELN"`},
		{tools.SAPReadTable, `{"connection_id":"c-ecc","table":"T001","fields":["BUKRS","BUTXT"],"where":"LAND1 = 'DE'"}`, `"BUKRS":"1000"`},
		{tools.SAPSearchIndex, `{"connection_id":"c-ecc","query":"sales*"}`, `"name":"ZR_SALES_REPORT"`},
		{tools.SAPGetFunctionInterface, `{"connection_id":"c-ecc","function":"BAPI_SALESORDER_CREATEFROMDAT2"}`, `"writes":true`},
		{tools.SAPGetSource, `{"connection_id":"c-ecc","object_type":"CLAS","name":"ZCL_CUSTOMER_SERVICE"}`, `BAPI_CUSTOMER_GETDETAIL2`},
		{tools.SAPWhereUsed, `{"connection_id":"c-ecc","name":"KONV"}`, `"name":"Z_CALC_BONUS"`},
		{tools.SAPListCustomObjects, `{"connection_id":"c-ecc","object_type":"ENHO"}`, `"name":"ZEI_SD_SALES_CHECK"`},
		{tools.SAPExecuteRFC, `{"connection_id":"c-ecc","function":"BAPI_CUSTOMER_GETDETAIL2","imports":{"CUSTOMERNO":"100001"}}`, `"CUSTOMER":"0000100001"`},
		{tools.SAPExecuteRFC, `{"connection_id":"c-ecc","function":"Z_CALC_BONUS","imports":{"IV_KUNNR":"100003"}}`, `"EV_REVENUE"`},
	} {
		out, err := runDef(t, e, tc.tool, tc.args)
		require.NoError(t, err, tc.tool)
		assert.Contains(t, asJSON(t, out), tc.want, tc.tool)
	}
}

func TestConnectionRoutingAndReadableErrors(t *testing.T) {
	e, _ := landscape(t, "")
	ctx := context.Background()
	_, err := runDef(t, e, tools.SAPGetSystemInfo, `{}`)
	assert.ErrorContains(t, err, "connection_id is required with several connections; choose one of: c-ecc (ECC, ECC), c-s4 (S4, S4HANA)")
	_, err = runDef(t, e, tools.SAPGetSystemInfo, `{"connection_id":"nope"}`)
	assert.ErrorContains(t, err, `unknown connection_id "nope"`)
	_, err = New(nil).GetSystemInfo(ctx, map[string]any{})
	assert.ErrorContains(t, err, "no SAP connection")
	single := New(e.Conns[:1])
	_, err = single.GetSystemInfo(ctx, map[string]any{})
	assert.NoError(t, err, "one connection is the default")

	_, err = runDef(t, e, tools.SAPReadTable, `{"connection_id":"c-ecc","table":"ZNOPE"}`)
	assert.ErrorContains(t, err, "not found in SAP: table ZNOPE is not available")
	_, err = runDef(t, e, tools.SAPReadTable, `{"connection_id":"c-ecc","table":"KNA1","where":"LAND1 = "}`)
	assert.ErrorContains(t, err, "SAP exception: the WHERE condition is not valid")

	restricted, _ := landscape(t, "RESTRICTED")
	_, err = runDef(t, restricted, tools.SAPReadTable, `{"connection_id":"c-ecc","table":"BSEG"}`)
	assert.ErrorContains(t, err, "SAP authorization failed: No authorization for table BSEG (S_TABU_DIS, authorization group FI)")
	_, err = runDef(t, restricted, tools.SAPExecuteRFC, `{"connection_id":"c-s4","function":"BAPI_PO_CREATE1"}`)
	assert.ErrorContains(t, err, "SAP authorization failed: No RFC authorization for function module BAPI_PO_CREATE1")
}

func TestWhereLinesKeepQuotedTextTogether(t *testing.T) {
	long := "NAME1 LIKE 'Atlas Industries and Partners International Holding GmbH & Co. KG%' AND LAND1 IN ('DE', 'AT', 'CH') AND ERDAT >= '20200101'"
	lines := WhereLines(long)
	require.Greater(t, len(lines), 1)
	for _, l := range lines {
		assert.Equal(t, 0, strings.Count(l, "'")%2, "a line never splits a literal: %q", l)
	}
	assert.Equal(t, long, strings.Join(lines, " "))
	assert.Nil(t, WhereLines("  "))
}

const kna1Mapping = `{"source_table":"KNA1","target_table":"KNA1","fields":[
	{"target":"KUNNR","source":"KUNNR","transform":"alpha_in","length":10},
	{"target":"NAME1","source":"NAME1","transform":"trim"},
	{"target":"LAND1","source":"LAND1","transform":"uppercase"},
	{"target":"ORT01","source":"ORT01","transform":"direct"},
	{"target":"KTOKD","source":"KTOKD","transform":"direct"}]}`

func TestETLNeedsADryRunOfTheSameMappingAndReconcilesClean(t *testing.T) {
	e, _ := landscape(t, "")
	conns := `"source_connection_id":"c-ecc","target_connection_id":"c-s4"`
	where := `,"where":"LAND1 = 'AT'"`
	run := func(tool, extra string) (string, error) {
		out, err := runDef(t, e, tool, `{`+conns+extra+`}`)
		if err != nil {
			return "", err
		}
		return asJSON(t, out), nil
	}

	out, err := run(tools.GenerateFieldMapping, `,"source_table":"KNA1"`)
	require.NoError(t, err)
	assert.Contains(t, out, "ZZ_LOYALTY_TIER", "the customer append has no target field")
	out, err = run(tools.SuggestTransforms, `,"mapping":`+kna1Mapping)
	require.NoError(t, err)
	assert.Contains(t, out, `"sampled":50`)
	out, err = run(tools.ValidateMigration, `,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	assert.Contains(t, out, `"valid":true`)
	bad := strings.Replace(kna1Mapping, `"target":"KTOKD"`, `"target":"NOPE"`, 1)
	out, err = run(tools.ValidateMigration, `,"mapping":`+bad)
	require.NoError(t, err)
	assert.Contains(t, out, "target table KNA1 has no field NOPE")
	out, err = run(tools.PreviewDataTransform, `,"rows":3,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	assert.Contains(t, out, `"LAND1":"AT"`)

	// No dry run yet: the load is refused, and so is a load whose filter differs from the dry run's.
	_, err = run(tools.ExtractTransformLoad, `,"dry_run":false,"mapping":`+kna1Mapping+where)
	assert.ErrorContains(t, err, "no successful dry run")
	out, err = run(tools.ExtractTransformLoad, `,"dry_run":true,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	var dry struct{ Extracted, Inserted, Failed int }
	require.NoError(t, json.Unmarshal([]byte(out), &dry))
	assert.Positive(t, dry.Extracted)
	assert.Equal(t, dry.Extracted, dry.Inserted, "a dry run counts what would be inserted")
	assert.Zero(t, dry.Failed)
	_, err = run(tools.ExtractTransformLoad, `,"dry_run":false,"mapping":`+kna1Mapping)
	assert.ErrorContains(t, err, "no successful dry run", "another filter is another load")

	out, err = run(tools.ReconcileMigration, `,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	assert.Contains(t, out, `"clean":false`, "nothing was loaded yet")

	out, err = run(tools.ExtractTransformLoad, `,"dry_run":false,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	assert.Contains(t, out, `"inserted":`)
	out, err = run(tools.ReconcileMigration, `,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	var rec struct {
		Clean            bool
		SourceCount      int `json:"source_count"`
		MissingInTarget  int `json:"missing_in_target"`
		FieldDifferences int `json:"field_differences"`
		Sampled          int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rec))
	assert.True(t, rec.Clean, out)
	assert.Equal(t, dry.Extracted, rec.SourceCount)
	assert.Equal(t, dry.Extracted, rec.Sampled)

	// Loading the same rows again with insert: every row is refused by key, nothing changes.
	_, err = run(tools.ExtractTransformLoad, `,"dry_run":true,"mapping":`+kna1Mapping+where)
	require.NoError(t, err)
	_, err = run(tools.ExtractTransformLoad, `,"dry_run":false,"mapping":`+kna1Mapping+where)
	assert.ErrorContains(t, err, "no successful dry run", "the latest dry run refused every row")

	_, err = e.ExtractTransformLoad(context.Background(), args(t, tools.ExtractTransformLoad, `{"source_connection_id":"c-ecc","target_connection_id":"c-ecc","dry_run":true,"mapping":`+kna1Mapping+`}`))
	assert.ErrorContains(t, err, "different connections")
}

// A retried tool call (same idempotency key, new executor) that repeats a BAPI and its commit
// writes once, over HTTP and in-process: requests the first attempt already made are answered
// from the connector's memory, in the session the first attempt staged into.
func TestRetriedToolCallWritesOnce(t *testing.T) {
	first, land := landscape(t, "DEVELOPER")
	for conn, sid := range map[string]string{"ECC": "ECC", "S4": "S4H"} {
		sys, _ := land.System(sid)
		key := map[string]string{"ECC": sapsim.ECCConnectorKey, "S4H": sapsim.S4HConnectorKey}[sid]
		changes := func() int {
			out, err := sys.Call(context.Background(), sap.EndpointProbeChanges, sapsim.Credentials{ConnectorKey: key}, []byte(`{}`))
			require.NoError(t, err)
			return len(out.(sap.ProbeChangesResponse).Changes)
		}
		attempt := func(commit bool) {
			e := New(first.Conns)
			ctx := sap.WithIdempotencyKey(context.Background(), "call_rename_"+conn)
			_, err := e.ExecuteRFC(ctx, args(t, tools.SAPExecuteRFC, `{"connection_id":"`+conn+`","function":"BAPI_MATERIAL_SAVEDATA",
				"imports":{"HEADDATA":{"MATERIAL":"7","MATL_TYPE":"FERT","IND_SECTOR":"M"}},"tables":{"MATERIALDESCRIPTION":[{"LANGU":"E","MATL_DESC":"Retried bolt"}]}}`))
			require.NoError(t, err)
			if commit {
				_, err = e.ExecuteRFC(ctx, args(t, tools.SAPExecuteRFC, `{"connection_id":"`+conn+`","function":"BAPI_TRANSACTION_COMMIT"}`))
				require.NoError(t, err)
			}
		}
		before := changes()
		attempt(false) // the first attempt stops after the BAPI (say the worker died)
		assert.Equal(t, before, changes(), "%s: nothing is saved before the commit", conn)
		attempt(true) // the retry: the BAPI is answered from memory, the commit runs
		after := changes()
		assert.Greater(t, after, before, conn)
		attempt(true) // one more retry after everything ran
		assert.Equal(t, after, changes(), "%s: the write ran once", conn)
	}
}
