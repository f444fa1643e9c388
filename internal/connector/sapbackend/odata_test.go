package sapbackend

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/odata"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// startODataSim: the platform's connector client → the connector → the simulator's SAP interfaces
// (SOAP RFC and OData) over HTTP. systemYAML is appended to the system's entry.
func startODataSim(t testing.TB, sid, systemYAML string) *harness {
	t.Helper()
	return startSimWith(t, sapsim.Options{}, sid, systemYAML)
}

// startSimWith is startSimSystem for the tests that need only the harness.
func startSimWith(t testing.TB, opts sapsim.Options, sid, systemYAML string) *harness {
	t.Helper()
	return &startSimSystem(t, sid, opts, systemYAML).harness
}

const odataWrites = "    interfaces: {odata: true}\n    write_function_modules: [BAPI_CUSTOMER_CHANGEFROMDATA1, BAPI_MATERIAL_SAVEDATA]\n"

func readOne(t *testing.T, h *harness, table, where string, fields ...string) []string {
	t.Helper()
	var res sap.ReadTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: table, Fields: fields, Options: []string{where}}, &res))
	require.Len(t, res.Rows, 1, "%s WHERE %s", table, where)
	return res.Rows[0]
}

func firstCustomer(t *testing.T, h *harness) string {
	t.Helper()
	var res sap.ReadTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "BUT020", Fields: []string{"PARTNER"}, RowCount: 1}, &res))
	require.Len(t, res.Rows, 1)
	return res.Rows[0][0]
}

func TestCustomerChangeGoesThroughAPIBusinessPartnerOnS4(t *testing.T) {
	h := startODataSim(t, "S4H", odataWrites)
	kunnr := firstCustomer(t, h)
	short := strings.TrimLeft(kunnr, "0")
	change := sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1", Imports: map[string]any{
		"CUSTOMERNO": short, "PI_COMPANYDATA": map[string]any{"NAME": "Released API GmbH", "CITY": "Walldorf", "COUNTRY": "DE"}}}

	// A test run validates and saves nothing.
	test := change
	test.TestRun = true
	var out sap.ExecuteRFCResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, test, &out))
	require.Len(t, out.Return, 1)
	assert.Equal(t, "S", out.Return[0].Type)
	assert.Contains(t, out.Return[0].Message, "Test run")
	assert.False(t, out.Committed)
	assert.NotEqual(t, "Released API GmbH", readOne(t, h, "BUT000", "PARTNER = '"+kunnr+"'", "NAME_ORG1")[0])

	change.Commit = true
	out = sap.ExecuteRFCResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, change, &out))
	require.Len(t, out.Return, 1, "%+v", out)
	assert.Equal(t, "S", out.Return[0].Type)
	assert.Contains(t, out.Return[0].Message, "API_BUSINESS_PARTNER")
	assert.True(t, out.Committed)
	// The BAPI would change KNA1 only; the released API changes the business partner (and CVI the customer).
	assert.Equal(t, "Released API GmbH", readOne(t, h, "BUT000", "PARTNER = '"+kunnr+"'", "NAME_ORG1")[0])
	assert.Equal(t, []string{"Released API GmbH", "Walldorf"}, readOne(t, h, "KNA1", "KUNNR = '"+kunnr+"'", "NAME1", "ORT01"))

	// Callers see the BAPI's shape for SAP's refusals...
	out = sap.ExecuteRFCResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1", Commit: true,
		Imports: map[string]any{"CUSTOMERNO": short, "PI_COMPANYDATA": map[string]any{"COUNTRY": "QQ"}}}, &out))
	require.Len(t, out.Return, 1)
	assert.Equal(t, "E", out.Return[0].Type)
	assert.Equal(t, "Country", out.Return[0].Field)
	assert.False(t, out.Committed)
	for name, imports := range map[string]map[string]any{
		"unknown customer": {"CUSTOMERNO": "9999999999", "PI_COMPANYDATA": map[string]any{"NAME": "X"}},
		"unmapped field":   {"CUSTOMERNO": short, "PI_COMPANYDATA": map[string]any{"TEL1_NUMBR": "+49 1"}},
		"too long":         {"CUSTOMERNO": short, "PI_COMPANYDATA": map[string]any{"NAME": strings.Repeat("N", 41)}},
	} {
		out = sap.ExecuteRFCResponse{}
		require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1", Commit: true, Imports: imports}, &out), name)
		require.Len(t, out.Return, 1, name)
		assert.Equal(t, "E", out.Return[0].Type, name)
		assert.False(t, out.Committed, name)
	}
	// ...and protocol errors for authorization and logon.
	err := h.call(t, "RESTRICTED", sapsim.DefaultUsers()["RESTRICTED"], sap.EndpointExecuteRFC, change, &out)
	assert.Equal(t, sap.ErrAuthorization, protoCode(t, err).Code)
	err = h.call(t, "DEVELOPER", "wrong-password", sap.EndpointExecuteRFC, change, &out)
	assert.Equal(t, sap.ErrLogonFailed, protoCode(t, err).Code)
}

func TestMaterialSaveGoesThroughAPIProductOnS4(t *testing.T) {
	h := startODataSim(t, "S4H", odataWrites)
	var out sap.ExecuteRFCResponse
	group := readOne(t, h, "T023", "MATKL = '008'", "MATKL")[0]
	// An existing material given without its leading zeros; a new language is created.
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_SAVEDATA", Commit: true,
		Imports: map[string]any{"HEADDATA": map[string]any{"MATERIAL": "1"}, "CLIENTDATA": map[string]any{"MATL_GROUP": group}},
		Tables:  map[string][]map[string]any{"MATERIALDESCRIPTION": {{"LANGU": "E", "MATL_DESC": "Renamed via API"}, {"LANGU": "F", "MATL_DESC": "Renommé"}}}}, &out))
	require.Len(t, out.Return, 1, "%+v", out)
	assert.Equal(t, "S", out.Return[0].Type, out.Return[0].Message)
	assert.True(t, out.Committed)
	m := strings.Repeat("0", 39) + "1"
	assert.Equal(t, group, readOne(t, h, "MARA", "MATNR = '"+m+"'", "MATKL")[0])
	assert.Equal(t, "Renamed via API", readOne(t, h, "MAKT", "MATNR = '"+m+"' AND SPRAS = 'E'", "MAKTX")[0])
	assert.Equal(t, "Renommé", readOne(t, h, "MAKT", "MATNR = '"+m+"' AND SPRAS = 'F'", "MAKTX")[0])

	out = sap.ExecuteRFCResponse{}
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_SAVEDATA", Commit: true,
		Imports: map[string]any{"HEADDATA": map[string]any{"MATERIAL": "RELEASED-1", "MATL_TYPE": "FERT", "IND_SECTOR": "M"}},
		Tables:  map[string][]map[string]any{"MATERIALDESCRIPTION": {{"LANGU": "E", "MATL_DESC": "Created via API"}}}}, &out))
	require.Len(t, out.Return, 1)
	assert.Equal(t, "S", out.Return[0].Type, out.Return[0].Message)
	assert.Equal(t, []string{"FERT", "M"}, readOne(t, h, "MARA", "MATNR = 'RELEASED-1'", "MTART", "MBRSH"))
	assert.Equal(t, "Created via API", readOne(t, h, "MAKT", "MATNR = 'RELEASED-1' AND SPRAS = 'E'", "MAKTX")[0])
}

func TestECCKeepsTheBAPIs(t *testing.T) {
	h := startODataSim(t, "ECC", odataWrites)
	var res sap.ReadTableResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR"}, RowCount: 1}, &res))
	kunnr := res.Rows[0][0]
	var out sap.ExecuteRFCResponse
	require.NoError(t, h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1", Commit: true,
		Imports: map[string]any{"CUSTOMERNO": kunnr, "PI_COMPANYDATA": map[string]any{"NAME": "Classic BAPI AG"}}}, &out))
	require.NotEmpty(t, out.Return)
	assert.Equal(t, "F2", out.Return[0].ID, "ECC answers with the BAPI's own message")
	assert.True(t, out.Committed)
	assert.Equal(t, "Classic BAPI AG", readOne(t, h, "KNA1", "KUNNR = '"+kunnr+"'", "NAME1")[0])
}

// A stale ETag (SAP's 412) is a conflict, not a business message; SAP's 400 body (recorded) is
// an E message naming SAP's code.
func TestODataErrorsMapOntoTheProtocol(t *testing.T) {
	_, err := odataErr(odata.ParseGatewayError(http.StatusPreconditionFailed, nil))
	se := protoCode(t, err)
	assert.Equal(t, http.StatusConflict, se.Status)
	assert.Equal(t, "PRECONDITION_FAILED", se.Exception)
	for status, code := range map[int]string{http.StatusForbidden: sap.ErrAuthorization, http.StatusUnauthorized: sap.ErrLogonFailed, http.StatusNotFound: sap.ErrNotFound} {
		_, err := odataErr(odata.ParseGatewayError(status, nil))
		assert.Equal(t, code, protoCode(t, err).Code, status)
	}
	body := readRecording(t, "../../sap/odata/testdata/error_gwsample_mandatory_field.json")
	res, err := odataErr(odata.ParseGatewayError(http.StatusBadRequest, body))
	require.NoError(t, err)
	require.Len(t, res.Return, 1)
	assert.Equal(t, sap.BAPIReturn{Type: "E", ID: "SEPM_BO_COMMON", Number: "010", Message: "Mandatory field 'PRODUCT_GUID' is empty"}, res.Return[0])
}

func readRecording(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
