package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Conversations is the conversation aggregate: agents, their messages, summaries and the
// contents of queued messages.
type Conversations struct{ pool *pgxpool.Pool }

// Agent is one conversation.
type Agent struct {
	ID          uuid.UUID  `json:"id"`
	WorkspaceID uuid.UUID  `json:"workspace_id"`
	Name        string     `json:"name"`
	Title       string     `json:"title"`
	Model       string     `json:"model"`
	Status      string     `json:"status"`
	CreatedBy   string     `json:"created_by"`
	ArchivedAt  *time.Time `json:"archived_at"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

const agentColumns = `a.id, a.workspace_id, a.name, a.title, a.model, a.status, a.created_by, a.archived_at, a.created_at, a.updated_at`

func scanAgent(row pgx.Row) (Agent, error) {
	var a Agent
	err := row.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Title, &a.Model, &a.Status, &a.CreatedBy, &a.ArchivedAt, &a.CreatedAt, &a.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, ErrNotFound
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	if a.ArchivedAt != nil {
		t := a.ArchivedAt.UTC()
		a.ArchivedAt = &t
	}
	return a, err
}

// CreateAgent inserts an agent inside tx, so the caller can roll back when starting its
// workflow fails (no agent row without a conversation behind it).
func CreateAgent(ctx context.Context, tx pgx.Tx, a Agent) (Agent, error) {
	return scanAgent(tx.QueryRow(ctx,
		`INSERT INTO agents AS a (id, workspace_id, name, model, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING `+agentColumns,
		a.ID, a.WorkspaceID, a.Name, a.Model, a.CreatedBy))
}

// GetAgent loads one agent.
func (s *Conversations) GetAgent(ctx context.Context, id uuid.UUID) (Agent, error) {
	return scanAgent(s.pool.QueryRow(ctx, `SELECT `+agentColumns+` FROM agents a WHERE a.id = $1`, id))
}

// SetAgentStatus records the conversation's lifecycle state (idle, active, waiting).
func (s *Conversations) SetAgentStatus(ctx context.Context, id uuid.UUID, status string) error {
	_, err := s.pool.Exec(ctx, `UPDATE agents SET status = $2, updated_at = now() WHERE id = $1 AND status <> $2`, id, status)
	return err
}

var (
	visibleAgent      = canSee("a.workspace_id")
	memberOfWorkspace = canSee("$1")
)

// GetAgentFor loads an agent the user may see; ErrNotFound when it does not exist or is not visible.
func (s *Conversations) GetAgentFor(ctx context.Context, id uuid.UUID, user string) (Agent, error) {
	return scanAgent(s.pool.QueryRow(ctx, `SELECT `+agentColumns+` FROM agents a WHERE a.id = $1 AND `+visibleAgent, id, user))
}

// ListAgentsFor lists a workspace's agents the user may see, newest first; archived ones only
// when asked. The membership check is part of the query, so the common case is one round
// trip; an empty result does not tell "no agents" from "not a member" (check WorkspaceAccess).
func (s *Conversations) ListAgentsFor(ctx context.Context, workspaceID uuid.UUID, user string, archived bool, after *Cursor, limit int) ([]Agent, error) {
	t, id := cursorArgs(after)
	rows, err := s.pool.Query(ctx, `SELECT `+agentColumns+` FROM agents a WHERE a.workspace_id = $1
		AND (a.archived_at IS NOT NULL) = $3 AND (a.created_at, a.id) < ($4, $5) AND `+memberOfWorkspace+`
		ORDER BY a.created_at DESC, a.id DESC LIMIT $6`, workspaceID, user, archived, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Agent, error) { return scanAgent(r) })
}

// UpdateAgent renames and/or archives (true) or restores (false) an agent the user may see.
func (s *Conversations) UpdateAgent(ctx context.Context, id uuid.UUID, user string, name *string, archived *bool, model *string) (Agent, error) {
	return scanAgent(s.pool.QueryRow(ctx, `UPDATE agents a SET name = coalesce($3, a.name), model = coalesce($5, a.model),
		archived_at = CASE WHEN $4::boolean IS NULL THEN a.archived_at WHEN $4 THEN coalesce(a.archived_at, now()) ELSE NULL END,
		updated_at = now() WHERE a.id = $1 AND `+visibleAgent+` RETURNING `+agentColumns, id, user, name, archived, model))
}

// SetAgentTitle stores the generated title.
func (s *Conversations) SetAgentTitle(ctx context.Context, id uuid.UUID, title string) error {
	_, err := s.pool.Exec(ctx, `UPDATE agents SET title = $2, updated_at = now() WHERE id = $1`, id, CleanText(title))
	return err
}

// BusyAgentIDs lists the agents of these workspaces whose conversation is not idle: a running
// turn, queued messages or pending approvals live only there.
func (s *Conversations) BusyAgentIDs(ctx context.Context, workspaceIDs []uuid.UUID) ([]uuid.UUID, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM agents WHERE workspace_id = ANY($1) AND status <> 'idle' ORDER BY id`, workspaceIDs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
