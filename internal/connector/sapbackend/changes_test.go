package sapbackend

import (
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

func probe(t *testing.T, h *simHarness, after int64) sap.ProbeChangesResponse {
	t.Helper()
	var res sap.ProbeChangesResponse
	if err := h.call(t, "", "", sap.EndpointProbeChanges, sap.ProbeChangesRequest{AfterSeq: after}, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSimProbeChangesDeltasAndRestart(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	base := probe(t, h, 0) // the first poll records what SAP holds: the log starts empty, at seq 1
	if base.LatestSeq != 1 || len(base.Changes) != 0 {
		t.Fatalf("first probe: %+v", base)
	}
	// A transport deletes a program, an activation changes a class, a BAPI commit writes data.
	if err := h.sys.DeleteObject("PROG", "ZR_STOCK_REPORT"); err != nil {
		t.Fatal(err)
	}
	src := "CLASS zcl_po_helper DEFINITION PUBLIC.\n  PUBLIC SECTION.\n    METHODS run.\nENDCLASS.\nCLASS zcl_po_helper IMPLEMENTATION.\n  METHOD run.\n    SELECT * FROM ekko INTO TABLE @DATA(lt).\n  ENDMETHOD.\nENDCLASS.\n"
	if err := h.sys.ActivateObject("CLAS", "ZCL_PO_HELPER", "PO helper v2", "ZMM_SERVICES", src); err != nil {
		t.Fatal(err)
	}
	if err := h.sys.ActivateObject("PROG", "ZR_LOCAL_TEST", "Local test", "$TMP", "REPORT zr_local_test.\nSELECT * FROM t001 INTO TABLE @DATA(x).\n"); err != nil {
		t.Fatal(err)
	}
	var rfc sap.ExecuteRFCResponse
	if err := h.call(t, "", "", sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1",
		Imports: map[string]any{"CUSTOMERNO": "100001", "PI_COMPANYDATA": map[string]any{"CITY": "Bremen"}}, Commit: true}, &rfc); err != nil {
		t.Fatal(err)
	}
	res := probe(t, h, 0)
	got := map[string]string{}
	for _, c := range res.Changes {
		got[c.ObjectType+"/"+c.ObjectName] += c.ChangeType + ";"
	}
	t.Logf("changes: %v", got)
	if got["PROG/ZR_STOCK_REPORT"] != "deleted;" || got["CLAS/ZCL_PO_HELPER"] != "modified;" || got["PROG/ZR_LOCAL_TEST"] != "created;" || got["DATA/KNA1"] != "modified;" {
		t.Fatalf("changes: %v", got)
	}
	if res.LatestSeq != int64(len(res.Changes))+1 || res.Changes[0].Seq != 2 {
		t.Fatalf("seqs: %+v", res)
	}
	// Nothing new: the same seq.
	if again := probe(t, h, res.LatestSeq); again.LatestSeq != res.LatestSeq || len(again.Changes) != 0 {
		t.Fatalf("second probe: %+v", again)
	}
	var si sap.SystemInfo
	if err := h.call(t, "", "", sap.EndpointSystemInfo, struct{}{}, &si); err != nil || si.ChangeSeq != res.LatestSeq {
		t.Fatalf("system_info change_seq %d, want %d (%v)", si.ChangeSeq, res.LatestSeq, err)
	}
	// The first delta after a full sync made before any change starts after the log's start.
	first, _ := pageAll(t, h, sap.EndpointIndexCustomObjects, 10, base.LatestSeq)
	if k := set(first, "type", "name"); len(first) != 2 || !k["CLAS|ZCL_PO_HELPER|"] || !k["PROG|ZR_LOCAL_TEST|"] {
		t.Fatalf("delta after the log's start: %v", keys(first, "type", "name"))
	}
	// Deltas after the seq a sync ended with: the objects changed since, deleted ones left out.
	mark := res.LatestSeq
	if err := h.sys.ActivateObject("CLAS", "ZCL_PO_HELPER", "PO helper v3", "ZMM_SERVICES", src); err != nil {
		t.Fatal(err)
	}
	if err := h.sys.ActivateObject("PROG", "ZR_NEW_REPORT", "New report", "ZSD_REPORTS", "REPORT zr_new_report.\nCALL FUNCTION 'Z_CALC_BONUS'.\n"); err != nil {
		t.Fatal(err)
	}
	if err := h.sys.DeleteObject("PROG", "ZR_OPEN_ITEMS_FI"); err != nil {
		t.Fatal(err)
	}
	objs, _ := pageAll(t, h, sap.EndpointIndexCustomObjects, 1, mark)
	names := set(objs, "type", "name", "description")
	if len(objs) != 2 || !names["CLAS|ZCL_PO_HELPER|PO helper v3|"] || !names["PROG|ZR_NEW_REPORT|New report|"] {
		t.Fatalf("custom_objects delta: %v", keys(objs, "type", "name", "description"))
	}
	code, _ := pageAll(t, h, sap.EndpointIndexCustomCode, 10, mark)
	if len(code) != 2 || code[0]["source"] == "" {
		t.Fatalf("custom_code delta: %v", keys(code, "type", "name"))
	}
	rel, _ := pageAll(t, h, sap.EndpointIndexRelationships, 10, mark)
	if r := set(rel, "from", "to", "usage"); !r["ZCL_PO_HELPER|EKKO|read|"] || !r["ZR_NEW_REPORT|Z_CALC_BONUS|call|"] || len(rel) != 2 {
		t.Fatalf("relationships delta: %v", keys(rel, "from", "to", "usage"))
	}
	deleted := probe(t, h, mark)
	if c := deleted.Changes[len(deleted.Changes)-1]; c.ObjectName != "ZR_OPEN_ITEMS_FI" || c.ChangeType != "deleted" {
		t.Fatalf("probe after the delta: %+v", deleted.Changes)
	}
	res = probe(t, h, 0)
	// A restart of the connector keeps the log: the seqs go on.
	h.restart(t, "")
	if after := probe(t, h, 0); after.LatestSeq != res.LatestSeq || len(after.Changes) != len(res.Changes) {
		t.Fatalf("after restart: latest %d (want %d), %d changes", after.LatestSeq, res.LatestSeq, len(after.Changes))
	}
	h.sys.TouchCustomObjects(1)
	next := probe(t, h, res.LatestSeq)
	if len(next.Changes) == 0 || next.Changes[0].Seq != res.LatestSeq+1 {
		t.Fatalf("after restart and a change: %+v", next)
	}
}
