package devstack

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
	"github.com/sapagent/sapagent/internal/sapconn"
)

// BenchmarkConnectorOverhead is the connector's cost per call (issue 19: goal ≤ 1 ms p50): the
// same RFC_READ_TABLE of one KNA1 row as the platform makes it (sap.Client → connector HTTP →
// sapbackend → the simulator's SOAP RFC over HTTP) and straight to the simulator's SOAP RFC
// service with the soaprfc client (the baseline), interleaved call by call in the same run.
// Reported: p50 and p99 of each, the p50 overhead, and the HTTP requests each path sent the
// simulator per call.
func BenchmarkConnectorOverhead(b *testing.B) {
	land := sapsim.NewLandscape(sapsim.Options{})
	var soapCalls atomic.Int64
	sim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		soapCalls.Add(1)
		land.Handler().ServeHTTP(w, r)
	}))
	defer sim.Close()
	h, key, err := NewDevConnector(sim.URL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	conn := httptest.NewServer(h)
	defer conn.Close()
	via, err := sapconn.SimulatorConnector{Client: sap.NewClient(sap.Guard{Trusted: true}, time.Minute), URL: conn.URL, Key: key}.
		Connector("ECC", sap.Target{SAPUser: devTechUser, SAPPassword: sapsim.DefaultUsers()[devTechUser]})
	if err != nil {
		b.Fatal(err)
	}
	direct, err := soaprfc.New(soaprfc.Config{BaseURL: sim.URL + "/ECC", Client: "100", Language: "EN"})
	if err != nil {
		b.Fatal(err)
	}
	cred := soaprfc.Credentials{User: devTechUser, Password: sapsim.DefaultUsers()[devTechUser]}
	ctx := context.Background()
	viaConnector := func() error {
		var res sap.ReadTableResponse
		if err := via.Call(ctx, sap.EndpointReadTable, sap.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR", "NAME1"}, RowCount: 1}, &res); err != nil {
			return err
		}
		if len(res.Rows) != 1 {
			b.Fatalf("connector: %d rows", len(res.Rows))
		}
		return nil
	}
	straight := func() error {
		n := 0
		_, err := direct.ReadTable(ctx, cred, soaprfc.ReadTableRequest{Table: "KNA1", Fields: []string{"KUNNR", "NAME1"}, RowCount: 1},
			func(soaprfc.Struct) error { n++; return nil })
		if err == nil && n != 1 {
			b.Fatalf("direct: %d rows", n)
		}
		return err
	}
	for range 20 { // warm both paths (connections, the simulator's generated data)
		if err := viaConnector(); err != nil {
			b.Fatal(err)
		}
		if err := straight(); err != nil {
			b.Fatal(err)
		}
	}
	soapCalls.Store(0)
	var viaSOAP, directSOAP int64
	viaTimes, directTimes := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		c0, start := soapCalls.Load(), time.Now()
		if err := viaConnector(); err != nil {
			b.Fatal(err)
		}
		c1, mid := soapCalls.Load(), time.Now()
		if err := straight(); err != nil {
			b.Fatal(err)
		}
		viaSOAP, directSOAP = viaSOAP+c1-c0, directSOAP+soapCalls.Load()-c1
		viaTimes, directTimes = append(viaTimes, mid.Sub(start)), append(directTimes, time.Since(mid))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
	}
	viaP50, directP50 := pct(viaTimes, 0.50), pct(directTimes, 0.50)
	b.ReportMetric(viaP50, "connector-p50-ms")
	b.ReportMetric(pct(viaTimes, 0.99), "connector-p99-ms")
	b.ReportMetric(directP50, "direct-p50-ms")
	b.ReportMetric(pct(directTimes, 0.99), "direct-p99-ms")
	b.ReportMetric(viaP50-directP50, "overhead-p50-ms")
	b.ReportMetric(float64(viaSOAP)/float64(b.N), "connector-http-to-sim/op")
	b.ReportMetric(float64(directSOAP)/float64(b.N), "direct-http-to-sim/op")
}
