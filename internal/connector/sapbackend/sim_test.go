package sapbackend

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// simHarness: the platform's connector client → the connector server with this backend → the
// simulator's SOAP RFC and ADT services over HTTP.
type simHarness struct {
	harness
	land    *sapsim.Landscape
	sys     *sapsim.System
	dataDir string
	simURL  string
	sid     string // the system's ID, in the simulator and in the connector's config
}

func startSim(t testing.TB, opts sapsim.Options, systemYAML string) *simHarness {
	return startSimSystem(t, "ECC", opts, systemYAML)
}

func startSimSystem(t testing.TB, sid string, opts sapsim.Options, systemYAML string) *simHarness {
	t.Helper()
	return startSimBehind(t, sid, opts, nil, systemYAML)
}

// startSimBehind serves the simulator behind wrap (nil: none), which sees every request SAP gets.
func startSimBehind(t testing.TB, sid string, opts sapsim.Options, wrap func(http.Handler) http.Handler, systemYAML string) *simHarness {
	t.Helper()
	land := sapsim.NewLandscape(opts)
	var handler http.Handler = land.Handler()
	if wrap != nil {
		handler = wrap(handler)
	}
	sim := httptest.NewServer(handler)
	t.Cleanup(sim.Close)
	h := &simHarness{land: land, dataDir: t.TempDir(), simURL: sim.URL + "/" + sid, sid: sid}
	h.sys, _ = land.System(sid)
	h.restart(t, systemYAML)
	return h
}

// restart builds a new connector (server and backend) over the same data directory, as a
// connector process restart does.
func (h *simHarness) restart(t testing.TB, systemYAML string) {
	t.Helper()
	cfgYAML := "connector_keys: [" + connectorKey + "]\nidempotency_store: " + filepath.Join(h.dataDir, "idem.json") +
		"\nsystems:\n  - id: " + h.sid + "\n    url: " + h.simURL + "\n    client: \"100\"\n    user: DEVELOPER\n    password_env: ECC_PW\n" + systemYAML
	url := serveConnector(t, cfgYAML, sapsim.DefaultUsers()["DEVELOPER"])
	h.harness = harness{client: sap.NewClient(sap.Guard{}, 30*time.Second), url: url + "/" + h.sid}
}

// serveConnector serves the connector of a config (the technical user's password from ECC_PW)
// with this package's backend, as cmd/sapagent-connector wires it.
func serveConnector(t testing.TB, cfgYAML, password string) string {
	t.Helper()
	cfg, err := connector.ParseConfig([]byte(cfgYAML), func(string) string { return password })
	if err != nil {
		t.Fatal(err)
	}
	backends := map[string]connector.Backend{}
	for _, sys := range cfg.Systems {
		backends[sys.ID] = New(sys, connector.NewHTTPClient(sys))
	}
	store, err := connector.OpenIdempotencyStore(cfg.IdempotencyStore)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := connector.NewServer(cfg, backends, store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); _ = store.Close() })
	return hs.URL
}

func TestSimSystemInfoTypeFromCVERS(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	var got sap.SystemInfo
	if err := h.call(t, "", "", sap.EndpointSystemInfo, struct{}{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.SystemID != "ECC" || got.SystemType != "ECC" || got.Database != "ORA" || got.Host != "eccprd01" || !got.Unicode || len(got.Components) != 4 {
		t.Fatalf("system_info: %+v", got)
	}
}

func TestSimFunctionInterfaceGroupFromTFDIR(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	var got sap.FunctionInterface
	if err := h.call(t, "", "", sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "Z_CALC_BONUS"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Group != "ZFG_PRICING" || got.Description != "Calculate customer bonus from revenue" {
		t.Fatalf("function_interface: %+v", got)
	}
	if err := h.call(t, "", "", sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "BAPI_CUSTOMER_GETDETAIL2"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Group != "V02D" {
		t.Fatalf("function_interface: %+v", got)
	}
}

func TestSimTableSchemaOfSystemTable(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	var got sap.TableSchema
	if err := h.call(t, "", "", sap.EndpointTableSchema, sap.TableSchemaRequest{Table: "TFDIR"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Description != "Function Module" || len(got.Fields) < 3 || got.Fields[0].Name != "FUNCNAME" || got.Fields[0].Length != 30 || got.Fields[1].Length != 40 {
		t.Fatalf("TFDIR: %+v", got)
	}
	if err := h.call(t, "", "", sap.EndpointTableSchema, sap.TableSchemaRequest{Table: "KNA1"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Description != "General Data in Customer Master" || got.DeliveryClass != "A" {
		t.Fatalf("KNA1 from DD02L/DD02T: %+v", got)
	}
}

func TestSimWhereUsedLegacyFromWBCROSSGTAndCROSS(t *testing.T) {
	h := startSim(t, sapsim.Options{GeneratedObjects: 2000}, "")
	h.sys.SetLegacyADT(true)
	for _, c := range []struct{ typ, name, want string }{
		{"TABL", "KNA1", "ZR_SALES_REPORT"},
		{"FUNC", "BAPI_SALESORDER_GETLIST", "ZR_SALES_REPORT"},
		{"FUNC", "Z_CALC_BONUS", ""},
	} {
		var got sap.WhereUsedResponse
		if err := h.call(t, "", "", sap.EndpointWhereUsed, sap.WhereUsedRequest{ObjectType: c.typ, Name: c.name}, &got); err != nil {
			t.Fatal(c.name, err)
		}
		found := c.want == ""
		for _, u := range got.Usages {
			if u.Name == c.want {
				found = true
			}
		}
		if !found {
			t.Fatalf("where_used %s: %+v", c.name, got.Usages)
		}
	}
}
