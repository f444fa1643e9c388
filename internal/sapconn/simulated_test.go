package sapconn

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// A process without a simulator route answers a connection without a URL with an error that
// names the configuration, never with data.
func TestSimulatedConnectionWithoutSimulatorRouteIsAClearError(t *testing.T) {
	_, err := (&Resolver{}).Connector("ECC", true, sap.Target{})
	if err == nil || !strings.Contains(err.Error(), "SIMULATOR_CONNECTOR_URL") {
		t.Fatalf("got %v", err)
	}
}

// SimulatorConnector sends <URL>/<SID> with its own key and the caller's SAP login. The
// simulator's own protocol stands in for the connector here: it checks the same headers.
func TestSimulatorConnectorAddressesTheSystemWithItsKeyAndTheUsersLogin(t *testing.T) {
	srv := httptest.NewServer(sapsim.NewLandscape(sapsim.Options{}).Handler())
	defer srv.Close()
	sim := SimulatorConnector{Client: sap.NewClient(sap.Guard{Trusted: true}, 10*time.Second), URL: srv.URL + "/", Key: sapsim.S4HConnectorKey}
	r := &Resolver{Simulated: sim}
	c, err := r.Connector("S4HANA", true, sap.Target{URL: "", ConnectorKey: "ignored", SAPUser: "DEVELOPER", SAPPassword: "dev-pass-1"})
	if err != nil {
		t.Fatal(err)
	}
	var info sap.SystemInfo
	if err := c.Call(context.Background(), sap.EndpointSystemInfo, struct{}{}, &info); err != nil {
		t.Fatal(err)
	}
	if info.SystemID != "S4H" {
		t.Fatalf("system %q", info.SystemID)
	}
	c, _ = r.Connector("S4HANA", true, sap.Target{SAPUser: "DEVELOPER", SAPPassword: "wrong"})
	if err := c.Call(context.Background(), sap.EndpointSystemInfo, struct{}{}, &info); err == nil || !strings.Contains(err.Error(), "LOGON") {
		t.Fatalf("a wrong password reached the simulator unchanged? %v", err)
	}
}
