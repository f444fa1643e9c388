// Package sapbackend is the connector's Backend for a real SAP system: it maps the connector
// protocol onto SAP's SOAP RFC service (internal/sap/soaprfc) and ADT (internal/sap/adt).
// Endpoints it does not map answer NOT_SUPPORTED with a reason (connector.Unsupported).
package sapbackend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/adt"
	"github.com/sapagent/sapagent/internal/sap/odata"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// Backend serves one SAP system.
type Backend struct {
	connector.Unsupported
	sys connector.System
	rfc *soaprfc.Client
	adt *adt.Client
	od  *odata.Client
	// Why a client could not be built (a bad URL; the config's validation normally catches it).
	rfcErr, adtErr error
	probe          connector.HTTPProbe
	// The connector's own change log of the system (changes.go); changesErr: it cannot be opened.
	changes    *connector.ChangeLog
	changesErr error
	pollMu     sync.Mutex
	lastPoll   time.Time // under pollMu
	systemType string    // from CVERS, once known (s4_extensions)
	typeMu     sync.Mutex
	released   releasedState       // what the OData route knows about the system (odata.go)
	writePkg   writeTableInstalled // Z_SAPAGENT_WRITE_TABLE answered (writetable.go)
	// The index phases' sources (sources.go), cached between phases.
	sources *sourceCache
	// calls are the system's max_concurrent_calls, shared with the server's protocol calls
	// (ShareCallSlots): parallel reads and read-ahead take one per SAP call.
	calls *connector.CallSlots
	ahead *readAhead // index pages read ahead of the platform's request (readahead.go)
}

// New is the connector's BackendFactory for SAP systems. A client that cannot be built (a bad
// URL; the config's validation normally catches it) leaves its endpoints NOT_SUPPORTED.
func New(sys connector.System, client *http.Client) connector.Backend {
	b := &Backend{Unsupported: connector.Unsupported{SystemID: sys.ID}, sys: sys,
		probe:   connector.HTTPProbe{System: sys, Client: client},
		sources: newSourceCache(maxCachedSourceBytes), calls: connector.NewCallSlots(sys.MaxConcurrentCalls),
		ahead: newReadAhead(sys)}
	if sys.Interfaces.Enabled(connector.InterfaceSOAPRFC) {
		b.rfc, b.rfcErr = soaprfc.New(soaprfc.Config{BaseURL: sys.URL, Client: sys.Client, Language: sys.Language, HTTPClient: client})
	}
	if sys.Interfaces.Enabled(connector.InterfaceADT) {
		b.adt, b.adtErr = adt.New(adt.Config{BaseURL: sys.URL, Client: sys.Client, Language: sys.Language, HTTP: client})
	}
	if b.changes, b.changesErr = connector.OpenChangeLog(sys.ChangeLog); b.changesErr != nil {
		b.changes, _ = connector.OpenChangeLog("")
	}
	if sys.Interfaces.Enabled(connector.InterfaceOData) {
		// A bad URL leaves od nil: the writes then take the BAPIs over SOAP RFC.
		b.od, _ = odata.New(odata.Config{BaseURL: sys.URL, Client: sys.Client, HTTP: client})
	}
	return b
}

// ShareCallSlots makes the backend's own SAP calls take the server's slots of the system
// (connector.SlotSharer); until then (a backend used without a server) it has slots of its own.
func (b *Backend) ShareCallSlots(s *connector.CallSlots) { b.calls = s }

// Probe asks each enabled interface of the system over HTTP.
func (b *Backend) Probe(ctx context.Context) map[string]error { return b.probe.Probe(ctx) }

// soap returns the SOAP RFC client when it serves endpoint.
func (b *Backend) soap(endpoint string) (*soaprfc.Client, error) {
	if route := b.sys.Interfaces.Route(endpoint); route != connector.InterfaceSOAPRFC {
		return nil, connector.NotSupported("%s is routed to %s on system %s, which the connector does not map it onto yet", endpoint, route, b.sys.ID)
	}
	if b.rfcErr != nil {
		return nil, connector.NotSupported("%s: the SOAP RFC client of system %s could not be built: %v", endpoint, b.sys.ID, b.rfcErr)
	}
	if b.rfc == nil {
		return nil, connector.NotSupported("%s needs SOAP RFC (interfaces.soap_rfc), which is switched off for system %s", endpoint, b.sys.ID)
	}
	return b.rfc, nil
}

// adtClient returns the ADT client when it serves endpoint.
func (b *Backend) adtClient(endpoint string) (*adt.Client, error) {
	if route := b.sys.Interfaces.Route(endpoint); route != connector.InterfaceADT {
		return nil, connector.NotSupported("%s is routed to %s on system %s; the connector serves it only through ADT", endpoint, route, b.sys.ID)
	}
	if b.adtErr != nil {
		return nil, connector.NotSupported("%s: the ADT client of system %s could not be built: %v", endpoint, b.sys.ID, b.adtErr)
	}
	if b.adt == nil {
		return nil, connector.NotSupported("%s needs ADT (interfaces.adt), which is switched off for system %s", endpoint, b.sys.ID)
	}
	return b.adt, nil
}

func rfcCred(c connector.Credentials) soaprfc.Credentials {
	return soaprfc.Credentials{User: c.User, Password: c.Password}
}

func adtCred(c connector.Credentials) adt.Credentials {
	return adt.Credentials{User: c.User, Password: c.Password}
}

// protoErr turns the clients' typed errors into the protocol's *sap.Error; the clients never
// put a password into a message.
func protoErr(err error) error {
	var se *soaprfc.Error
	if errors.As(err, &se) {
		return &sap.Error{Status: se.Status, ErrorDetail: se.Detail()}
	}
	var ae *adt.Error
	if errors.As(err, &ae) {
		return ae.Protocol()
	}
	return err
}

func badRequest(format string, args ...any) *sap.Error {
	return &sap.Error{Status: http.StatusBadRequest, ErrorDetail: sap.ErrorDetail{Code: sap.ErrBadRequest, Message: fmt.Sprintf(format, args...)}}
}
