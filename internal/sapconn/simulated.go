package sapconn

import (
	"errors"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// SimulatedSystems answers for connections without a connector URL (simulated ones, and in
// development every one without a URL). A plain sapagent process reaches the simulator through
// a connector (SimulatorConnector); the dev stack and tests may use the simulator in process
// (sapsim.Landscape), which only they link.
type SimulatedSystems interface {
	// Connector reaches the simulated system of systemType ("ECC", "S4HANA") as t's SAP user;
	// t.URL and t.ConnectorKey are ignored (the simulator's route has its own).
	Connector(systemType string, t sap.Target) (sap.Connector, error)
}

// SimulatorConnector reaches the simulated systems through a connector that fronts the
// simulator (SIMULATOR_CONNECTOR_URL, SIMULATOR_CONNECTOR_KEY): <URL>/ECC and <URL>/S4H.
type SimulatorConnector struct {
	Client *sap.Client
	URL    string // the connector's base URL, without a system segment
	Key    string // the connector key it accepts
}

// Connector implements SimulatedSystems.
func (s SimulatorConnector) Connector(systemType string, t sap.Target) (sap.Connector, error) {
	if s.Client == nil || s.URL == "" {
		return nil, errors.New("no simulator connector configured")
	}
	return s.Client.Connector(sap.Target{URL: strings.TrimSuffix(s.URL, "/") + "/" + SimSystemID(systemType),
		ConnectorKey: s.Key, SAPUser: t.SAPUser, SAPPassword: t.SAPPassword}), nil
}

// SimSystemID maps a connection's system type to the simulated system serving it.
func SimSystemID(systemType string) string {
	if systemType == "S4HANA" {
		return "S4H"
	}
	return "ECC"
}
