package sapbackend

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
)

const connectorKey = "connector-key-0123456789"

// harness: the platform's connector client → the connector server with this backend → fakeSAP.
type harness struct {
	sap    *fakeSAP
	client *sap.Client
	url    string
}

func start(t *testing.T, systemYAML string) *harness {
	t.Helper()
	f := newFakeSAP(t)
	cfgYAML := "connector_keys: [" + connectorKey + "]\nidempotency_store: " + filepath.Join(t.TempDir(), "idem.json") + "\nsystems:\n  - id: ECC\n    url: " + f.srv.URL +
		"\n    client: \"100\"\n    user: SAPAGENT\n    password_env: ECC_PW\n" + systemYAML
	url := serveConnector(t, cfgYAML, "tech-Secret-1")
	return &harness{sap: f, client: sap.NewClient(sap.Guard{}, 10*time.Second), url: url + "/ECC"}
}

func (h *harness) call(t *testing.T, user, password, endpoint string, req, resp any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.client.Call(ctx, sap.Target{URL: h.url, ConnectorKey: connectorKey, SAPUser: user, SAPPassword: password}, endpoint, req, resp)
}

func protoCode(t *testing.T, err error) *sap.Error {
	t.Helper()
	var se *sap.Error
	if !errors.As(err, &se) {
		t.Fatalf("want a protocol error, got %v", err)
	}
	return se
}

func TestTableSchemaThroughSOAPRFC(t *testing.T) {
	h := start(t, "")
	var got sap.TableSchema
	if err := h.call(t, "", "", sap.EndpointTableSchema, sap.TableSchemaRequest{Table: "kna1"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Table != "KNA1" || got.TableClass != "TRANSP" || got.DeliveryClass != "A" || got.Description != "General Data in Customer Master" {
		t.Fatalf("table: %+v", got)
	}
	if len(got.Fields) < 2 || got.Fields[1].Name != "KUNNR" || !got.Fields[1].Key || got.Fields[1].Length != 10 || got.Fields[0].CheckTable != "T000" {
		t.Fatalf("fields: %+v", got.Fields)
	}
	for _, c := range h.sap.callsTo("DDIF_FIELDINFO_GET") {
		if c.User != "SAPAGENT" {
			t.Fatalf("without X-SAP-User the technical user must call SAP, got %s", c.User)
		}
	}
}

func TestReadTableThroughSOAPRFCAsCaller(t *testing.T) {
	h := start(t, "")
	var got sap.ReadTableResponse
	req := sap.ReadTableRequest{Table: "T000", Fields: []string{"MANDT", "MTEXT", "ORT01"}, Options: []string{"MANDT <> '999'"}}
	if err := h.call(t, "ALICE", "alice-Secret-2", sap.EndpointReadTable, req, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Fields) != 3 || got.Fields[1].Name != "MTEXT" || got.Fields[1].Offset != 3 || got.Fields[1].Length != 25 {
		t.Fatalf("fields: %+v", got.Fields)
	}
	if len(got.Rows) != 3 || got.Rows[1][0] != "001" || got.Rows[1][1] != "Auslieferungsmandant R&D" || got.Rows[1][2] != "Kleinstadt" {
		t.Fatalf("rows: %q", got.Rows)
	}
	calls := h.sap.callsTo("RFC_READ_TABLE")
	if len(calls) == 0 {
		t.Fatal("RFC_READ_TABLE not called")
	}
	for _, c := range calls {
		if c.User != "ALICE" {
			t.Fatalf("the caller's X-SAP-User must call SAP, got %s", c.User)
		}
		if !strings.Contains(c.Body, "MANDT &lt;&gt; &#39;999&#39;") && !strings.Contains(c.Body, "MANDT &lt;&gt; '999'") {
			t.Fatalf("options not sent: %s", c.Body)
		}
	}
}

func TestReadTableWrongPasswordIsLogonFailedWithoutPassword(t *testing.T) {
	h := start(t, "")
	err := h.call(t, "ALICE", "wrong-Password-9", sap.EndpointReadTable, sap.ReadTableRequest{Table: "T000"}, nil)
	se := protoCode(t, err)
	if se.Code != sap.ErrLogonFailed || strings.Contains(se.Message, "wrong-Password-9") {
		t.Fatalf("got %v", se)
	}
}

func TestExecuteRFCBAPICommitsInOneSession(t *testing.T) {
	h := start(t, "    write_function_modules: [BAPI_PO_CHANGE]\n")
	var got sap.ExecuteRFCResponse
	req := sap.ExecuteRFCRequest{Function: "BAPI_PO_CHANGE", Commit: true,
		Imports: map[string]any{"PURCHASEORDER": "4500017120"},
		Tables:  map[string][]map[string]any{"POITEM": {{"PO_ITEM": 10, "QUANTITY": "5.000"}}}}
	if err := h.call(t, "", "", sap.EndpointExecuteRFC, req, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Committed || len(got.Return) != 1 || got.Return[0].Type != "S" || got.Return[0].Number != "023" {
		t.Fatalf("answer: %+v", got)
	}
	if hdr, _ := got.Exports["EXPHEADER"].(map[string]any); hdr["PO_NUMBER"] != "4500017120" {
		t.Fatalf("exports: %+v", got.Exports)
	}
	bapi, commit := h.sap.callsTo("BAPI_PO_CHANGE"), h.sap.callsTo("BAPI_TRANSACTION_COMMIT")
	if len(bapi) != 1 || len(commit) != 1 || bapi[0].Session != commit[0].Session {
		t.Fatalf("BAPI and commit must run in one SAP session: %+v %+v", bapi, commit)
	}
	if !strings.Contains(bapi[0].Body, "<PO_ITEM>10</PO_ITEM>") || !strings.Contains(bapi[0].Body, "<PURCHASEORDER>4500017120</PURCHASEORDER>") {
		t.Fatalf("parameters not sent: %s", bapi[0].Body)
	}
}

func TestExecuteRFCWriteRefusedOnReadOnlySystem(t *testing.T) {
	h := start(t, "    read_only: true\n")
	err := h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_PO_CHANGE", Commit: true}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrAuthorization || se.Status != 403 {
		t.Fatalf("got %v", se)
	}
	if n := len(h.sap.callsTo("BAPI_PO_CHANGE")) + len(h.sap.callsTo("BAPI_TRANSACTION_COMMIT")); n != 0 {
		t.Fatalf("SAP was called %d times", n)
	}
}

func TestExecuteRFCWriteRefusedOutsideAllowlist(t *testing.T) {
	h := start(t, "    write_function_modules: [BAPI_SALESORDER_CHANGE]\n")
	err := h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_PO_CHANGE", Commit: true}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrAuthorization {
		t.Fatalf("got %v", se)
	}
	if len(h.sap.callsTo("BAPI_PO_CHANGE")) != 0 {
		t.Fatal("SAP was called")
	}
}

func TestSystemInfoFromRFCSystemInfoAndCVERS(t *testing.T) {
	h := start(t, "")
	var got sap.SystemInfo
	if err := h.call(t, "", "", sap.EndpointSystemInfo, struct{}{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.SystemID != "ECC" || got.SystemType != "ECC" || got.BasisRel != "750" || got.Host != "eccdb01" ||
		got.Database != "HDB" || !got.Unicode || got.Client != "100" || len(got.Components) != 3 {
		t.Fatalf("system info: %+v", got)
	}
}

func TestSearchObjectsThroughADT(t *testing.T) {
	h := start(t, "")
	var got sap.SearchObjectsResponse
	if err := h.call(t, "", "", sap.EndpointSearchObjects, sap.SearchObjectsRequest{Query: "Z_FN_HELLO*", ObjectType: "FUNC"}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Objects) == 0 || got.Objects[0].Type != "FUNC" || got.Objects[0].Name != "Z_FN_HELLO_WORLD" ||
		got.Objects[0].Package != "$TEST" || !got.Objects[0].Custom {
		t.Fatalf("objects: %+v", got.Objects)
	}
}

// On a system without ADT usage references where_used reads WBCROSSGT and maps each using
// include to its main object: class and interface pool includes, function module includes
// through TFDIR, other function group includes, programs.
func TestWhereUsedOnLegacySystemReadsWBCROSSGT(t *testing.T) {
	h := start(t, "")
	var got sap.WhereUsedResponse
	if err := h.call(t, "ALICE", "alice-Secret-2", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "CLAS", Name: "zcl_order"}, &got); err != nil {
		t.Fatal(err)
	}
	want := []sap.Usage{{ObjectType: "CLAS", Name: "ZCL_ORDER_API"}, {ObjectType: "INTF", Name: "ZIF_ORDER_EVENTS"},
		{ObjectType: "FUNC", Name: "Z_ORDER_POST"}, {ObjectType: "FUGR", Name: "ZORDER"}, {ObjectType: "PROG", Name: "ZR_ORDER_REPORT"}}
	if len(got.Usages) != len(want) {
		t.Fatalf("usages: %+v", got.Usages)
	}
	for i := range want {
		if got.Usages[i] != want[i] {
			t.Fatalf("usage %d: got %+v, want %+v", i, got.Usages[i], want[i])
		}
	}
	h.sap.mu.Lock()
	defer h.sap.mu.Unlock()
	for _, c := range h.sap.calls {
		if strings.Contains(c.FM, "usageReferences") {
			t.Fatalf("where-used was sent to a system without it: %s", c.FM)
		}
		if c.FM == "RFC_READ_TABLE" && c.User != "ALICE" {
			t.Fatalf("the caller must read the cross-reference tables, got %s", c.User)
		}
	}
}

// A function module's usages come from CROSS (TYPE 'F'); a namespaced group include without a
// TFDIR row is named by its group; limit cuts the list.
func TestWhereUsedOnLegacySystemReadsCROSSForFunctions(t *testing.T) {
	h := start(t, "")
	var got sap.WhereUsedResponse
	if err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "FUNC", Name: "Z_ORDER_POST"}, &got); err != nil {
		t.Fatal(err)
	}
	want := []sap.Usage{{ObjectType: "PROG", Name: "ZR_ORDER_REPORT"}, {ObjectType: "CLAS", Name: "ZCL_ORDER_API"}, {ObjectType: "FUGR", Name: "/ACME/SALES"}}
	if len(got.Usages) != len(want) || got.Usages[0] != want[0] || got.Usages[1] != want[1] || got.Usages[2] != want[2] {
		t.Fatalf("usages: %+v", got.Usages)
	}
	if len(h.sap.callsTo("RFC_READ_TABLE")) == 0 {
		t.Fatal("CROSS not read")
	}
	got = sap.WhereUsedResponse{}
	if err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "FUNC", Name: "Z_ORDER_POST", Limit: 2}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Usages) != 2 {
		t.Fatalf("limit 2: %+v", got.Usages)
	}
}

// Without S_TABU_DIS/S_TABU_NAM for WBCROSSGT the caller gets AUTHORIZATION_FAILED, not an empty list.
func TestWhereUsedOnLegacySystemWithoutTableAuthorization(t *testing.T) {
	h := start(t, "")
	h.sap.mu.Lock()
	h.sap.deny = map[string]bool{"WBCROSSGT": true}
	h.sap.mu.Unlock()
	err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "CLAS", Name: "ZCL_ORDER"}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrAuthorization || se.Status != 403 {
		t.Fatalf("got %v", se)
	}
}

// With SOAP RFC switched off the legacy system has no way to answer where_used.
func TestWhereUsedOnLegacySystemWithoutSOAPRFCIsNotSupported(t *testing.T) {
	// Every endpoint must be routed away from a switched-off interface.
	routes := []string{}
	for _, e := range connector.Endpoints {
		routes = append(routes, e+": adt")
	}
	h := start(t, "    interfaces:\n      soap_rfc: false\n      routes: {"+strings.Join(routes, ", ")+"}\n")
	err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "CLAS", Name: "ZCL_ORDER"}, nil)
	se := protoCode(t, err)
	if se.Code != sap.ErrNotSupported || !strings.Contains(se.Message, "usage references") || !strings.Contains(se.Message, "soap_rfc") {
		t.Fatalf("got %v", se)
	}
}

// A test run saves nothing, so a read_only system allows it: TESTRUN = 'X', then a rollback.
func TestExecuteRFCTestRunOnReadOnlySystemRollsBack(t *testing.T) {
	h := start(t, "    read_only: true\n")
	var got sap.ExecuteRFCResponse
	req := sap.ExecuteRFCRequest{Function: "BAPI_PO_CHANGE", TestRun: true, Imports: map[string]any{"PURCHASEORDER": "4500017120"}}
	if err := h.call(t, "", "", sap.EndpointExecuteRFC, req, &got); err != nil {
		t.Fatal(err)
	}
	if got.Committed {
		t.Fatalf("a test run must not commit: %+v", got)
	}
	bapi := h.sap.callsTo("BAPI_PO_CHANGE")
	if len(bapi) != 1 || !strings.Contains(bapi[0].Body, "<TESTRUN>X</TESTRUN>") {
		t.Fatalf("BAPI not called with TESTRUN: %+v", bapi)
	}
	if len(h.sap.callsTo("BAPI_TRANSACTION_COMMIT")) != 0 || len(h.sap.callsTo("BAPI_TRANSACTION_ROLLBACK")) != 1 {
		t.Fatal("a test run must roll back, never commit")
	}
}

// A function write_function_modules names is a write even without commit: refused on read_only.
func TestExecuteRFCNamedWriterRefusedOnReadOnlyWithoutCommit(t *testing.T) {
	h := start(t, "    read_only: true\n    write_function_modules: [BAPI_PO_CHANGE]\n")
	err := h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "bapi_po_change"}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrAuthorization {
		t.Fatalf("got %v", se)
	}
	if len(h.sap.callsTo("BAPI_PO_CHANGE")) != 0 {
		t.Fatal("SAP was called")
	}
}

func TestTableSchemaUnknownTableIsNotFound(t *testing.T) {
	h := start(t, "")
	err := h.call(t, "", "", sap.EndpointTableSchema, sap.TableSchemaRequest{Table: "ZNOPE"}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrNotFound || se.Status != 404 {
		t.Fatalf("got %v", se)
	}
}

func TestABAPSourceThroughADTAsCaller(t *testing.T) {
	h := start(t, "")
	var got sap.ABAPSource
	if err := h.call(t, "ALICE", "alice-Secret-2", sap.EndpointABAPSource, sap.ABAPSourceRequest{ObjectType: "PROG", Name: "ZAPIADT_TESTCASE_PROGRAM1"}, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Source, "REPORT ZAPIADT_TESTCASE_PROGRAM1.") || got.Lines != 8 {
		t.Fatalf("source: %d lines %q", got.Lines, got.Source)
	}
	calls := h.sap.callsTo("ADT /sap/bc/adt/programs/programs/zapiadt_testcase_program1/source/main")
	if len(calls) != 1 || calls[0].User != "ALICE" {
		t.Fatalf("calls: %+v", calls)
	}
}

// Without S_TABU_DIS for CVERS system_info still answers SID and release, type unknown.
func TestSystemInfoWithoutCVERSAuthorization(t *testing.T) {
	h := start(t, "")
	h.sap.mu.Lock()
	h.sap.deny = map[string]bool{"CVERS": true}
	h.sap.mu.Unlock()
	var got sap.SystemInfo
	if err := h.call(t, "", "", sap.EndpointSystemInfo, struct{}{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.SystemID != "ECC" || got.BasisRel != "750" || got.SystemType != "" || got.Release != "SAP_BASIS 750" || len(got.Components) != 0 {
		t.Fatalf("system info: %+v", got)
	}
}

// function_interface: RFC_GET_FUNCTION_INTERFACE's PARAMS, the group from TFDIR, the text from TFTIT.
func TestFunctionInterfaceThroughRFCGetFunctionInterface(t *testing.T) {
	h := start(t, "    write_function_modules: [BAPI_PO_CHANGE]\n")
	var got sap.FunctionInterface
	if err := h.call(t, "ALICE", "alice-Secret-2", sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "bapi_po_change"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Function != "BAPI_PO_CHANGE" || got.Group != "MEWP" || got.Description != "Change Purchase Order" ||
		!got.RemoteEnabled || !got.Writes || got.Released {
		t.Fatalf("interface: %+v", got)
	}
	if len(got.Parameters) != 6 {
		t.Fatalf("parameters: %+v", got.Parameters)
	}
	po, testrun, ret := got.Parameters[0], got.Parameters[2], got.Parameters[4]
	if po.Name != "PURCHASEORDER" || po.Kind != "import" || po.Type != "EBELN" || po.Optional || po.Description != "Purchasing Document Number" {
		t.Fatalf("PURCHASEORDER: %+v", po)
	}
	if testrun.Name != "TESTRUN" || !testrun.Optional || testrun.Type != "BAPIFLAG-BAPIFLAG" {
		t.Fatalf("TESTRUN: %+v", testrun)
	}
	if ret.Name != "RETURN" || ret.Kind != "tables" || ret.Type != "BAPIRET2" {
		t.Fatalf("RETURN: %+v", ret)
	}
	for _, c := range h.sap.callsTo("RFC_GET_FUNCTION_INTERFACE") {
		if c.User != "ALICE" || !strings.Contains(c.Body, "<FUNCNAME>BAPI_PO_CHANGE</FUNCNAME>") {
			t.Fatalf("call: %+v", c)
		}
	}
}

// Without S_TABU_DIS for TFDIR/TFTIT the parameters still answer; group and text stay empty.
func TestFunctionInterfaceWithoutTFDIRAuthorization(t *testing.T) {
	h := start(t, "")
	h.sap.mu.Lock()
	h.sap.deny = map[string]bool{"TFDIR": true, "TFTIT": true}
	h.sap.mu.Unlock()
	var got sap.FunctionInterface
	if err := h.call(t, "", "", sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "BAPI_PO_CHANGE"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Group != "" || got.Description != "" || len(got.Parameters) != 6 || got.Writes {
		t.Fatalf("interface: %+v", got)
	}
}

func TestFunctionInterfaceUnknownFunctionIsNotFound(t *testing.T) {
	h := start(t, "")
	h.sap.mu.Lock()
	h.sap.unknownFM = true
	h.sap.mu.Unlock()
	err := h.call(t, "", "", sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "Z_NOPE"}, nil)
	if se := protoCode(t, err); se.Code != sap.ErrNotFound || se.Status != 404 {
		t.Fatalf("got %v", se)
	}
}
