package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Actions is the tool-use aggregate: tool policies, the action log, tool outputs, notes and
// ETL runs.
type Actions struct{ pool *pgxpool.Pool }

// DefaultToolPolicy applies until a user chooses one.
const DefaultToolPolicy = "run_reads_only"

// ToolPolicy returns the user's tool policy in a workspace (the default when unset).
func (s *Actions) ToolPolicy(ctx context.Context, workspaceID uuid.UUID, user string) (string, error) {
	var p string
	err := s.pool.QueryRow(ctx, `SELECT policy FROM tool_policies WHERE workspace_id = $1 AND user_id = $2`, workspaceID, user).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return DefaultToolPolicy, nil
	}
	return p, err
}

// SetToolPolicy stores the user's tool policy in a workspace and records a change in the
// audit log, in one transaction (members choose their own policy: the actor is the user).
func (s *Actions) SetToolPolicy(ctx context.Context, workspaceID uuid.UUID, user, policy string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		old := DefaultToolPolicy
		err := tx.QueryRow(ctx, `SELECT policy FROM tool_policies WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE`, workspaceID, user).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tool_policies (workspace_id, user_id, policy) VALUES ($1, $2, $3)
			ON CONFLICT (workspace_id, user_id) DO UPDATE SET policy = EXCLUDED.policy, updated_at = now()`, workspaceID, user, policy); err != nil {
			return err
		}
		if old == policy {
			return nil
		}
		return RecordAudit(ctx, tx, workspaceID, user, AuditMemberToolPolicy, user, map[string]string{"policy": old}, map[string]string{"policy": policy})
	})
}

// ToolRules is what decides a member's tool calls in a workspace: the policy they chose, the
// workspace's maximum and its four-eyes rule.
type ToolRules struct {
	Chosen   string
	Max      string
	FourEyes bool
}

// ToolRules loads a member's tool rules (the default policy when they chose none); ErrNotFound
// when the workspace is gone.
func (s *Actions) ToolRules(ctx context.Context, workspaceID uuid.UUID, user string) (ToolRules, error) {
	var r ToolRules
	err := s.pool.QueryRow(ctx, `SELECT coalesce(p.policy, $3), w.max_tool_policy, w.four_eyes FROM workspaces w
		LEFT JOIN tool_policies p ON p.workspace_id = w.id AND p.user_id = $2 WHERE w.id = $1`, workspaceID, user, DefaultToolPolicy).
		Scan(&r.Chosen, &r.Max, &r.FourEyes)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// Note is one of an agent's notes (the built-in tools' data).
type Note struct {
	ID        uuid.UUID `json:"id"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Draft     bool      `json:"draft"`
	CreatedAt time.Time `json:"created_at"`
}

// SaveNote stores a note idempotently (the ID comes from the tool call).
func (s *Actions) SaveNote(ctx context.Context, agentID uuid.UUID, n Note) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO agent_notes (id, agent_id, title, body, draft) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO NOTHING`, n.ID, agentID, CleanText(n.Title), CleanText(n.Body), n.Draft)
	return err
}

// ListNotes returns an agent's notes, newest first.
func (s *Actions) ListNotes(ctx context.Context, agentID uuid.UUID, limit int) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, title, body, draft, created_at FROM agent_notes WHERE agent_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, agentID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Note, error) {
		var n Note
		err := r.Scan(&n.ID, &n.Title, &n.Body, &n.Draft, &n.CreatedAt)
		n.CreatedAt = n.CreatedAt.UTC()
		return n, err
	})
}

// Action is one tool call in the action log (seed 003).
type Action struct {
	ID            uuid.UUID `json:"id"`
	AgentID       uuid.UUID `json:"agent_id"`
	WorkspaceID   uuid.UUID `json:"workspace_id"`
	UserID        string    `json:"user_id"`    // whose message led to the call (its SAP login)
	DecidedBy     string    `json:"decided_by"` // who approved it; "" when it needed no approval
	ToolCallID    string    `json:"tool_call_id"`
	Tool          string    `json:"tool"`
	Input         string    `json:"input"`
	OutputSummary string    `json:"output_summary"`
	DurationMS    int       `json:"duration_ms"`
	Success       bool      `json:"success"`
	Error         string    `json:"error"`
	CreatedAt     time.Time `json:"created_at"`
}

// LogAction records a tool call; a retried activity logging the same call again keeps one row.
func (s *Actions) LogAction(ctx context.Context, a Action) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO tool_actions (id, agent_id, workspace_id, user_id, tool_call_id, tool, input,
		output_summary, duration_ms, success, error, decided_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (agent_id, tool_call_id) DO UPDATE SET output_summary = EXCLUDED.output_summary,
		duration_ms = EXCLUDED.duration_ms, success = EXCLUDED.success, error = EXCLUDED.error`,
		uuid.New(), a.AgentID, a.WorkspaceID, a.UserID, CleanText(a.ToolCallID), CleanText(a.Tool), CleanText(a.Input),
		CleanText(a.OutputSummary), a.DurationMS, a.Success, CleanText(a.Error), a.DecidedBy)
	return err
}

// ActionFilter narrows an action listing.
type ActionFilter struct {
	WorkspaceID uuid.UUID
	AgentID     *uuid.UUID
	Tool        string
	UserID      string
	Success     *bool
}

// ListActions lists actions newest first.
func (s *Actions) ListActions(ctx context.Context, f ActionFilter, after *Cursor, limit int) ([]Action, error) {
	t, id := cursorArgs(after)
	rows, err := s.pool.Query(ctx, `SELECT id, agent_id, workspace_id, user_id, decided_by, tool_call_id, tool, input, output_summary,
		duration_ms, success, error, created_at FROM tool_actions
		WHERE workspace_id = $1 AND ($2::uuid IS NULL OR agent_id = $2) AND ($3 = '' OR tool = $3)
		  AND ($4 = '' OR user_id = $4) AND ($5::boolean IS NULL OR success = $5) AND (created_at, id) < ($6, $7)
		ORDER BY created_at DESC, id DESC LIMIT $8`, f.WorkspaceID, f.AgentID, f.Tool, f.UserID, f.Success, t, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Action, error) {
		var a Action
		err := r.Scan(&a.ID, &a.AgentID, &a.WorkspaceID, &a.UserID, &a.DecidedBy, &a.ToolCallID, &a.Tool, &a.Input, &a.OutputSummary,
			&a.DurationMS, &a.Success, &a.Error, &a.CreatedAt)
		a.CreatedAt = a.CreatedAt.UTC()
		return a, err
	})
}

// SaveToolOutput stores a large tool output (idempotent per call).
func (s *Actions) SaveToolOutput(ctx context.Context, agentID uuid.UUID, toolCallID, content string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO tool_outputs (agent_id, tool_call_id, content, size_bytes) VALUES ($1, $2, $3, $4)
		ON CONFLICT (agent_id, tool_call_id) DO UPDATE SET content = EXCLUDED.content, size_bytes = EXCLUDED.size_bytes`,
		agentID, toolCallID, CleanText(content), len(content))
	return err
}

// ToolOutput is one call's stored output (ErrNotFound when the call stored none).
func (s *Actions) ToolOutput(ctx context.Context, agentID uuid.UUID, toolCallID string) (string, error) {
	var content string
	err := s.pool.QueryRow(ctx, `SELECT content FROM tool_outputs WHERE agent_id = $1 AND tool_call_id = $2`,
		agentID, toolCallID).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return content, err
}

// ToolOutputs loads stored outputs of up to maxBytes each, by tool call ID.
func (s *Actions) ToolOutputs(ctx context.Context, agentID uuid.UUID, toolCallIDs []string, maxBytes int) (map[string]string, error) {
	out := map[string]string{}
	if len(toolCallIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT tool_call_id, content FROM tool_outputs
		WHERE agent_id = $1 AND tool_call_id = ANY($2) AND size_bytes <= $3`, agentID, toolCallIDs, maxBytes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, content string
		if err := rows.Scan(&id, &content); err != nil {
			return nil, err
		}
		out[id] = content
	}
	return out, rows.Err()
}
