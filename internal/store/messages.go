package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Message is one row of a conversation's transcript, ordered by Seq.
type Message struct {
	ID               uuid.UUID       `json:"id"`
	AgentID          uuid.UUID       `json:"agent_id"`
	Seq              int64           `json:"seq"`
	Role             string          `json:"role"`
	Content          string          `json:"content"`
	Status           string          `json:"status"`
	Model            string          `json:"model,omitempty"`
	PromptTokens     int             `json:"prompt_tokens,omitempty"`
	CompletionTokens int             `json:"completion_tokens,omitempty"`
	Parts            json.RawMessage `json:"parts"`                  // structured content: text, tool_call, tool_result
	ToolCallID       string          `json:"tool_call_id,omitempty"` // role tool: the call it answers
	CreatedAt        time.Time       `json:"created_at"`
}

// SaveMessage writes a message idempotently: an activity retry that saves the same ID again
// returns the row already stored instead of a second copy.
func (s *Store) SaveMessage(ctx context.Context, m Message) (Message, error) {
	m = withDefaults(m)
	row := s.Pool.QueryRow(ctx, insertMessage+` RETURNING `+messageColumns,
		m.ID, m.AgentID, m.Seq, m.Role, m.Content, m.Status, m.Model, m.PromptTokens, m.CompletionTokens, m.Parts, m.ToolCallID)
	return scanMessage(row)
}

const insertMessage = `INSERT INTO messages (id, agent_id, seq, role, content, status, model, prompt_tokens, completion_tokens, parts, tool_call_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id`

func withDefaults(m Message) Message {
	if m.Status == "" {
		m.Status = "complete"
	}
	if len(m.Parts) == 0 {
		m.Parts = json.RawMessage(`[]`)
	}
	return m
}

// SaveMessages writes several messages in one round trip (a step's tool results), idempotently.
func (s *Store) SaveMessages(ctx context.Context, msgs []Message) error {
	batch := &pgx.Batch{}
	for _, m := range msgs {
		m = withDefaults(m)
		batch.Queue(insertMessage, m.ID, m.AgentID, m.Seq, m.Role, m.Content, m.Status, m.Model, m.PromptTokens, m.CompletionTokens, m.Parts, m.ToolCallID)
	}
	return s.Pool.SendBatch(ctx, batch).Close()
}

const messageColumns = `id, agent_id, seq, role, content, status, model, prompt_tokens, completion_tokens, parts, tool_call_id, created_at`

func scanMessage(row pgx.Row) (Message, error) {
	var m Message
	err := row.Scan(&m.ID, &m.AgentID, &m.Seq, &m.Role, &m.Content, &m.Status, &m.Model,
		&m.PromptTokens, &m.CompletionTokens, &m.Parts, &m.ToolCallID, &m.CreatedAt)
	m.CreatedAt = m.CreatedAt.UTC()
	return m, err
}

// ListMessages returns an agent's messages with seq > afterSeq in seq order, at most limit.
func (s *Store) ListMessages(ctx context.Context, agentID uuid.UUID, afterSeq int64, limit int) ([]Message, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE agent_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, agentID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// LastMessageSeq is the highest seq stored for an agent (0 when it has none); a new workflow
// run continues numbering from it.
func (s *Store) LastMessageSeq(ctx context.Context, agentID uuid.UUID) (int64, error) {
	var seq int64
	err := s.Pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE agent_id = $1`, agentID).Scan(&seq)
	return seq, err
}
