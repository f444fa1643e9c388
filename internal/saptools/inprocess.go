package saptools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// InProcess reaches a simulated system without HTTP: the fallback for connections without a
// connector URL (seed 000's mock fallback), on the same landscape the dev stack serves. Requests
// and answers still go through JSON, so tools see exactly what a remote connector would send.
type InProcess struct {
	System *sapsim.System
	Cred   sapsim.Credentials
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

// SimSystemID maps a connection's system type to the simulated system serving it.
func SimSystemID(systemType string) string {
	if systemType == "S4HANA" {
		return "S4H"
	}
	return "ECC"
}
