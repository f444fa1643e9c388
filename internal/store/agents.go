package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DefaultWorkspaceID is the workspace agents belong to until tenancy assigns real ones.
var DefaultWorkspaceID = uuid.MustParse("00000000-0000-0000-0000-000000000001")

// Agent is one conversation.
type Agent struct {
	ID          uuid.UUID `json:"id"`
	WorkspaceID uuid.UUID `json:"workspace_id"`
	Name        string    `json:"name"`
	Title       string    `json:"title"`
	Model       string    `json:"model"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

const agentColumns = `id, workspace_id, name, title, model, status, created_at, updated_at`

func scanAgent(row pgx.Row) (Agent, error) {
	var a Agent
	err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Title, &a.Model, &a.Status, &a.CreatedAt, &a.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, ErrNotFound
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

// CreateAgent inserts an agent inside tx, so the caller can roll back when starting its
// workflow fails (no agent row without a conversation behind it).
func CreateAgent(ctx context.Context, tx pgx.Tx, a Agent) (Agent, error) {
	return scanAgent(tx.QueryRow(ctx,
		`INSERT INTO agents (id, workspace_id, name, model) VALUES ($1, $2, $3, $4) RETURNING `+agentColumns,
		a.ID, a.WorkspaceID, a.Name, a.Model))
}

// GetAgent loads one agent.
func (s *Store) GetAgent(ctx context.Context, id uuid.UUID) (Agent, error) {
	return scanAgent(s.Pool.QueryRow(ctx, `SELECT `+agentColumns+` FROM agents WHERE id = $1`, id))
}

// SetAgentStatus records the conversation's lifecycle state (idle, active, waiting).
func (s *Store) SetAgentStatus(ctx context.Context, id uuid.UUID, status string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE agents SET status = $2, updated_at = now() WHERE id = $1 AND status <> $2`, id, status)
	return err
}
