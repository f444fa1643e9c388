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
	Landscape *sapsim.Landscape // connections without a connector URL use this simulated landscape
}

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
	api, err := r.Connector(c.SystemType, c.ConnectorURL, sap.Target{URL: c.ConnectorURL, ConnectorKey: key, SAPUser: ac.SAPUser, SAPPassword: password})
	if err != nil {
		return Conn{}, fmt.Errorf("connection %s: %w", c.Name, err)
	}
	return Conn{ID: c.ID.String(), Name: c.Name, SystemType: c.SystemType, API: api}, nil
}

// Connector reaches a system: the remote connector at url, or the simulated system of the
// same type when url is empty (the connector key is then the simulator's own).
func (r *Resolver) Connector(systemType, url string, t sap.Target) (sap.Connector, error) {
	if url != "" {
		if r.Client == nil {
			return nil, errors.New("no connector client configured")
		}
		return r.Client.Connector(t), nil
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
