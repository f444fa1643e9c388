package sapbackend

import (
	"context"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

// BenchmarkCustomerChange compares one committed BAPI_CUSTOMER_CHANGEFROMDATA1 through the
// connector on the simulated S/4HANA system: the classic BAPI over SOAP RFC (baseline) and the
// released API (OData: two reads for the ETag, one $batch changeset).
// go test -run X -bench CustomerChange -benchtime 200x ./internal/connector/sapbackend/
func BenchmarkCustomerChange(b *testing.B) {
	for _, c := range []struct{ name, yaml string }{
		{"bapi", "    write_function_modules: [BAPI_CUSTOMER_CHANGEFROMDATA1]\n"},
		{"odata", odataWrites},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := startODataSim(b, "S4H", c.yaml)
			call := func(endpoint string, req, resp any) error {
				return h.client.Call(context.Background(), sap.Target{URL: h.url, ConnectorKey: connectorKey}, endpoint, req, resp)
			}
			var first sap.ReadTableResponse
			if err := call(sap.EndpointReadTable, sap.ReadTableRequest{Table: "BUT020", Fields: []string{"PARTNER"}, RowCount: 1}, &first); err != nil {
				b.Fatal(err)
			}
			kunnr := first.Rows[0][0]
			req := sap.ExecuteRFCRequest{Function: "BAPI_CUSTOMER_CHANGEFROMDATA1", Commit: true,
				Imports: map[string]any{"CUSTOMERNO": kunnr, "PI_COMPANYDATA": map[string]any{"NAME": "Bench GmbH"}}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var out sap.ExecuteRFCResponse
				if err := call(sap.EndpointExecuteRFC, req, &out); err != nil || !out.Committed {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}
