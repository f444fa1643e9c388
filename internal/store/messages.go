package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
func (s *Conversations) SaveMessage(ctx context.Context, m Message) (Message, error) {
	m = withDefaults(m)
	row := s.pool.QueryRow(ctx, insertMessage+` RETURNING `+messageColumns,
		m.ID, m.AgentID, m.Seq, m.Role, m.Content, m.Status, m.Model, m.PromptTokens, m.CompletionTokens, m.Parts, m.ToolCallID)
	return scanMessage(row)
}

const insertMessage = `INSERT INTO messages (id, agent_id, seq, role, content, status, model, prompt_tokens, completion_tokens, parts, tool_call_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id`

// withDefaults also makes the row's text storable (CleanText): a transcript row is written once,
// whatever a model or a tool put into it.
func withDefaults(m Message) Message {
	m.Content, m.Model, m.ToolCallID = CleanText(m.Content), CleanText(m.Model), CleanText(m.ToolCallID)
	m.Parts = CleanJSON(m.Parts)
	if m.Status == "" {
		m.Status = "complete"
	}
	if len(m.Parts) == 0 {
		m.Parts = json.RawMessage(`[]`)
	}
	return m
}

// SaveMessages writes several messages in one round trip (a step's tool results), idempotently.
func (s *Conversations) SaveMessages(ctx context.Context, msgs []Message) error {
	batch := &pgx.Batch{}
	for _, m := range msgs {
		m = withDefaults(m)
		batch.Queue(insertMessage, m.ID, m.AgentID, m.Seq, m.Role, m.Content, m.Status, m.Model, m.PromptTokens, m.CompletionTokens, m.Parts, m.ToolCallID)
	}
	return s.pool.SendBatch(ctx, batch).Close()
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
func (s *Conversations) ListMessages(ctx context.Context, agentID uuid.UUID, afterSeq int64, limit int) ([]Message, error) {
	return s.queryMessages(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE agent_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, agentID, afterSeq, limit)
}

// ListMessagesBefore is the newest limit messages with seq < beforeSeq, in seq order: a page of
// older history for a client that scrolls back from its init snapshot.
func (s *Conversations) ListMessagesBefore(ctx context.Context, agentID uuid.UUID, beforeSeq int64, limit int) ([]Message, error) {
	return s.queryMessages(ctx, `SELECT * FROM (SELECT `+messageColumns+` FROM messages
		WHERE agent_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3) page ORDER BY seq`, agentID, beforeSeq, limit)
}

// queryMessages runs a query that selects messageColumns.
func (s *Conversations) queryMessages(ctx context.Context, sql string, args ...any) ([]Message, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) { return scanMessage(r) })
	if out == nil {
		out = []Message{}
	}
	return out, err
}

// LastMessageSeq is the highest seq stored for an agent (0 when it has none); a new workflow
// run continues numbering from it.
func (s *Conversations) LastMessageSeq(ctx context.Context, agentID uuid.UUID) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE agent_id = $1`, agentID).Scan(&seq)
	return seq, err
}

// ErrParkedMessageMissing means a parked message is neither parked nor stored: its content is
// gone (the agent was deleted), so no retry can record it.
var ErrParkedMessageMissing = errors.New("the queued message's parked content is missing")

// ErrMessageIDTaken means another conversation already has a message with this ID.
var ErrMessageIDTaken = errors.New("the message ID is already used by another conversation")

// UserTurn is a user message to record at the start of its turn.
type UserTurn struct {
	ID      uuid.UUID
	AgentID uuid.UUID
	Seq     int64 // proposed seq: the workflow's next number
	Content string
	Parked  bool // the content is in parked_messages
	// Parts are the message's structured parts (attachments: {"type":"file",…}); nil: none.
	Parts json.RawMessage
}

// RecordUserMessage stores a user message and marks the agent active in one transaction, so a
// failure leaves nothing behind. It returns the stored row and whether the message was already
// answered by an earlier run (stored below the proposed seq): a re-sent message is recorded once.
// If the proposed seq is taken by another row the message goes after the last one, so a
// numbering mismatch can never wedge the conversation.
func (s *Conversations) RecordUserMessage(ctx context.Context, m UserTurn) (saved Message, duplicate bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		saved, err = scanMessage(tx.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = $1 AND agent_id = $2`, m.ID, m.AgentID))
		if err == nil {
			// Stored by an earlier attempt of this turn (at or after the proposed seq), or by an
			// earlier run (before it).
			duplicate = saved.Seq < m.Seq
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		content := m.Content
		if m.Parked {
			err := tx.QueryRow(ctx, `DELETE FROM parked_messages WHERE id = $1 AND agent_id = $2 RETURNING content`, m.ID, m.AgentID).Scan(&content)
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrParkedMessageMissing
			}
			if err != nil {
				return err
			}
		}
		var last int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE agent_id = $1`, m.AgentID).Scan(&last); err != nil {
			return err
		}
		seq := max(m.Seq, last+1)
		row := withDefaults(Message{ID: m.ID, AgentID: m.AgentID, Seq: seq, Role: "user", Content: content, Parts: m.Parts})
		// A plain insert: an ID taken by another conversation's message must fail, never return
		// that message.
		saved, err = scanMessage(tx.QueryRow(ctx, `INSERT INTO messages (id, agent_id, seq, role, content, status, parts)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+messageColumns,
			row.ID, row.AgentID, row.Seq, row.Role, row.Content, row.Status, row.Parts))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return ErrMessageIDTaken
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE agents SET status = 'active', updated_at = now() WHERE id = $1 AND status <> 'active'`, m.AgentID)
		return err
	})
	return saved, duplicate, err
}

// ParkMessage keeps a queued message's content until its turn starts in the next run.
func (s *Conversations) ParkMessage(ctx context.Context, id, agentID uuid.UUID, userID, content string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO parked_messages (id, agent_id, user_id, content) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO NOTHING`, id, agentID, userID, CleanText(content))
	return err
}

// DropParkedMessages deletes the parked contents of queued messages that will never run.
func (s *Conversations) DropParkedMessages(ctx context.Context, agentID uuid.UUID, ids []uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM parked_messages WHERE agent_id = $1 AND id = ANY($2)`, agentID, ids)
	return err
}
