package soaprfc

import (
	"context"
	"errors"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

func bapiFake(t *testing.T, answer string) *fakeSAP {
	f := newFakeSAP(t)
	f.files["BAPI_PO_CHANGE"] = answer
	f.files["BAPI_TRANSACTION_COMMIT"] = "bapi_transaction_commit.response.xml"
	f.files["BAPI_TRANSACTION_ROLLBACK"] = "bapi_transaction_rollback.response.xml"
	f.files["RFC_GET_FUNCTION_INTERFACE"] = "rfc_get_function_interface_bapi_po_change.response.xml"
	return f
}

func poParams() Params {
	return Params{Imports: map[string]any{"PURCHASEORDER": "4500017120"},
		Tables: map[string][]Struct{"POITEM": {{"PO_ITEM": "00010", "QUANTITY": "5"}}}}
}

// The BAPI and its BAPI_TRANSACTION_COMMIT run in one ABAP session: the fake system sees the
// session cookie it set on the BAPI's answer again on the commit.
func TestExecuteBAPICommitsInSameSession(t *testing.T) {
	f := bapiFake(t, "bapi_po_change_success.response.xml")
	c := f.client(t)
	out, err := c.ExecuteBAPI(context.Background(), testCred, "BAPI_PO_CHANGE", poParams(), BAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.RolledBack || len(out.Return) != 1 || out.Return[0]["TYPE"] != "S" {
		t.Fatalf("result %+v", out)
	}
	calls := f.allCalls()
	if len(calls) != 2 || calls[0].FM != "BAPI_PO_CHANGE" || calls[1].FM != "BAPI_TRANSACTION_COMMIT" {
		t.Fatalf("calls %v", calls)
	}
	if calls[0].Header.Get("Cookie") != "" {
		t.Errorf("the first call already sent cookies: %q", calls[0].Header.Get("Cookie"))
	}
	if calls[1].Session != calls[0].Session {
		t.Errorf("commit ran in session %s, BAPI in %s", calls[1].Session, calls[0].Session)
	}
	if calls[1].In.String("WAIT") != "X" {
		t.Errorf("commit WAIT = %q", calls[1].In.String("WAIT"))
	}
	// A second BAPI gets a session of its own.
	if _, err := c.ExecuteBAPI(context.Background(), testCred, "BAPI_PO_CHANGE", poParams(), BAPIOptions{}); err != nil {
		t.Fatal(err)
	}
	if again := f.allCalls(); again[2].Session == calls[0].Session {
		t.Error("two BAPI calls shared one session")
	}
}

func TestExecuteBAPIRollsBackAfterErrorMessage(t *testing.T) {
	f := bapiFake(t, "bapi_po_change_error.response.xml")
	c := f.client(t)
	out, err := c.ExecuteBAPI(context.Background(), testCred, "BAPI_PO_CHANGE", poParams(), BAPIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Committed || !out.RolledBack || !HasError(out.Return) {
		t.Fatalf("result %+v", out)
	}
	calls := f.allCalls()
	if len(calls) != 2 || calls[1].FM != "BAPI_TRANSACTION_ROLLBACK" || calls[1].Session != calls[0].Session {
		t.Fatalf("calls %+v", calls)
	}
	if len(f.callsOf("BAPI_TRANSACTION_COMMIT")) != 0 {
		t.Error("committed after an E message")
	}
}

func TestExecuteBAPIAbortMessageInReturnStructure(t *testing.T) {
	r := &Result{Exports: map[string]any{"RETURN": Struct{"TYPE": "A", "MESSAGE": "abort"}}}
	if !HasError(returnMessages(r)) {
		t.Error("A message in a RETURN structure not seen")
	}
	r = &Result{Exports: map[string]any{"RETURN": Struct{"TYPE": "", "NUMBER": "000"}}}
	if len(returnMessages(r)) != 0 {
		t.Error("empty RETURN structure counted as a message")
	}
}

func TestExecuteBAPITestRun(t *testing.T) {
	f := bapiFake(t, "bapi_po_change_success.response.xml")
	c := f.client(t)
	out, err := c.ExecuteBAPI(context.Background(), testCred, "BAPI_PO_CHANGE", poParams(), BAPIOptions{TestRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !out.TestRun || out.Committed || !out.RolledBack {
		t.Errorf("result %+v", out)
	}
	bapi := f.callsOf("BAPI_PO_CHANGE")
	if len(bapi) != 1 || bapi[0].In.String("TESTRUN") != "X" {
		t.Errorf("TESTRUN not sent: %+v", bapi)
	}
	if len(f.callsOf("BAPI_TRANSACTION_COMMIT")) != 0 {
		t.Error("a test run committed")
	}
}

// A BAPI without TESTRUN: refused after reading the interface, the BAPI itself is never called.
func TestExecuteBAPITestRunRefusedWithoutTESTRUN(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_GET_FUNCTION_INTERFACE"] = "rfc_get_function_interface_bapi_companycode_getdetail.response.xml"
	c := f.client(t)
	_, err := c.ExecuteBAPI(context.Background(), testCred, "BAPI_COMPANYCODE_GETDETAIL",
		Params{Imports: map[string]any{"COMPANYCODEID": "1000"}}, BAPIOptions{TestRun: true})
	checkErr(t, err, sap.ErrNotSupported, "", ErrTestRunMissing)
	if !errors.Is(err, ErrTestRunMissing) {
		t.Error("not ErrTestRunMissing")
	}
	calls := f.allCalls()
	if len(calls) != 1 || calls[0].FM != "RFC_GET_FUNCTION_INTERFACE" || calls[0].In.String("FUNCNAME") != "BAPI_COMPANYCODE_GETDETAIL" {
		t.Errorf("calls %+v", calls)
	}
}

func TestFunctionInterfaceUnknownFunction(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_GET_FUNCTION_INTERFACE"] = "fault_fu_not_found.xml"
	c := f.client(t)
	_, err := c.FunctionInterface(context.Background(), testCred, "Z_NOPE")
	checkErr(t, err, sap.ErrNotFound, "FU_NOT_FOUND", nil)
	_, err = c.ExecuteBAPI(context.Background(), testCred, "Z_NOPE", Params{}, BAPIOptions{TestRun: true})
	checkErr(t, err, sap.ErrNotFound, "FU_NOT_FOUND", nil)
}

func TestFunctionInterfaceParams(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_GET_FUNCTION_INTERFACE"] = "rfc_get_function_interface_bapi_po_change.response.xml"
	ps, err := f.client(t).FunctionInterface(context.Background(), testCred, "bapi_po_change")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 6 || ps[2].Name != "TESTRUN" || ps[2].Class != "I" || !ps[2].Optional || ps[4].Class != "T" || ps[4].TypeName != "BAPIRET2" {
		t.Errorf("params %+v", ps)
	}
}
