package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Connection is one named SAP system of a workspace.
type Connection struct {
	ID           uuid.UUID `json:"id"`
	WorkspaceID  uuid.UUID `json:"workspace_id"`
	Name         string    `json:"name"`
	SystemType   string    `json:"system_type"`
	ConnectorURL string    `json:"connector_url"`
	Environment  string    `json:"environment"`
	// Simulated: the built-in simulated SAP system answers (the connection has no URL).
	Simulated bool      `json:"simulated"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

const connectionColumns = `id, workspace_id, name, system_type, connector_url, environment, simulated, created_at, updated_at`

func scanConnection(r pgx.Row) (Connection, error) {
	var c Connection
	err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.SystemType, &c.ConnectorURL, &c.Environment, &c.Simulated, &c.CreatedAt, &c.UpdatedAt)
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
func (s *Store) CreateConnection(ctx context.Context, c Connection) (Connection, error) {
	return scanConnection(s.Pool.QueryRow(ctx, `INSERT INTO workspace_connections
		(id, workspace_id, name, system_type, connector_url, environment, simulated) VALUES ($1, $2, $3, $4, $5, $6, $7)
		RETURNING `+connectionColumns, uuid.New(), c.WorkspaceID, c.Name, c.SystemType, c.ConnectorURL, c.Environment, c.Simulated))
}

// GetConnection loads a connection of the given workspace.
func (s *Store) GetConnection(ctx context.Context, workspaceID, id uuid.UUID) (Connection, error) {
	return scanConnection(s.Pool.QueryRow(ctx, `SELECT `+connectionColumns+` FROM workspace_connections
		WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
}

// ListConnections lists a workspace's connections by name.
func (s *Store) ListConnections(ctx context.Context, workspaceID uuid.UUID) ([]Connection, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+connectionColumns+` FROM workspace_connections WHERE workspace_id = $1 ORDER BY name`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Connection, error) { return scanConnection(r) })
}

// UpdateConnection replaces a connection's editable fields.
func (s *Store) UpdateConnection(ctx context.Context, c Connection) (Connection, error) {
	return scanConnection(s.Pool.QueryRow(ctx, `UPDATE workspace_connections SET name = $3, system_type = $4,
		connector_url = $5, environment = $6, simulated = $7, updated_at = now() WHERE id = $1 AND workspace_id = $2 RETURNING `+connectionColumns,
		c.ID, c.WorkspaceID, c.Name, c.SystemType, c.ConnectorURL, c.Environment, c.Simulated))
}

// DeleteConnection removes a connection with its secrets and credentials.
func (s *Store) DeleteConnection(ctx context.Context, workspaceID, id uuid.UUID) error {
	tag, err := s.Pool.Exec(ctx, `DELETE FROM workspace_connections WHERE id = $1 AND workspace_id = $2`, id, workspaceID)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return err
}
