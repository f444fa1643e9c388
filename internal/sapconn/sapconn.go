// Package sapconn turns a workspace's stored connections into connectors: it loads them with
// their secrets, decrypts connector keys and SAP logins at the moment of use, refuses an SAP
// identity that may not be used, and reaches the remote connector or the simulated system.
// The agent's SAP tools (internal/saptools) and the index syncs (activities) both reach SAP
// through it; neither decrypts anything itself.
package sapconn

import "github.com/sapagent/sapagent/internal/sap"

// Conn is one resolved connection: what a tool may route to and what a sync pages through.
type Conn struct {
	ID         string
	Name       string
	SystemType string // ECC or S4HANA
	API        sap.Connector
}
