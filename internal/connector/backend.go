package connector

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sapagent/sapagent/internal/sap"
)

// Credentials are the SAP login a call runs as: the caller's (X-SAP-User / X-SAP-Password) or,
// without them, the system's technical user. They never print their password.
type Credentials struct {
	User      string
	Password  string
	Technical bool // the technical user of the config, not the caller's own login
}

// String names the user only.
func (c Credentials) String() string {
	if c.Technical {
		return c.User + " (technical user)"
	}
	return c.User
}

// GoString keeps %#v from printing the password.
func (c Credentials) GoString() string {
	return "connector.Credentials{User:" + fmt.Sprintf("%q", c.User) + "}"
}

// LogValue keeps slog from logging the password.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user", c.User), slog.Bool("technical", c.Technical))
}

// Backend maps the connector protocol onto one SAP system: one method per endpoint. Requests
// are decoded with json.Number, so numbers in execute_rfc's imports and tables keep their exact
// digits (an amount or a 20-digit number is not rounded through float64). Errors the
// protocol knows are *sap.Error (status, code, message, ABAP exception); a context error becomes
// 504 TIMEOUT and any other error 503 SYSTEM_UNAVAILABLE. Embed Unsupported to map endpoints
// one at a time: the rest answer 422 NOT_SUPPORTED with a reason.
type Backend interface {
	SystemInfo(ctx context.Context, cred Credentials, req sap.SystemInfoRequest) (*sap.SystemInfo, error)
	ProbeChanges(ctx context.Context, cred Credentials, req sap.ProbeChangesRequest) (*sap.ProbeChangesResponse, error)
	TableSchema(ctx context.Context, cred Credentials, req sap.TableSchemaRequest) (*sap.TableSchema, error)
	ReadTable(ctx context.Context, cred Credentials, req sap.ReadTableRequest) (*sap.ReadTableResponse, error)
	ExecuteRFC(ctx context.Context, cred Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error)
	FunctionInterface(ctx context.Context, cred Credentials, req sap.FunctionInterfaceRequest) (*sap.FunctionInterface, error)
	SearchObjects(ctx context.Context, cred Credentials, req sap.SearchObjectsRequest) (*sap.SearchObjectsResponse, error)
	ABAPSource(ctx context.Context, cred Credentials, req sap.ABAPSourceRequest) (*sap.ABAPSource, error)
	WhereUsed(ctx context.Context, cred Credentials, req sap.WhereUsedRequest) (*sap.WhereUsedResponse, error)
	WriteTable(ctx context.Context, cred Credentials, req sap.WriteTableRequest) (*sap.WriteTableResponse, error)
	IndexCustomObjects(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	IndexRelationships(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	IndexCustomCode(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	IndexCatalogContext(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	IndexEnhancements(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	IndexS4Extensions(ctx context.Context, cred Credentials, req sap.IndexRequest) (*sap.IndexPage, error)
	// Probe checks each enabled interface with the technical user: nil means it answered.
	Probe(ctx context.Context) map[string]error
}

// BackendFactory builds a system's Backend; client is the system's HTTP client (its CA file,
// connect timeout, no redirects).
type BackendFactory func(sys System, client *http.Client) Backend

// NotSupported is the protocol's 422 NOT_SUPPORTED with a reason.
func NotSupported(format string, args ...any) *sap.Error {
	return &sap.Error{Status: http.StatusUnprocessableEntity, ErrorDetail: sap.ErrorDetail{
		Code: sap.ErrNotSupported, Message: fmt.Sprintf(format, args...)}}
}

// Unsupported answers every endpoint with NOT_SUPPORTED: the mapping of each endpoint onto
// SAP's interfaces is not built yet. Its Probe reports nothing.
type Unsupported struct {
	SystemID string
}

func (u Unsupported) not(endpoint string) *sap.Error {
	return NotSupported("the connector does not map %s onto SAP's interfaces yet (system %s); see docs/connector.md", endpoint, u.SystemID)
}

func (u Unsupported) SystemInfo(context.Context, Credentials, sap.SystemInfoRequest) (*sap.SystemInfo, error) {
	return nil, u.not(sap.EndpointSystemInfo)
}
func (u Unsupported) ProbeChanges(context.Context, Credentials, sap.ProbeChangesRequest) (*sap.ProbeChangesResponse, error) {
	return nil, u.not(sap.EndpointProbeChanges)
}
func (u Unsupported) TableSchema(context.Context, Credentials, sap.TableSchemaRequest) (*sap.TableSchema, error) {
	return nil, u.not(sap.EndpointTableSchema)
}
func (u Unsupported) ReadTable(context.Context, Credentials, sap.ReadTableRequest) (*sap.ReadTableResponse, error) {
	return nil, u.not(sap.EndpointReadTable)
}
func (u Unsupported) ExecuteRFC(context.Context, Credentials, sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error) {
	return nil, u.not(sap.EndpointExecuteRFC)
}
func (u Unsupported) FunctionInterface(context.Context, Credentials, sap.FunctionInterfaceRequest) (*sap.FunctionInterface, error) {
	return nil, u.not(sap.EndpointFunctionInterface)
}
func (u Unsupported) SearchObjects(context.Context, Credentials, sap.SearchObjectsRequest) (*sap.SearchObjectsResponse, error) {
	return nil, u.not(sap.EndpointSearchObjects)
}
func (u Unsupported) ABAPSource(context.Context, Credentials, sap.ABAPSourceRequest) (*sap.ABAPSource, error) {
	return nil, u.not(sap.EndpointABAPSource)
}
func (u Unsupported) WhereUsed(context.Context, Credentials, sap.WhereUsedRequest) (*sap.WhereUsedResponse, error) {
	return nil, u.not(sap.EndpointWhereUsed)
}
func (u Unsupported) WriteTable(context.Context, Credentials, sap.WriteTableRequest) (*sap.WriteTableResponse, error) {
	return nil, u.not(sap.EndpointWriteTable)
}
func (u Unsupported) IndexCustomObjects(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexCustomObjects)
}
func (u Unsupported) IndexRelationships(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexRelationships)
}
func (u Unsupported) IndexCustomCode(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexCustomCode)
}
func (u Unsupported) IndexCatalogContext(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexCatalogContext)
}
func (u Unsupported) IndexEnhancements(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexEnhancements)
}
func (u Unsupported) IndexS4Extensions(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error) {
	return nil, u.not(sap.EndpointIndexS4Extensions)
}
func (u Unsupported) Probe(context.Context) map[string]error { return nil }

// DefaultBackend is what a system gets until its endpoints are mapped: every endpoint answers
// NOT_SUPPORTED, and Probe asks SAP's interfaces over HTTP (HTTPProbe).
type DefaultBackend struct {
	Unsupported
	probe HTTPProbe
}

// NewDefaultBackend is the BackendFactory of cmd/sapagent-connector today.
func NewDefaultBackend(sys System, client *http.Client) Backend {
	return DefaultBackend{Unsupported: Unsupported{SystemID: sys.ID}, probe: HTTPProbe{System: sys, Client: client}}
}

// Probe asks each enabled interface of the system.
func (d DefaultBackend) Probe(ctx context.Context) map[string]error { return d.probe.Probe(ctx) }

// dispatch decodes nothing: it calls the Backend method of endpoint with an already decoded
// request. It returns false for an unknown endpoint.
func dispatch(ctx context.Context, b Backend, endpoint string, cred Credentials, decode func(any) error) (any, bool, error) {
	call := func(req any, run func() (any, error)) (any, bool, error) {
		if req != nil {
			if err := decode(req); err != nil {
				return nil, true, err
			}
		}
		out, err := run()
		return out, true, err
	}
	switch endpoint {
	case sap.EndpointSystemInfo:
		var req sap.SystemInfoRequest
		return call(&req, func() (any, error) { return b.SystemInfo(ctx, cred, req) })
	case sap.EndpointProbeChanges:
		var req sap.ProbeChangesRequest
		return call(&req, func() (any, error) { return b.ProbeChanges(ctx, cred, req) })
	case sap.EndpointTableSchema:
		var req sap.TableSchemaRequest
		return call(&req, func() (any, error) { return b.TableSchema(ctx, cred, req) })
	case sap.EndpointReadTable:
		var req sap.ReadTableRequest
		return call(&req, func() (any, error) { return b.ReadTable(ctx, cred, req) })
	case sap.EndpointExecuteRFC:
		var req sap.ExecuteRFCRequest
		return call(&req, func() (any, error) { return b.ExecuteRFC(ctx, cred, req) })
	case sap.EndpointFunctionInterface:
		var req sap.FunctionInterfaceRequest
		return call(&req, func() (any, error) { return b.FunctionInterface(ctx, cred, req) })
	case sap.EndpointSearchObjects:
		var req sap.SearchObjectsRequest
		return call(&req, func() (any, error) { return b.SearchObjects(ctx, cred, req) })
	case sap.EndpointABAPSource:
		var req sap.ABAPSourceRequest
		return call(&req, func() (any, error) { return b.ABAPSource(ctx, cred, req) })
	case sap.EndpointWhereUsed:
		var req sap.WhereUsedRequest
		return call(&req, func() (any, error) { return b.WhereUsed(ctx, cred, req) })
	case sap.EndpointWriteTable:
		var req sap.WriteTableRequest
		return call(&req, func() (any, error) { return b.WriteTable(ctx, cred, req) })
	}
	index := map[string]func(context.Context, Credentials, sap.IndexRequest) (*sap.IndexPage, error){
		sap.EndpointIndexCustomObjects:  b.IndexCustomObjects,
		sap.EndpointIndexRelationships:  b.IndexRelationships,
		sap.EndpointIndexCustomCode:     b.IndexCustomCode,
		sap.EndpointIndexCatalogContext: b.IndexCatalogContext,
		sap.EndpointIndexEnhancements:   b.IndexEnhancements,
		sap.EndpointIndexS4Extensions:   b.IndexS4Extensions,
	}
	if phase, ok := index[endpoint]; ok {
		var req sap.IndexRequest
		return call(&req, func() (any, error) { return phase(ctx, cred, req) })
	}
	return nil, false, nil
}
