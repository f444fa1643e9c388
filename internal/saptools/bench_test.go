package saptools

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/tools"
)

// BenchmarkReadTableThroughput: rows per second of sap_read_table (1,000 rows of MARA per
// call, every field) through the tool layer and the connector client over HTTP, and through
// the tool layer in-process, against the simulator called directly in the same run.
func BenchmarkReadTableThroughput(b *testing.B) {
	land := sapsim.NewLandscape(sapsim.Options{})
	sys, _ := land.System("ECC")
	srv := httptest.NewServer(land.Handler())
	defer srv.Close()
	ctx := context.Background()
	def, _ := tools.Default().Get(tools.SAPReadTable)
	args, err := def.ParseArguments(`{"table":"MARA","row_count":1000}`)
	if err != nil {
		b.Fatal(err)
	}
	remote := New([]sapconn.Conn{{ID: "ecc", Name: "ECC", SystemType: "ECC",
		API: sap.NewClient(sap.Guard{}, time.Minute).Connector(sap.Target{URL: srv.URL + "/ECC", ConnectorKey: sapsim.ECCConnectorKey})}})
	local := New([]sapconn.Conn{{ID: "ecc", Name: "ECC", SystemType: "ECC", API: sapsim.InProcess{System: sys, Cred: sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}}}})
	body, _ := json.Marshal(sap.ReadTableRequest{Table: "MARA", RowCount: 1000})

	measure := func(run func() int) float64 {
		rows := 0
		start := time.Now()
		for time.Since(start) < time.Second {
			rows += run()
		}
		return float64(rows) / time.Since(start).Seconds()
	}
	direct := func() int {
		out, err := sys.Call(ctx, sap.EndpointReadTable, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, body)
		if err != nil {
			b.Fatal(err)
		}
		return len(out.(sap.ReadTableResponse).Rows)
	}
	through := func(e *Executor) func() int {
		return func() int {
			out, err := e.ReadTable(ctx, args)
			if err != nil {
				b.Fatal(err)
			}
			// The activity hands the model JSON: include that cost.
			if _, err := json.Marshal(out); err != nil {
				b.Fatal(err)
			}
			return out.(ReadTableResult).RowCount
		}
	}
	direct() // builds the landscape's data
	for n := 0; n < b.N; n++ {
		var d, r, l []float64
		for round := 0; round < 3; round++ { // interleaved: the machines are noisy
			d = append(d, measure(direct))
			r = append(r, measure(through(remote)))
			l = append(l, measure(through(local)))
		}
		dm, rm, lm := median(d), median(r), median(l)
		b.ReportMetric(dm, "direct-rows/s")
		b.ReportMetric(rm, "http-tool-rows/s")
		b.ReportMetric(lm, "inprocess-tool-rows/s")
		b.ReportMetric(rm/dm, "http-ratio")
		b.ReportMetric(lm/dm, "inprocess-ratio")
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
