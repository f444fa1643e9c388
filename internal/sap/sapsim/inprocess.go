package sapsim

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/sapagent/sapagent/internal/sap"
)

// InProcess reaches a simulated system without HTTP: the development route for connections
// without a connector URL (the dev stack's in-process option and tests). Requests and answers
// still go through JSON, so tools see exactly what a remote connector would send. Production
// binaries never link it: they reach the simulator through a connector (SIMULATOR_CONNECTOR_URL).
type InProcess struct {
	System *System
	Cred   Credentials
}

// Call implements sap.Connector.
func (p InProcess) Call(ctx context.Context, endpoint string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", endpoint, err)
	}
	cred := p.Cred
	cred.IdempotencyKey = sap.RequestIdempotencyKey(ctx, endpoint) // as the remote client sends it
	out, err := p.System.Call(ctx, endpoint, cred, body)
	if err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	// The simulator answers with the protocol's own structs, built fresh for each call: hand
	// them over as they are when the caller asked for that type (no JSON round trip).
	if rv := reflect.ValueOf(resp); rv.Kind() == reflect.Pointer && !rv.IsNil() && reflect.TypeOf(out) == rv.Elem().Type() {
		rv.Elem().Set(reflect.ValueOf(out))
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode %s answer: %w", endpoint, err)
	}
	return json.Unmarshal(raw, resp)
}

var _ sap.Connector = InProcess{}

// Connector is the landscape as the platform's simulated systems (sapconn.SimulatedSystems):
// the system of systemType in process, as t's SAP user (the connector key is the system's own).
func (l *Landscape) Connector(systemType string, t sap.Target) (sap.Connector, error) {
	sid := "ECC"
	if systemType == "S4HANA" {
		sid = "S4H"
	}
	sys, ok := l.System(sid)
	if !ok {
		return nil, fmt.Errorf("no simulated %s system", systemType)
	}
	return InProcess{System: sys, Cred: Credentials{ConnectorKey: sys.key, User: t.SAPUser, Password: t.SAPPassword}}, nil
}
