package saptools

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

// Resolver turns stored connections into connectors for one user. Connector keys and SAP
// passwords are decrypted here, at the moment of use, and live only inside the connectors.
type Resolver struct {
	Store     *store.Store
	Keyring   *secrets.Keyring
	Client    *sap.Client       // remote connectors, through the URL guard
	Landscape *sapsim.Landscape // simulated connections use this simulated landscape
	// Production (ENVIRONMENT=production): only connections marked simulated reach the
	// simulator; one without a URL that is not is an error, never simulated data. In development
	// every connection without a URL is simulated.
	Production bool
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

// Connections resolves every connection of the workspace for user, ordered by name.
func (r *Resolver) Connections(ctx context.Context, workspaceID uuid.UUID, user string) ([]Conn, error) {
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
		conns = append(conns, c)
	}
	return conns, nil
}

func (r *Resolver) resolve(ac store.ConnectionAccess, user string) (Conn, error) {
	c := ac.Connection
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
	if errors.As(err, &noURL) {
		noURL.Connection = c.Name
		api = unconnected{err}
	} else if err != nil {
		return Conn{}, fmt.Errorf("connection %s: %w", c.Name, err)
	}
	return Conn{ID: c.ID.String(), Name: c.Name, SystemType: c.SystemType, API: api}, nil
}

// Connector reaches a system: the remote connector at t.URL, or the simulated system of the
// same type when there is no URL (the connector key is then the simulator's own) and the
// connection is simulated or this is not production (else *NoConnectorURLError).
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
	if r.Landscape == nil {
		return nil, errors.New("no connector URL and no simulator in this process")
	}
	sys, ok := r.Landscape.System(SimSystemID(systemType))
	if !ok {
		return nil, fmt.Errorf("no simulated %s system", systemType)
	}
	key := sapsim.ECCConnectorKey
	if systemType == "S4HANA" {
		key = sapsim.S4HConnectorKey
	}
	return InProcess{System: sys, Cred: sapsim.Credentials{ConnectorKey: key, User: t.SAPUser, Password: t.SAPPassword}}, nil
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
