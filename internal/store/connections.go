package store

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connections is the connection aggregate: a workspace's SAP connections, their sealed secrets
// and each user's own SAP credentials.
type Connections struct{ pool *pgxpool.Pool }

// Connection is one named SAP system of a workspace.
type Connection struct {
	ID           uuid.UUID `json:"id"`
	WorkspaceID  uuid.UUID `json:"workspace_id"`
	Name         string    `json:"name"`
	SystemType   string    `json:"system_type"`
	ConnectorURL string    `json:"connector_url"`
	Environment  string    `json:"environment"`
	// Simulated: the built-in simulated SAP system answers (the connection has no URL).
	Simulated bool `json:"simulated"`
	// CredentialMode: whether members without their own SAP login may use the connector's
	// technical user (CredentialUserLoginRequired, CredentialTechnicalUserReads,
	// CredentialTechnicalUserAll). Empty when creating means CredentialUserLoginRequired.
	CredentialMode string `json:"credential_mode"`
	// When the connection's SAP index syncs (internal/syncschedule): cron expressions of the
	// weekly full and the daily delta, in SyncTimeZone. Empty when creating means the defaults.
	SyncFullCron  string    `json:"sync_full_cron"`
	SyncDeltaCron string    `json:"sync_delta_cron"`
	SyncTimeZone  string    `json:"sync_timezone"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Credential modes of a connection.
const (
	CredentialUserLoginRequired  = "user_login_required"  // every call runs as the member's own SAP login
	CredentialTechnicalUserReads = "technical_user_reads" // members without a login read as the technical user
	CredentialTechnicalUserAll   = "technical_user_all"   // members without a login read and write as it (development only)
)

const connectionColumns = `id, workspace_id, name, system_type, connector_url, environment, simulated, credential_mode,
	sync_full_cron, sync_delta_cron, sync_timezone, created_at, updated_at`

// Default sync schedules of a new connection: a full sync on Sunday at 02:00, a delta every day at 03:00.
const (
	DefaultSyncFullCron  = "0 2 * * 0"
	DefaultSyncDeltaCron = "0 3 * * *"
	DefaultSyncTimeZone  = "UTC"
)

func scanConnection(r pgx.Row) (Connection, error) {
	var c Connection
	err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.SystemType, &c.ConnectorURL, &c.Environment, &c.Simulated, &c.CredentialMode,
		&c.SyncFullCron, &c.SyncDeltaCron, &c.SyncTimeZone, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, ErrNotFound
	}
	if isUniqueViolation(err) {
		return c, ErrConflict
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, err
}

// CreateConnection adds a connection; a duplicate name in the workspace is ErrConflict.
func (s *Connections) CreateConnection(ctx context.Context, c Connection) (Connection, error) {
	if c.CredentialMode == "" {
		c.CredentialMode = CredentialUserLoginRequired
	}
	c.SyncFullCron = cmp.Or(c.SyncFullCron, DefaultSyncFullCron)
	c.SyncDeltaCron = cmp.Or(c.SyncDeltaCron, DefaultSyncDeltaCron)
	c.SyncTimeZone = cmp.Or(c.SyncTimeZone, DefaultSyncTimeZone)
	return scanConnection(s.pool.QueryRow(ctx, `INSERT INTO workspace_connections
		(id, workspace_id, name, system_type, connector_url, environment, simulated, credential_mode, sync_full_cron, sync_delta_cron, sync_timezone)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		RETURNING `+connectionColumns, uuid.New(), c.WorkspaceID, c.Name, c.SystemType, c.ConnectorURL, c.Environment, c.Simulated, c.CredentialMode,
		c.SyncFullCron, c.SyncDeltaCron, c.SyncTimeZone))
}

// GetConnection loads a connection of the given workspace.
func (s *Connections) GetConnection(ctx context.Context, workspaceID, id uuid.UUID) (Connection, error) {
	return scanConnection(s.pool.QueryRow(ctx, `SELECT `+connectionColumns+` FROM workspace_connections
		WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
}

// ListConnections lists a workspace's connections by name.
func (s *Connections) ListConnections(ctx context.Context, workspaceID uuid.UUID) ([]Connection, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+connectionColumns+` FROM workspace_connections WHERE workspace_id = $1 ORDER BY name`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Connection, error) { return scanConnection(r) })
}

// ConnectionUpdate is the outcome of UpdateConnection: the connection, and how many stored
// secrets and member logins were invalidated because its connector origin changed.
type ConnectionUpdate struct {
	Connection
	InvalidatedSecrets     int64 `json:"invalidated_secrets"`
	InvalidatedCredentials int64 `json:"invalidated_credentials"`
}

// UpdateConnection replaces a connection's editable fields. When the connector origin
// (scheme://host[:port]) changes, in the same transaction, every secret and member login of
// the connection is invalidated: its ciphertext is wiped and the reason kept, so the new
// host can never receive what was entered for the old one, and members see why theirs must
// be entered again.
func (s *Connections) UpdateConnection(ctx context.Context, c Connection) (ConnectionUpdate, error) {
	var out ConnectionUpdate
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var oldOrigin string
		err := tx.QueryRow(ctx, `SELECT connector_origin(connector_url) FROM workspace_connections
			WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, c.ID, c.WorkspaceID).Scan(&oldOrigin)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		out.Connection, err = scanConnection(tx.QueryRow(ctx, `UPDATE workspace_connections SET name = $3, system_type = $4,
			connector_url = $5, environment = $6, simulated = $7, credential_mode = $8,
			sync_full_cron = COALESCE(NULLIF($9, ''), sync_full_cron), sync_delta_cron = COALESCE(NULLIF($10, ''), sync_delta_cron),
			sync_timezone = COALESCE(NULLIF($11, ''), sync_timezone), updated_at = now() WHERE id = $1 AND workspace_id = $2 RETURNING `+connectionColumns,
			c.ID, c.WorkspaceID, c.Name, c.SystemType, c.ConnectorURL, c.Environment, c.Simulated, c.CredentialMode, c.SyncFullCron, c.SyncDeltaCron, c.SyncTimeZone))
		if err != nil {
			return err
		}
		var newOrigin string
		if err := tx.QueryRow(ctx, `SELECT connector_origin($1)`, out.ConnectorURL).Scan(&newOrigin); err != nil {
			return err
		}
		if newOrigin == oldOrigin {
			return nil
		}
		reason := "the connection's connector_url changed to another address (" + originLabel(oldOrigin) + " → " + originLabel(newOrigin) +
			") on " + time.Now().UTC().Format(time.RFC3339) + "; values entered for the old address are never sent to the new one: enter it again"
		tag, err := tx.Exec(ctx, `UPDATE connection_secrets SET ciphertext = '', invalidated_reason = $2, updated_at = now()
			WHERE connection_id = $1 AND invalidated_reason IS NULL`, c.ID, reason)
		if err != nil {
			return err
		}
		out.InvalidatedSecrets = tag.RowsAffected()
		tag, err = tx.Exec(ctx, `UPDATE user_connection_credentials SET password_ciphertext = '', invalidated_reason = $2, updated_at = now()
			WHERE connection_id = $1 AND invalidated_reason IS NULL`, c.ID, reason)
		out.InvalidatedCredentials = tag.RowsAffected()
		return err
	})
	return out, err
}

// originLabel names an origin in a reason ("" is the built-in simulator).
func originLabel(origin string) string {
	if origin == "" {
		return "no URL"
	}
	return origin
}

// DeleteConnection removes a connection with its secrets and credentials.
//
// The delete cascades to the connection's SAP index. A sync page being written at that moment
// holds locks the cascade needs and needs the connection row the delete holds: Postgres breaks
// that deadlock by aborting one side, and when it is the delete, it is tried again (the page's
// writer finds the connection gone on its retry).
func (s *Connections) DeleteConnection(ctx context.Context, workspaceID, id uuid.UUID) error {
	for try := 0; ; try++ {
		tag, err := s.pool.Exec(ctx, `DELETE FROM workspace_connections WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
		var pg *pgconn.PgError
		if errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "40001") && try < 5 {
			continue // deadlock_detected, serialization_failure
		}
		if err == nil && tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		return err
	}
}
