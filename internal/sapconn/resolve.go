package sapconn

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

// Resolver turns stored connections into connectors for one user. Connector keys and SAP
// passwords are decrypted here, at the moment of use, and live only inside the connectors.
type Resolver struct {
	Store   accessStore
	Keyring *secrets.Keyring
	Client  *sap.Client // remote connectors, through the URL guard
	// Simulated answers for simulated connections (nil: none in this process, so they fail
	// with a clear error).
	Simulated SimulatedSystems
	// Production (ENVIRONMENT=production): only connections marked simulated reach the
	// simulator; one without a URL that is not is an error, never simulated data. In development
	// every connection without a URL is simulated.
	Production bool
}

// accessStore is what resolving reads: a workspace's connections with their sealed keys and the
// user's own logins, and whether the user may use the workspace now.
type accessStore interface {
	ConnectionAccessFor(ctx context.Context, workspaceID uuid.UUID, user string) ([]store.ConnectionAccess, error)
	CanUseWorkspace(ctx context.Context, workspaceID uuid.UUID, user string) (bool, error)
}

// NoConnectorURLError is a connection that has no connector URL and may not be simulated
// (production): nothing can answer for it until an admin sets the URL.
type NoConnectorURLError struct{ Connection string }

func (e *NoConnectorURLError) Error() string {
	name := e.Connection
	if name == "" {
		name = "this connection"
	}
	return fmt.Sprintf("connection %s has no connector URL, so no SAP system answers for it (nothing was read or changed); "+
		"a workspace admin must set its connector_url, or mark it \"simulated\": true to use the built-in simulated system", name)
}

// unconnected is the connector of a connection that cannot be reached: every call fails with
// err, so tools on the workspace's other connections still work.
type unconnected struct{ err error }

func (u unconnected) Call(context.Context, string, any, any) error { return u.err }

// Connections resolves every connection of the workspace for user, ordered by name. Only a
// user who may use the workspace gets them (else *IdentityError not_a_member), and each call
// through them checks that again when it is made: a script still running for a member removed
// meanwhile sends nothing more in her name.
func (r *Resolver) Connections(ctx context.Context, workspaceID uuid.UUID, user string) ([]Conn, error) {
	member := func(ctx context.Context) error { return r.checkMember(ctx, workspaceID, user) }
	if err := member(ctx); err != nil {
		return nil, err
	}
	access, err := r.Store.ConnectionAccessFor(ctx, workspaceID, user)
	if err != nil {
		return nil, fmt.Errorf("load connections: %w", err)
	}
	conns := make([]Conn, 0, len(access))
	for _, ac := range access {
		c, err := r.resolve(ac, user)
		if err != nil {
			return nil, err
		}
		c.API = memberOnly{api: c.API, check: member}
		conns = append(conns, c)
	}
	return conns, nil
}

// checkMember refuses a user who may no longer use the workspace (removed from it or from its
// organization).
func (r *Resolver) checkMember(ctx context.Context, workspaceID uuid.UUID, user string) error {
	ok, err := r.Store.CanUseWorkspace(ctx, workspaceID, user)
	if err != nil {
		return fmt.Errorf("check membership: %w", err)
	}
	if !ok {
		return &IdentityError{Code: "not_a_member", Message: "you are no longer a member of this workspace, so nothing is sent to its SAP systems in your name (nothing was read or changed)"}
	}
	return nil
}

// memberOnly checks membership before every call it passes on.
type memberOnly struct {
	api   sap.Connector
	check func(context.Context) error
}

func (m memberOnly) Call(ctx context.Context, endpoint string, req, resp any) error {
	if err := m.check(ctx); err != nil {
		return err
	}
	return m.api.Call(ctx, endpoint, req, resp)
}

func (r *Resolver) resolve(ac store.ConnectionAccess, user string) (Conn, error) {
	c := ac.Connection
	conn := Conn{ID: c.ID.String(), Name: c.Name, SystemType: c.SystemType}
	key, err := r.open(ac.ConnectorKey, secrets.ConnectionSecretAAD(c.ID.String(), "connector_key"))
	if err != nil {
		return Conn{}, fmt.Errorf("connection %s: the connector key cannot be decrypted (was SECRETS_KEY changed without SECRETS_OLD_KEYS?)", c.Name)
	}
	password, err := r.open(ac.SAPPassword, secrets.CredentialAAD(user, c.ID.String()))
	if err != nil {
		return Conn{}, fmt.Errorf("connection %s: your SAP password cannot be decrypted; store it again", c.Name)
	}
	api, err := r.Connector(c.SystemType, c.Simulated, sap.Target{URL: c.ConnectorURL, ConnectorKey: key, SAPUser: ac.SAPUser, SAPPassword: password})
	var noURL *NoConnectorURLError
	switch {
	case errors.As(err, &noURL): // nothing answers for it at all: say that first
		noURL.Connection = c.Name
		api = unconnected{err}
	case err != nil:
		return Conn{}, fmt.Errorf("connection %s: %w", c.Name, err)
	default:
		if refused := r.identityRefusal(ac); refused != nil {
			api = unconnected{refused}
		}
	}
	if _, refused := api.(unconnected); !refused && ac.SAPPassword == nil && technicalMode(c.CredentialMode, r.Production) == store.CredentialTechnicalUserReads {
		api = readsOnly{api: api, connection: c.Name, connID: c.ID.String()}
	}
	conn.API = api
	return conn, nil
}

// identityRefusal is why nothing may be sent for this connection and user, or nil: a connector
// key or login entered for another connector address (never sent to the new one), or no login
// of the user's own where the connection requires one. A missing or stale login never falls
// back to the technical user beyond what the connection allows every member.
func (r *Resolver) identityRefusal(ac store.ConnectionAccess) error {
	c := ac.Connection
	switch {
	case ac.ConnectorKeyStale:
		return &IdentityError{Code: "connector_key_invalidated", Message: fmt.Sprintf("connection %s: its connector key was entered for another connector address "+
			"and is never sent to the current one (nothing was read or changed); a workspace admin must re-enter the connector_key secret", c.Name)}
	case ac.SAPLoginStale:
		return &IdentityError{Code: "sap_login_invalidated", Message: fmt.Sprintf("connection %s: your SAP login was entered for another connector address "+
			"and is never sent to the current one (nothing was read or changed); re-enter your SAP login for connection %s (PUT /api/user/sap-credentials/%s)", c.Name, c.Name, c.ID)}
	case ac.SAPPassword == nil && technicalMode(c.CredentialMode, r.Production) == store.CredentialUserLoginRequired:
		return &IdentityError{Code: "sap_login_required", Message: fmt.Sprintf("connection %s requires each user's own SAP login and you have none stored "+
			"(nothing was read or changed); store your SAP login for connection %s (PUT /api/user/sap-credentials/%s) and ask again", c.Name, c.Name, c.ID)}
	}
	return nil
}

// technicalMode is what a member without a login may do: production never lets the technical
// user write, whatever an older row says.
func technicalMode(mode string, production bool) string {
	switch mode {
	case store.CredentialTechnicalUserAll:
		if production {
			return store.CredentialTechnicalUserReads
		}
		return mode
	case store.CredentialTechnicalUserReads:
		return mode
	}
	return store.CredentialUserLoginRequired
}

// IdentityError refuses a call before anything is sent: the SAP identity it would run as is
// not allowed. Code is the API's error code.
type IdentityError struct{ Code, Message string }

func (e *IdentityError) Error() string { return e.Message }

// readsOnly is the technical user serving a member without a login: endpoints that only read
// pass, execute_rfc only for function modules known to read; everything else (write_table,
// other function modules, commits, unknown endpoints) is refused before it is sent.
type readsOnly struct {
	api        sap.Connector
	connection string
	connID     string
}

var readEndpoints = map[string]bool{
	sap.EndpointSystemInfo: true, sap.EndpointProbeChanges: true, sap.EndpointTableSchema: true, sap.EndpointReadTable: true,
	sap.EndpointFunctionInterface: true, sap.EndpointSearchObjects: true, sap.EndpointABAPSource: true, sap.EndpointWhereUsed: true,
	sap.EndpointIndexCustomObjects: true, sap.EndpointIndexRelationships: true, sap.EndpointIndexCustomCode: true,
	sap.EndpointIndexCatalogContext: true, sap.EndpointIndexEnhancements: true,
}

func (r readsOnly) Call(ctx context.Context, endpoint string, req, resp any) error {
	what := endpoint
	allowed := readEndpoints[endpoint]
	if endpoint == sap.EndpointExecuteRFC {
		fn, commit := rfcOf(req)
		what = "execute_rfc of " + fn
		allowed = fn != "" && !commit && !sap.RFCWrites(fn)
	}
	if !allowed {
		return &IdentityError{Code: "sap_login_required", Message: fmt.Sprintf("connection %s lets the connector's technical user serve only reads for users without their own SAP login, "+
			"and %s may change data (nothing was sent); store your SAP login for connection %s (PUT /api/user/sap-credentials/%s) to write as yourself",
			r.connection, what, r.connection, r.connID)}
	}
	return r.api.Call(ctx, endpoint, req, resp)
}

// rfcOf reads the function module and commit flag of an execute_rfc request.
func rfcOf(req any) (string, bool) {
	switch q := req.(type) {
	case sap.ExecuteRFCRequest:
		return q.Function, q.Commit
	case *sap.ExecuteRFCRequest:
		if q != nil {
			return q.Function, q.Commit
		}
	}
	return "", false
}

// Connector reaches a system: the remote connector at t.URL, or the simulated system of the
// same type (r.Simulated) when there is no URL and the connection is simulated or this is not
// production (else *NoConnectorURLError).
func (r *Resolver) Connector(systemType string, simulated bool, t sap.Target) (sap.Connector, error) {
	if t.URL != "" {
		if r.Client == nil {
			return nil, errors.New("no connector client configured")
		}
		return r.Client.Connector(t), nil
	}
	if r.Production && !simulated {
		return nil, &NoConnectorURLError{}
	}
	if r.Simulated == nil {
		return nil, errors.New("this connection has no connector URL and this process reaches no SAP simulator: " +
			"set SIMULATOR_CONNECTOR_URL and SIMULATOR_CONNECTOR_KEY (a connector in front of sapagent-sapsim), or give the connection a connector_url")
	}
	return r.Simulated.Connector(systemType, t)
}

func (r *Resolver) open(v *store.SealedValue, aad []byte) (string, error) {
	if v == nil {
		return "", nil
	}
	if r.Keyring == nil {
		return "", errors.New("no keyring")
	}
	plain, err := r.Keyring.Open(v.KeyID, v.Ciphertext, aad)
	return string(plain), err
}

// Service reaches one connection as the connector's own technical user, for the background
// syncs of the SAP index (which an admin starts or schedules; no member's login is involved).
// store.ErrNotFound: the connection is not in the workspace (any more).
func (r *Resolver) Service(ctx context.Context, workspaceID, connectionID uuid.UUID) (Conn, error) {
	access, err := r.Store.ConnectionAccessFor(ctx, workspaceID, "")
	if err != nil {
		return Conn{}, fmt.Errorf("load connections: %w", err)
	}
	for _, ac := range access {
		if ac.Connection.ID != connectionID {
			continue
		}
		c := ac.Connection
		if ac.ConnectorKeyStale {
			return Conn{}, &IdentityError{Code: "connector_key_invalidated", Message: fmt.Sprintf("connection %s: its connector key was entered for another connector address "+
				"and is never sent to the current one; a workspace admin must re-enter the connector_key secret", c.Name)}
		}
		key, err := r.open(ac.ConnectorKey, secrets.ConnectionSecretAAD(c.ID.String(), "connector_key"))
		if err != nil {
			return Conn{}, fmt.Errorf("connection %s: the connector key cannot be decrypted (was SECRETS_KEY changed without SECRETS_OLD_KEYS?)", c.Name)
		}
		api, err := r.Connector(c.SystemType, c.Simulated, sap.Target{URL: c.ConnectorURL, ConnectorKey: key})
		if err != nil {
			return Conn{}, fmt.Errorf("connection %s: %w", c.Name, err)
		}
		return Conn{ID: c.ID.String(), Name: c.Name, SystemType: c.SystemType, API: api}, nil
	}
	return Conn{}, store.ErrNotFound
}
