package abapref

import (
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"strconv"
	"strings"
	"testing"
)

// simSources reads the sample sources the simulator serves (string constants
// of internal/sap/sapsim/objects.go) without importing the simulator.
func simSources(t testing.TB) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(gotoken.NewFileSet(), "../sap/sapsim/objects.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != gotoken.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[vs.Names[i].Name] = s
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found %d sample sources in objects.go; the test reads the wrong file", len(out))
	}
	return out
}

// TestSimulatorSources runs the extractor over every sample source of the
// simulator and checks the SAP objects a real system's where-used would list.
func TestSimulatorSources(t *testing.T) {
	src := simSources(t)
	want := map[string][]string{
		"zrSalesReport": {"read TABL VBAK", "read TABL VBAP", "read TABL KNA1", "call FUNC BAPI_SALESORDER_GETLIST",
			"call CLAS CL_SALV_TABLE", "type TABL VBAK", "type TYPE BAPIRET2", "type TYPE VKORG"},
		"zrMaterialUpload":    {"call FUNC GUI_UPLOAD", "read TABL MARA", "call TRAN MM01", "type TYPE BDCDATA"},
		"zrOpenItems":         {"read TABL BKPF", "read TABL BSEG", "read TABL SKAT", "type TYPE BUKRS"},
		"zfgPricingCalcBonus": {"read TABL KNA1", "read TABL ZSALES_BONUS", "read TABL KONV", "read TABL VBAK"},
		"zclCustomerService": {"call FUNC BAPI_CUSTOMER_GETDETAIL2", "read TABL KNA1", "call CLAS CL_ABAP_CONTEXT_INFO",
			"type CLAS CX_STATIC_CHECK", "type TYPE KUNNR"},
		"zclPoHelper":      {"call FUNC BAPI_PO_CREATE1", "call FUNC BAPI_TRANSACTION_COMMIT", "type TYPE BAPIMEPOHEADER"},
		"ziSalesOrder":     {"read TABL VBAK", "read TABL KNA1"},
		"zeiSdSales":       {"implement INTF IF_EX_BADI_SD_SALES", "read TABL ZCUST_RATING"},
		"zeiPoCheck":       {"implement INTF IF_EX_ME_PROCESS_PO_CUST", "read TABL LFA1"},
		"mv45afzz":         {"read TABL KNA1", "include PROG ZXVVAU04"},
		"zxvvau04":         {"read TABL ZSALES_BONUS", "call FUNC POPUP_TO_CONFIRM"},
		"zrCustomerExport": {"read TABL KNA1", "read TABL ZCUST_RATING", "call CLAS CL_GUI_FRONTEND_SERVICES"},
		"zrStockReport":    {"read TABL MARD", "read TABL MAKT", "read TABL MSEG", "attribute CLAS CL_ABAP_CHAR_UTILITIES"},
		"s4ProductCheck":   {"read DDLS I_PRODUCT", "call CLAS CL_ABAP_CONTEXT_INFO"},
		"s4SalesExt":       {"extend DDLS I_SALESDOCUMENT"},
		"s4ZiCustomer":     {"read DDLS I_CUSTOMER"},
	}
	cds := map[string]bool{"ziSalesOrder": true, "s4SalesExt": true, "s4ZiCustomer": true}
	total := 0
	for name, want := range want {
		s, ok := src[name]
		if !ok {
			t.Errorf("objects.go has no source %s any more", name)
			continue
		}
		typ := "PROG"
		if cds[name] {
			typ = "DDLS"
		}
		refs := Extract(typ, s)
		total += len(refs)
		got := map[string]bool{}
		for _, r := range refs {
			got[fmt.Sprintf("%s %s %s", r.Kind, r.Type, r.Name)] = true
			if r.Line < 1 || r.Line > strings.Count(s, "\n")+1 {
				t.Errorf("%s: %v has a line outside the source", name, r)
			}
		}
		for _, w := range want {
			if !got[w] {
				t.Errorf("%s: missing %q; got %v", name, w, refStrings(refs))
			}
		}
	}
	t.Logf("%d references from %d simulator sources", total, len(want))
}
