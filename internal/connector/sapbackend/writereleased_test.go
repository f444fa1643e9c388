package sapbackend

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

const odataOn = "    interfaces: {odata: true}\n"

func rowsOf(t *testing.T, h *harness, table, where string, fields ...string) [][]string {
	t.Helper()
	var res sap.ReadTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: table, Fields: fields, Options: []string{where}}, &res))
	return res.Rows
}

func TestWriteTableKNA1ThroughAPIBusinessPartnerOnS4(t *testing.T) {
	h := startODataSim(t, "S4H", odataOn)
	old := firstCustomer(t, h)
	rows := []map[string]string{
		{"KUNNR": "123456", "NAME1": "Released API GmbH", "LAND1": "DE", "ORT01": "Walldorf", "PSTLZ": "69190", "STRAS": "Dietmar-Hopp-Allee 16", "KTOKD": "0001", "STCEG": "DE123456789", "MANDT": "100"},
		{"kunnr": old, "NAME1": "Changed Name AG", "ORT01": "Berlin", "KTOKD": "0002"},
		{"KUNNR": "123457", "NAME1": "Phone Ltd", "LAND1": "GB", "TELF1": "+44 1"},  // not carried by the mapping
		{"KUNNR": "123458", "NAME1": strings.Repeat("N", 41), "LAND1": "DE"},        // OrganizationBPName1 is 40 long
		{"KUNNR": "123459", "NAME1": "No Country Inc"},                              // a create needs the address's country
		{"KUNNR": "123460", "NAME1": "Other Client", "LAND1": "DE", "MANDT": "200"}, // not the connection's client
		{"KUNNR": "123456", "NAME1": "Twice", "LAND1": "DE"},                        // key twice
	}
	wantErr := []struct {
		row   int
		field string
	}{{3, "TELF1"}, {4, "NAME1"}, {5, "LAND1"}, {6, "MANDT"}, {7, "KUNNR"}}
	for _, test := range []bool{true, false} {
		var res sap.WriteTableResponse
		require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: rows, TestRun: test}, &res))
		assert.Equal(t, 1, res.Inserted, "test_run=%v", test)
		assert.Equal(t, 1, res.Updated)
		require.Len(t, res.Errors, len(wantErr), "%+v", res.Errors)
		for i, w := range wantErr {
			assert.Equal(t, w.row, res.Errors[i].Row, "%+v", res.Errors[i])
			assert.Equal(t, w.field, res.Errors[i].Field, "%+v", res.Errors[i])
		}
		assert.Contains(t, res.Errors[0].Message, "has no mapping onto API_BUSINESS_PARTNER")
		require.Len(t, res.Return, 1)
		created := rowsOf(t, h, "KNA1", "KUNNR = '0000123456'", "NAME1", "LAND1", "ORT01", "PSTLZ", "STRAS", "KTOKD", "STCEG")
		if test {
			assert.Contains(t, res.Return[0].Message, "Test run: nothing was saved")
			assert.Empty(t, created, "a test run saves nothing")
			assert.Empty(t, rowsOf(t, h, "BUT000", "PARTNER = '0000123456'", "PARTNER"))
			assert.NotEqual(t, "Changed Name AG", strings.TrimSpace(readOne(t, h, "KNA1", "KUNNR = '"+old+"'", "NAME1")[0]))
			continue
		}
		assert.Contains(t, res.Return[0].Message, "API_BUSINESS_PARTNER")
		require.Len(t, created, 1, "CVI created the customer with the business partner")
		assert.Equal(t, []string{"Released API GmbH", "DE", "Walldorf", "69190", "Dietmar-Hopp-Allee 16", "0001", "DE123456789"}, trimRow(created[0]))
		assert.Equal(t, []string{"2", "Released API GmbH"}, trimRow(readOne(t, h, "BUT000", "PARTNER = '0000123456'", "BU_TYPE", "NAME_ORG1")))
		addr := readOne(t, h, "BUT020", "PARTNER = '0000123456'", "ADDRNUMBER")[0]
		assert.Equal(t, []string{"Walldorf", "DE"}, trimRow(readOne(t, h, "ADRC", "ADDRNUMBER = '"+addr+"'", "CITY1", "COUNTRY")))
		assert.Equal(t, []string{"Changed Name AG", "Berlin", "0002"}, trimRow(readOne(t, h, "KNA1", "KUNNR = '"+old+"'", "NAME1", "ORT01", "KTOKD")))
		assert.Empty(t, rowsOf(t, h, "KNA1", "KUNNR = '0000123457'", "KUNNR"), "a refused row is not written")
	}

	// insert refuses what exists; the change log has the writes.
	var res sap.WriteTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNA1", Mode: "insert", Rows: rows[:1]}, &res))
	assert.Equal(t, 0, res.Inserted)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "KUNNR", res.Errors[0].Field)
	assert.Contains(t, res.Errors[0].Message, "already exists")
	assert.NotEmpty(t, rowsOf(t, h, "CDHDR", "OBJECTID = '0000123456'", "CHANGENR"), "a change document of the created customer")

	// SAP's own checks run in the write: a country not in T005 is refused (400) for that row,
	// rolled back whole, while the next row is written.
	res = sap.WriteTableResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNA1", Mode: "insert", Rows: []map[string]string{
		{"KUNNR": "123461", "NAME1": "Nowhere Ltd", "LAND1": "XX"}, {"KUNNR": "123462", "NAME1": "Somewhere SA", "LAND1": "FR"}}}, &res))
	assert.Equal(t, 1, res.Inserted)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, sap.RowError{Row: 1, Field: "LAND1", Message: res.Errors[0].Message}, res.Errors[0])
	assert.Contains(t, res.Errors[0].Message, "XX")
	assert.Empty(t, rowsOf(t, h, "BUT000", "PARTNER = '0000123461'", "PARTNER"), "nothing of the refused row")
	assert.Len(t, rowsOf(t, h, "KNA1", "KUNNR = '0000123462'", "KUNNR"), 1)
}

func trimRow(row []string) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

func TestWriteTableMARAAndMAKTThroughAPIProductOnS4(t *testing.T) {
	h := startODataSim(t, "S4H", odataOn)
	var res sap.WriteTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "MARA", Mode: "insert", Rows: []map[string]string{
		{"MATNR": "ETL-PROD-1", "MTART": "FERT", "MBRSH": "M", "MEINS": "ST", "BRGEW": "1.500", "GEWEI": "KG"},
		{"MATNR": "ETL-PROD-2", "MTART": "FERT", "MBRSH": "M", "ERSDA": "20240101"}, // set by SAP, not carried
		{"MATNR": "ETL-PROD-3", "MTART": "FERT"},                                    // IndustrySector required
	}}, &res))
	assert.Equal(t, 1, res.Inserted)
	require.Len(t, res.Errors, 2, "%+v", res.Errors)
	assert.Equal(t, "ERSDA", res.Errors[0].Field)
	assert.Equal(t, "MBRSH", res.Errors[1].Field)
	assert.Equal(t, []string{"FERT", "M", "1.500", "KG"}, trimRow(readOne(t, h, "MARA", "MATNR = 'ETL-PROD-1'", "MTART", "MBRSH", "BRGEW", "GEWEI")))

	res = sap.WriteTableResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "MAKT", Mode: "modify", Rows: []map[string]string{
		{"MATNR": "ETL-PROD-1", "SPRAS": "E", "MAKTX": "Loaded through the API"},
		{"MATNR": "ETL-PROD-1", "SPRAS": "DE", "MAKTX": "Über die API geladen"},
		{"MATNR": "ETL-PROD-1", "SPRAS": "E", "MAKTX": "twice"},
	}}, &res))
	assert.Equal(t, 2, res.Inserted)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "Loaded through the API", strings.TrimSpace(readOne(t, h, "MAKT", "MATNR = 'ETL-PROD-1' AND SPRAS = 'E'", "MAKTX")[0]))
	res = sap.WriteTableResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "MAKT", Mode: "modify", Rows: []map[string]string{
		{"MATNR": "ETL-PROD-1", "SPRAS": "E", "MAKTX": "Changed through the API"}}}, &res))
	assert.Equal(t, 1, res.Updated)
	assert.Equal(t, "Changed through the API", strings.TrimSpace(readOne(t, h, "MAKT", "MATNR = 'ETL-PROD-1' AND SPRAS = 'E'", "MAKTX")[0]))
}

// Other tables, and KNA1 without odata, keep the Z package route.
func TestWriteTableOtherRoutesKeepTheZPackage(t *testing.T) {
	h := startODataSim(t, "S4H", "")
	err := h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: []map[string]string{{"KUNNR": "1", "NAME1": "X"}}}, &sap.WriteTableResponse{})
	assert.Contains(t, protoCode(t, err).Message, "ZSAPAGENT_WTALW", "without odata KNA1 goes to the Z package, which refuses it")
	h = startODataSim(t, "S4H", odataOn)
	err = h.call(t, "", "", sap.EndpointWriteTable, sap.WriteTableRequest{Table: "KNB1", Mode: "modify", Rows: []map[string]string{{"KUNNR": "1", "BUKRS": "1000"}}}, &sap.WriteTableResponse{})
	assert.Contains(t, protoCode(t, err).Message, "ZSAPAGENT_WTALW", "a table without a released-API mapping goes to the Z package")
}

// A customer changed in SAP between the connector's read and its write: SAP answers 412 and the
// row is refused, nothing of it written.
func TestWriteTableConflictIsARowError(t *testing.T) {
	land := sapsim.NewLandscape(sapsim.Options{})
	sim := httptest.NewServer(land.Handler())
	t.Cleanup(sim.Close)
	cfg, err := connector.ParseConfig([]byte("connector_keys: [conflict-test-key]\nsystems:\n  - id: S4H\n    url: "+sim.URL+"/S4H\n    client: \"100\"\n    user: DEVELOPER\n    password_env: PW\n"+odataOn),
		func(string) string { return sapsim.DefaultUsers()["DEVELOPER"] })
	require.NoError(t, err)
	b := New(cfg.Systems[0], connector.NewHTTPClient(cfg.Systems[0])).(*Backend)
	ctx, cred := context.Background(), connector.Credentials{User: "DEVELOPER", Password: sapsim.DefaultUsers()["DEVELOPER"]}
	sys, _ := land.System("S4H")
	first, err := sys.Call(ctx, sap.EndpointReadTable, sapsim.Credentials{ConnectorKey: sapsim.S4HConnectorKey}, []byte(`{"table":"BUT020","fields":["PARTNER"],"row_count":1}`))
	require.NoError(t, err)
	kunnr := first.(sap.ReadTableResponse).Rows[0][0]

	tbl := releasedTables["KNA1"]
	r := b.mapRow("KNA1", tbl, 1, map[string]string{"KUNNR": kunnr, "NAME1": "Mine"})
	require.Nil(t, r.err)
	oc := odCred(cred)
	require.NoError(t, tbl.plan(ctx, b, oc, tbl, []*apiRow{r}, false))
	require.Len(t, r.ops, 1)
	// Someone else renames the customer after the connector read its ETag.
	_, err = b.writeReleased(ctx, cred, "KNA1", tbl, sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: []map[string]string{{"KUNNR": kunnr, "NAME1": "Theirs"}}})
	require.NoError(t, err)
	require.NoError(t, b.sendRows(ctx, oc, tbl, []*apiRow{r}))
	require.NotNil(t, r.err)
	assert.Equal(t, 1, r.err.Row)
	assert.Contains(t, r.err.Message, "changed since it was read")
	name := readKNA1Name(t, sys, kunnr)
	assert.Equal(t, "Theirs", name, "the stale write changed nothing")
}

func readKNA1Name(t *testing.T, sys *sapsim.System, kunnr string) string {
	t.Helper()
	res, err := sys.Call(context.Background(), sap.EndpointReadTable, sapsim.Credentials{ConnectorKey: sapsim.S4HConnectorKey},
		[]byte(`{"table":"KNA1","fields":["NAME1"],"options":["KUNNR = '`+kunnr+`'"]}`))
	require.NoError(t, err)
	return strings.TrimSpace(res.(sap.ReadTableResponse).Rows[0][0])
}
