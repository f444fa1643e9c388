package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SecretName is a stored connection secret without its value (values are write-only).
// Invalidated: the connector URL changed to another origin since it was entered; it is never
// sent and must be entered again (InvalidatedReason says why).
type SecretName struct {
	Name              string    `json:"name"`
	UpdatedAt         time.Time `json:"updated_at"`
	Invalidated       bool      `json:"invalidated"`
	InvalidatedReason string    `json:"invalidated_reason,omitempty"`
}

// SealedValue is an encrypted value with the key that sealed it.
type SealedValue struct {
	KeyID      string
	Ciphertext []byte
}

// SetConnectionSecret stores (or replaces) an encrypted secret, bound to the connection's
// current connector origin: it is sent only there.
func (s *Connections) SetConnectionSecret(ctx context.Context, connID uuid.UUID, name string, v SealedValue) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO connection_secrets (connection_id, name, key_id, ciphertext, origin)
		SELECT id, $2, $3, $4, connector_origin(connector_url) FROM workspace_connections WHERE id = $1
		ON CONFLICT (connection_id, name) DO UPDATE SET key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext,
			origin = EXCLUDED.origin, invalidated_reason = NULL, updated_at = now()`,
		connID, name, v.KeyID, v.Ciphertext)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return err
}

// ListConnectionSecretNames lists the names of a connection's secrets.
func (s *Connections) ListConnectionSecretNames(ctx context.Context, connID uuid.UUID) ([]SecretName, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, updated_at, coalesce(invalidated_reason, '') FROM connection_secrets WHERE connection_id = $1 ORDER BY name`, connID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SecretName, error) {
		var n SecretName
		err := r.Scan(&n.Name, &n.UpdatedAt, &n.InvalidatedReason)
		n.UpdatedAt = n.UpdatedAt.UTC()
		n.Invalidated = n.InvalidatedReason != ""
		return n, err
	})
}

// DeleteConnectionSecret removes one secret.
func (s *Connections) DeleteConnectionSecret(ctx context.Context, connID uuid.UUID, name string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM connection_secrets WHERE connection_id = $1 AND name = $2`, connID, name)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return err
}

// Credential is a user's SAP login for a connection, without the password. Invalidated: the
// connection's connector URL changed to another origin since it was entered; the password was
// wiped and must be entered again (InvalidatedReason says why).
type Credential struct {
	ConnectionID      uuid.UUID `json:"connection_id"`
	ConnectionName    string    `json:"connection_name"`
	WorkspaceID       uuid.UUID `json:"workspace_id"`
	SAPUser           string    `json:"sap_user"`
	UpdatedAt         time.Time `json:"updated_at"`
	Invalidated       bool      `json:"invalidated"`
	InvalidatedReason string    `json:"invalidated_reason,omitempty"`
}

// SetCredential stores the user's encrypted SAP password for a connection of a workspace
// they can see; ErrNotFound when the connection is not visible to them.
func (s *Connections) SetCredential(ctx context.Context, user string, connID uuid.UUID, sapUser string, v SealedValue) (Credential, error) {
	var c Credential
	err := s.pool.QueryRow(ctx, `WITH visible AS (
			SELECT c.id, c.name, c.workspace_id, connector_origin(c.connector_url) AS origin FROM workspace_connections c
			WHERE c.id = $1 AND `+canSee("c.workspace_id")+`),
		saved AS (
			INSERT INTO user_connection_credentials (user_id, connection_id, sap_user, key_id, password_ciphertext, origin)
			SELECT $2, id, $3, $4, $5, origin FROM visible
			ON CONFLICT (user_id, connection_id) DO UPDATE SET sap_user = EXCLUDED.sap_user, key_id = EXCLUDED.key_id,
				password_ciphertext = EXCLUDED.password_ciphertext, origin = EXCLUDED.origin, invalidated_reason = NULL, updated_at = now()
			RETURNING connection_id, sap_user, updated_at)
		SELECT s.connection_id, v.name, v.workspace_id, s.sap_user, s.updated_at FROM saved s JOIN visible v ON v.id = s.connection_id`,
		connID, user, sapUser, v.KeyID, v.Ciphertext).Scan(&c.ConnectionID, &c.ConnectionName, &c.WorkspaceID, &c.SAPUser, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, ErrNotFound
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return c, err
}

// ListCredentials lists the user's stored SAP logins (never passwords).
func (s *Connections) ListCredentials(ctx context.Context, user string) ([]Credential, error) {
	rows, err := s.pool.Query(ctx, `SELECT u.connection_id, c.name, c.workspace_id, u.sap_user, u.updated_at, coalesce(u.invalidated_reason, '')
		FROM user_connection_credentials u JOIN workspace_connections c ON c.id = u.connection_id
		WHERE u.user_id = $1 ORDER BY c.name`, user)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Credential, error) {
		var c Credential
		err := r.Scan(&c.ConnectionID, &c.ConnectionName, &c.WorkspaceID, &c.SAPUser, &c.UpdatedAt, &c.InvalidatedReason)
		c.UpdatedAt = c.UpdatedAt.UTC()
		c.Invalidated = c.InvalidatedReason != ""
		return c, err
	})
}

// DeleteCredential removes the user's login for a connection.
func (s *Connections) DeleteCredential(ctx context.Context, user string, connID uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM user_connection_credentials WHERE user_id = $1 AND connection_id = $2`, user, connID)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return err
}

// SealedRow is one encrypted value anywhere in the database, for key rotation.
type SealedRow struct {
	Table string // connection_secrets | user_connection_credentials
	Key1  string // connection_id | user_id
	Key2  string // name | connection_id
	Value SealedValue
}

// SealedRowsNotUnder lists every encrypted value not sealed with keyID.
func (s *Connections) SealedRowsNotUnder(ctx context.Context, keyID string) ([]SealedRow, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT 'connection_secrets', connection_id::text, name, key_id, ciphertext FROM connection_secrets WHERE key_id <> $1 AND invalidated_reason IS NULL
		UNION ALL
		SELECT 'user_connection_credentials', user_id, connection_id::text, key_id, password_ciphertext
		FROM user_connection_credentials WHERE key_id <> $1 AND invalidated_reason IS NULL`, keyID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SealedRow, error) {
		var x SealedRow
		err := r.Scan(&x.Table, &x.Key1, &x.Key2, &x.Value.KeyID, &x.Value.Ciphertext)
		return x, err
	})
}

// ReplaceSealed swaps a value for its re-encrypted form if it has not changed meanwhile.
func (s *Connections) ReplaceSealed(ctx context.Context, row SealedRow, next SealedValue) error {
	var sql string
	switch row.Table {
	case "connection_secrets":
		sql = `UPDATE connection_secrets SET key_id = $3, ciphertext = $4 WHERE connection_id = $1::uuid AND name = $2 AND ciphertext = $5`
	case "user_connection_credentials":
		sql = `UPDATE user_connection_credentials SET key_id = $3, password_ciphertext = $4 WHERE user_id = $1 AND connection_id = $2::uuid AND password_ciphertext = $5`
	default:
		return errors.New("unknown table " + row.Table)
	}
	_, err := s.pool.Exec(ctx, sql, row.Key1, row.Key2, next.KeyID, next.Ciphertext, row.Value.Ciphertext)
	return err
}

// ConnectionAccess is what a tool call needs to reach one connection as one user: the
// connection's sealed connector key and the user's SAP login, each absent when not stored.
// A key or login that was invalidated, or entered for another connector origin than the
// connection's current one, is never loaded: its Stale field says why instead.
type ConnectionAccess struct {
	Connection   Connection
	ConnectorKey *SealedValue
	SAPUser      string
	SAPPassword  *SealedValue
	// ConnectorKeyStale, SAPLoginStale: the value exists but may not be sent.
	ConnectorKeyStale bool
	SAPLoginStale     bool
}

// ConnectionAccessFor loads every connection of a workspace with its connector key and the
// user's credentials, in one query, ordered by name.
func (s *Connections) ConnectionAccessFor(ctx context.Context, workspaceID uuid.UUID, user string) ([]ConnectionAccess, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.id, c.workspace_id, c.name, c.system_type, c.connector_url, c.environment, c.simulated, c.credential_mode,
			c.created_at, c.updated_at,
			k.key_id, k.ciphertext, k.invalidated_reason IS NULL AND k.origin = connector_origin(c.connector_url),
			u.sap_user, u.key_id, u.password_ciphertext, u.invalidated_reason IS NULL AND u.origin = connector_origin(c.connector_url)
		FROM workspace_connections c
		LEFT JOIN connection_secrets k ON k.connection_id = c.id AND k.name = 'connector_key'
		LEFT JOIN user_connection_credentials u ON u.connection_id = c.id AND u.user_id = $2
		WHERE c.workspace_id = $1 ORDER BY c.name`, workspaceID, user)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConnectionAccess, error) {
		var a ConnectionAccess
		var keyID, userKeyID, sapUser *string
		var keyCT, pwCT []byte
		var keyValid, loginValid *bool
		c := &a.Connection
		err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.SystemType, &c.ConnectorURL, &c.Environment, &c.Simulated, &c.CredentialMode,
			&c.CreatedAt, &c.UpdatedAt, &keyID, &keyCT, &keyValid, &sapUser, &userKeyID, &pwCT, &loginValid)
		c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		if keyID != nil {
			if keyValid != nil && *keyValid {
				a.ConnectorKey = &SealedValue{KeyID: *keyID, Ciphertext: keyCT}
			} else {
				a.ConnectorKeyStale = true
			}
		}
		if sapUser != nil && userKeyID != nil {
			if loginValid != nil && *loginValid {
				a.SAPUser = *sapUser
				a.SAPPassword = &SealedValue{KeyID: *userKeyID, Ciphertext: pwCT}
			} else {
				a.SAPLoginStale = true
			}
		}
		return a, err
	})
}
