package sapbackend

import (
	"strings"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

// Function group includes are recognised by SAP's naming; other L… programs are not groups.
func TestGroupIncludeNames(t *testing.T) {
	for _, c := range []struct {
		in, group, kind, nn string
		ok                  bool
	}{
		{"LZORDERU01", "ZORDER", "U", "01", true},
		{"LZORDERF01", "ZORDER", "F", "01", true},
		{"LZORDERTOP", "ZORDER", "TOP", "", true},
		{"LZORDERUXX", "ZORDER", "U", "XX", true},
		{"LSALESO01", "SALES", "O", "01", true},
		{"LOADREPORT", "", "", "", false},
		{"ZR_ORDER_REPORT", "", "", "", false},
	} {
		g, k, n, ok := groupInclude(c.in)
		if g != c.group || k != c.kind || n != c.nn || ok != c.ok {
			t.Errorf("%s: got %q %q %q %v", c.in, g, k, n, ok)
		}
	}
	if ns, short := splitNamespace("/ACME/LSALESU01"); ns != "/ACME/" || short != "LSALESU01" {
		t.Errorf("namespace: %q %q", ns, short)
	}
	if g := groupOfProgram("/ACME/SAPLSALES"); g != "/ACME/SALES" {
		t.Errorf("group of /ACME/SAPLSALES: %q", g)
	}
}

// A type the where-used tables do not hold answers NOT_SUPPORTED, never an empty list.
func TestWhereUsedOnLegacySystemUnmappedTypeIsNotSupported(t *testing.T) {
	h := start(t, "")
	err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: "INCL", Name: "ZORDER_TOP"}, nil)
	se := protoCode(t, err)
	if se.Code != sap.ErrNotSupported || !strings.Contains(se.Message, "INCL") {
		t.Fatalf("got %v", se)
	}
	if len(h.sap.callsTo("RFC_READ_TABLE")) != 0 {
		t.Fatal("tables read for a type they do not hold")
	}
}
