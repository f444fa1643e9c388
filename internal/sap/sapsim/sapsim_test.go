package sapsim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
)

var eccKey = Credentials{ConnectorKey: ECCConnectorKey}

func call[T any](t *testing.T, s *System, endpoint string, cred Credentials, req any) (T, error) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	var out T
	res, err := s.Call(context.Background(), endpoint, cred, body)
	if err != nil {
		return out, err
	}
	raw, _ := json.Marshal(res)
	require.NoError(t, json.Unmarshal(raw, &out))
	return out, nil
}

func sapCode(t *testing.T, err error) string {
	t.Helper()
	var se *sap.Error
	require.ErrorAs(t, err, &se)
	return se.Code
}

func ecc(t *testing.T) *System {
	s, ok := NewLandscape(Options{}).System("ECC")
	require.True(t, ok)
	return s
}

func TestLandscapeHasRealisticTablesAndIsDeterministic(t *testing.T) {
	a, b := ecc(t), ecc(t)
	std := 0
	for _, spec := range standardTables {
		if spec.only != "S4HANA" {
			std++
		}
	}
	assert.GreaterOrEqual(t, std, 40)
	for table, min := range map[string]int{"MARA": 2000, "MAKT": 4000, "KNA1": 1000, "LFA1": 500, "VBAK": 3000, "VBAP": 6000, "BKPF": 2000, "BSEG": 6000, "EKKO": 1000, "EKPO": 2000} {
		schema, err := call[sap.TableSchema](t, a, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: table})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, schema.RowCount, min, table)
	}
	ra, err := call[sap.ReadTableResponse](t, a, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", RowCount: 50})
	require.NoError(t, err)
	rb, err := call[sap.ReadTableResponse](t, b, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", RowCount: 50})
	require.NoError(t, err)
	assert.Equal(t, ra, rb, "two landscapes serve the same rows")
	assert.Equal(t, "0000100001", ra.Rows[0][1])

	kna1, err := call[sap.TableSchema](t, a, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "kna1"})
	require.NoError(t, err)
	var appended []string
	for _, f := range kna1.Fields {
		if f.Appended {
			appended = append(appended, f.Name)
		}
	}
	assert.Equal(t, []string{"ZZ_LOYALTY_TIER"}, appended)
	s4, _ := NewLandscape(Options{}).System("S4H")
	mara, err := call[sap.TableSchema](t, s4, sap.EndpointTableSchema, Credentials{ConnectorKey: S4HConnectorKey}, sap.TableSchemaRequest{Table: "MARA"})
	require.NoError(t, err)
	assert.Equal(t, 40, mara.Fields[1].Length, "S/4HANA's MATNR has 40 characters")
}

func TestReadTableFollowsRFCReadTable(t *testing.T) {
	s := ecc(t)
	res, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR", "LAND1", "NAME1"},
		Options: []string{"LAND1 = 'DE' AND", "( KTOKD IN ('0001', '0002') OR NAME1 LIKE 'Atlas%' )"}, RowSkip: 2, RowCount: 5})
	require.NoError(t, err)
	require.Len(t, res.Rows, 5)
	for _, r := range res.Rows {
		assert.Equal(t, "DE", r[1])
	}
	assert.Equal(t, []sap.ReadField{{Name: "KUNNR", Offset: 0, Length: 10, Type: "C", Description: "Customer Number"}, {Name: "LAND1", Offset: 10, Length: 3, Type: "C", Description: "Country/Region Key"},
		{Name: "NAME1", Offset: 13, Length: 35, Type: "C", Description: "Name"}}, res.Fields)

	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "ADRC"})
	require.NoError(t, err)
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "BKPF"})
	require.NoError(t, err)
	wide := sap.ReadTableRequest{Table: "ADRC", Fields: []string{"STREET", "CITY1", "STREET", "CITY1", "STREET", "CITY1", "STREET", "CITY1", "STREET", "CITY1", "STREET"}}
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, wide)
	assert.Equal(t, sap.ErrDataBufferExceeded, sapCode(t, err))
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", Options: []string{"LAND1 = "}})
	assert.Equal(t, sap.ErrInvalidWhereOptions, sapCode(t, err))
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "KNA1", Options: []string{"NOPE = 'X'"}})
	assert.ErrorContains(t, err, "unknown field NOPE")
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "ZNOPE"})
	assert.Equal(t, sap.ErrNotFound, sapCode(t, err))
}

func TestWhereConditions(t *testing.T) {
	row := map[string]string{"LAND1": "DE", "NAME1": "Atlas Foods GmbH", "NETWR": "1500.50", "ERDAT": "20240315", "KTOKD": "0001"}
	fields := map[string]bool{"LAND1": true, "NAME1": true, "NETWR": true, "ERDAT": true, "KTOKD": true}
	for where, want := range map[string]bool{
		"LAND1 = 'DE'": true, "LAND1 EQ 'US'": false, "LAND1 <> 'US'": true, "NETWR > '1000'": true, "NETWR > 200": true, "NETWR <= '1500.50'": true,
		"ERDAT BETWEEN '20240101' AND '20241231'": true, "ERDAT >= '20250101'": false, "NAME1 LIKE 'Atlas%'": true, "NAME1 LIKE '%GmbH'": true,
		"NAME1 LIKE 'A_las%'": true, "NAME1 NOT LIKE '%Inc.'": true, "KTOKD IN ('0001', '0002')": true, "KTOKD NOT IN ('0001')": false,
		"LAND1 = 'US' OR KTOKD = '0001'": true, "NOT ( LAND1 = 'DE' )": false, "( LAND1 = 'DE' AND KTOKD = '0002' ) OR NETWR < 100": false,
		"NAME1 = 'O''Brien'": false,
	} {
		c, err := parseWhere(where, fields)
		require.NoError(t, err, where)
		assert.Equal(t, want, c.eval(row), where)
	}
	for _, bad := range []string{"LAND1 =", "LAND1 'DE'", "( LAND1 = 'DE'", "LAND1 IN 'DE'", "LAND1 = 'DE", "LAND1 = 'DE' AND", "NOPE = 'X'", "LAND1 BETWEEN '1'", "= 'X'", "LAND1 = 'DE' ; DROP"} {
		_, err := parseWhere(bad, fields)
		assert.Error(t, err, bad)
	}
}

func TestBAPIWritesWaitForCommit(t *testing.T) {
	s := ecc(t)
	desc := func() string {
		res, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '000000000000000007' AND SPRAS = 'E'"}})
		require.NoError(t, err)
		require.Len(t, res.Rows, 1)
		return res.Rows[0][0]
	}
	original := desc()
	save := func(session string, testRun, commit bool) sap.ExecuteRFCResponse {
		res, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_SAVEDATA", Session: session, TestRun: testRun, Commit: commit,
			Imports: map[string]any{"HEADDATA": map[string]any{"MATERIAL": "7"}}, Tables: map[string][]map[string]any{"MATERIALDESCRIPTION": {{"LANGU": "E", "MATL_DESC": "Renamed"}}}})
		require.NoError(t, err)
		return res
	}
	res := save("s1", true, false)
	assert.Equal(t, "S", res.Return[0].Type)
	assert.Equal(t, original, desc(), "a test run saves nothing")
	save("s2", false, false)
	assert.Equal(t, original, desc(), "nothing changes before the commit")
	_, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_TRANSACTION_ROLLBACK", Session: "s2"})
	require.NoError(t, err)
	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_TRANSACTION_COMMIT", Session: "s2"})
	require.NoError(t, err)
	assert.Equal(t, original, desc(), "a rolled-back change stays away")
	save("s3", false, false)
	c, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_TRANSACTION_COMMIT", Session: "s3"})
	require.NoError(t, err)
	assert.True(t, c.Committed)
	assert.Equal(t, "Renamed", desc())
	changes, err := call[sap.ProbeChangesResponse](t, s, sap.EndpointProbeChanges, eccKey, sap.ProbeChangesRequest{})
	require.NoError(t, err)
	assert.Equal(t, "MAKT", changes.Changes[len(changes.Changes)-1].ObjectName)

	bad, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_GET_DETAIL", Imports: map[string]any{"MATERIAL": "999999"}})
	require.NoError(t, err)
	assert.Equal(t, "E", bad.Return[0].Type)
	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "Z_NOPE"})
	assert.Equal(t, sap.ErrNotFound, sapCode(t, err))
	order, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, sap.ExecuteRFCRequest{Function: "BAPI_SALESORDER_CREATEFROMDAT2", Commit: true, Session: "s4",
		Imports: map[string]any{"ORDER_HEADER_IN": map[string]any{"DOC_TYPE": "OR", "SALES_ORG": "1000"}},
		Tables:  map[string][]map[string]any{"ORDER_PARTNERS": {{"PARTN_ROLE": "AG", "PARTN_NUMB": "100001"}}, "ORDER_ITEMS_IN": {{"MATERIAL": "1", "TARGET_QTY": "3"}}}})
	require.NoError(t, err)
	require.True(t, order.Committed, "%+v", order.Return)
	vbeln := order.Exports["SALESDOCUMENT"].(string)
	items, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "VBAP", Options: []string{"VBELN = '" + vbeln + "'"}})
	require.NoError(t, err)
	assert.Len(t, items.Rows, 1)
}

func TestRestrictedUserAndLogon(t *testing.T) {
	s := ecc(t)
	restricted := Credentials{ConnectorKey: ECCConnectorKey, User: "restricted", Password: DefaultUsers()["RESTRICTED"]}
	_, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, restricted, sap.ReadTableRequest{Table: "BKPF"})
	assert.Equal(t, sap.ErrAuthorization, sapCode(t, err))
	assert.ErrorContains(t, err, "S_TABU_DIS")
	_, err = call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, restricted, sap.ReadTableRequest{Table: "MARA", RowCount: 1})
	assert.NoError(t, err)
	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, restricted, sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_SAVEDATA"})
	assert.Equal(t, sap.ErrAuthorization, sapCode(t, err))
	_, err = call[sap.WriteTableResponse](t, s, sap.EndpointWriteTable, restricted, sap.WriteTableRequest{Table: "KNA1", Mode: "insert"})
	assert.Equal(t, sap.ErrAuthorization, sapCode(t, err))
	_, err = call[sap.SystemInfo](t, s, sap.EndpointSystemInfo, Credentials{ConnectorKey: ECCConnectorKey, User: "DEVELOPER", Password: "wrong"}, struct{}{})
	assert.Equal(t, sap.ErrLogonFailed, sapCode(t, err))
	assert.NotContains(t, err.Error(), "wrong")
	_, err = call[sap.SystemInfo](t, s, sap.EndpointSystemInfo, Credentials{ConnectorKey: "nope"}, struct{}{})
	assert.Equal(t, sap.ErrConnectorKey, sapCode(t, err))
	_, err = call[sap.IndexPage](t, s, sap.EndpointIndexS4Extensions, eccKey, sap.IndexRequest{})
	assert.Equal(t, sap.ErrNotSupported, sapCode(t, err))
}

func TestRepositoryAndIndexPhases(t *testing.T) {
	s := ecc(t)
	found, err := call[sap.SearchObjectsResponse](t, s, sap.EndpointSearchObjects, eccKey, sap.SearchObjectsRequest{Query: "Z*", CustomOnly: true, Limit: 100})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(found.Objects), 15)
	src, err := call[sap.ABAPSource](t, s, sap.EndpointABAPSource, eccKey, sap.ABAPSourceRequest{ObjectType: "PROG", Name: "ZR_SALES_REPORT"})
	require.NoError(t, err)
	assert.Contains(t, src.Source, "BAPI_SALESORDER_GETLIST")
	wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "KNA1"})
	require.NoError(t, err)
	users := map[string]bool{}
	for _, u := range wu.Usages {
		users[u.Name] = true
	}
	assert.True(t, users["ZR_SALES_REPORT"] && users["ZCL_CUSTOMER_SERVICE"] && users["ZR_CUSTOMER_EXPORT"], "%v", users)
	ctx, err := call[sap.IndexPage](t, s, sap.EndpointIndexCatalogContext, eccKey, sap.IndexRequest{})
	require.NoError(t, err)
	states := map[string]string{}
	for _, it := range ctx.Items {
		states[it["name"].(string)] = it["release_state"].(string)
	}
	assert.Equal(t, "released", states["CL_ABAP_CONTEXT_INFO"])
	assert.Equal(t, "classicAPI", states["BAPI_SALESORDER_GETLIST"])
	assert.Equal(t, "notToBeReleased", states["KONV"])
	page, err := call[sap.IndexPage](t, s, sap.EndpointIndexCustomObjects, eccKey, sap.IndexRequest{Limit: 5})
	require.NoError(t, err)
	assert.Len(t, page.Items, 5)
	assert.NotEmpty(t, page.NextCursor)
	for _, ep := range []string{sap.EndpointIndexRelationships, sap.EndpointIndexCustomCode, sap.EndpointIndexEnhancements} {
		p, err := call[sap.IndexPage](t, s, ep, eccKey, sap.IndexRequest{})
		require.NoError(t, err)
		assert.NotEmpty(t, p.Items, ep)
	}
	s4, _ := NewLandscape(Options{}).System("S4H")
	ext, err := call[sap.IndexPage](t, s4, sap.EndpointIndexS4Extensions, Credentials{ConnectorKey: S4HConnectorKey}, sap.IndexRequest{})
	require.NoError(t, err)
	assert.NotEmpty(t, ext.Items)
}

func TestABAPGitFolderLoads(t *testing.T) {
	s := ecc(t)
	require.NoError(t, s.LoadABAPGit("testdata/abapgit"))
	schema, err := call[sap.TableSchema](t, s, sap.EndpointTableSchema, eccKey, sap.TableSchemaRequest{Table: "ZCREDIT_LIMIT"})
	require.NoError(t, err)
	assert.True(t, schema.Custom)
	require.Len(t, schema.Fields, 3)
	assert.Equal(t, 15, schema.Fields[2].Length)
	wu, err := call[sap.WhereUsedResponse](t, s, sap.EndpointWhereUsed, eccKey, sap.WhereUsedRequest{Name: "ZCREDIT_LIMIT"})
	require.NoError(t, err)
	names := map[string]bool{}
	for _, u := range wu.Usages {
		names[u.Name] = true
	}
	assert.True(t, names["ZR_INVOICE_CHECK"] && names["Z_CREDIT_CHECK"], "%v", names)
	fi, err := call[sap.FunctionInterface](t, s, sap.EndpointFunctionInterface, eccKey, sap.FunctionInterfaceRequest{Function: "Z_CREDIT_CHECK"})
	require.NoError(t, err)
	assert.Equal(t, "ZFG_CREDIT", fi.Group)
	assert.Error(t, s.LoadABAPGit(t.TempDir()))
}

func TestHTTPProtocolAndFaults(t *testing.T) {
	land := NewLandscape(Options{})
	srv := httptest.NewServer(land.Handler())
	defer srv.Close()
	post := func(path, key string, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewBufferString(body))
		if key != "" {
			req.Header.Set(sap.HeaderConnectorKey, key)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		return res.StatusCode, out
	}
	code, out := post("/ECC/system_info", ECCConnectorKey, `{}`)
	assert.Equal(t, 200, code)
	assert.Equal(t, "ECC", out["data"].(map[string]any)["system_id"])
	code, out = post("/ECC/system_info", "", `{}`)
	assert.Equal(t, 401, code)
	assert.Equal(t, sap.ErrConnectorKey, out["error"].(map[string]any)["code"])
	code, _ = post("/NOPE/system_info", ECCConnectorKey, `{}`)
	assert.Equal(t, 404, code)
	code, _ = post("/ECC/read_table", ECCConnectorKey, `{"table":`)
	assert.Equal(t, 400, code)

	down, _ := NewLandscape(Options{ErrorRate: 1}).System("ECC")
	_, err := call[sap.SystemInfo](t, down, sap.EndpointSystemInfo, eccKey, struct{}{})
	assert.Equal(t, sap.ErrSystemUnavailable, sapCode(t, err))
	slow, _ := NewLandscape(Options{Latency: 50 * time.Millisecond}).System("ECC")
	start := time.Now()
	_, err = call[sap.SystemInfo](t, slow, sap.EndpointSystemInfo, eccKey, struct{}{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}
