package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RoleSummary is the role of a transcript row that summarises older turns (context compaction).
const RoleSummary = "summary"

// SummaryCoverage is what a summary row covers; it is stored as the row's only part,
// {"type":"summary","from_seq":F,"through_seq":N,"turns":T}.
type SummaryCoverage struct {
	// FromSeq is the first seq summarised in this pass (earlier rows are in the summary it extends).
	FromSeq int64 `json:"from_seq"`
	// ThroughSeq is the last seq the summary stands for: the model sees rows after it, not before.
	ThroughSeq int64 `json:"through_seq"`
	// Turns is how many turns this pass summarised.
	Turns int `json:"turns"`
}

type summaryPart struct {
	Type string `json:"type"`
	SummaryCoverage
}

// SummaryMessage builds the transcript row of a summary.
func SummaryMessage(id, agentID uuid.UUID, seq int64, text, model string, c SummaryCoverage) Message {
	parts, _ := json.Marshal([]summaryPart{{Type: "summary", SummaryCoverage: c}})
	return Message{ID: id, AgentID: agentID, Seq: seq, Role: RoleSummary, Content: text, Model: model, Parts: parts}
}

// Coverage reads a summary row's coverage; ok is false for any other row.
func (m Message) Coverage() (c SummaryCoverage, ok bool) {
	if m.Role != RoleSummary {
		return c, false
	}
	var parts []summaryPart
	if json.Unmarshal(m.Parts, &parts) != nil {
		return c, false
	}
	for _, p := range parts {
		if p.Type == "summary" {
			return p.SummaryCoverage, true
		}
	}
	return c, false
}

// ListRecentMessages returns an agent's newest limit messages in ascending seq order.
func (s *Conversations) ListRecentMessages(ctx context.Context, agentID uuid.UUID, limit int) ([]Message, error) {
	return s.ListRecentMessagesAfter(ctx, agentID, 0, limit)
}

// ListRecentMessagesAfter returns the newest limit messages with seq > afterSeq, in ascending seq
// order: the rows a model request needs after the latest summary's coverage.
func (s *Conversations) ListRecentMessagesAfter(ctx context.Context, agentID uuid.UUID, afterSeq int64, limit int) ([]Message, error) {
	return s.queryMessages(ctx, `SELECT `+messageColumns+` FROM (
		SELECT `+messageColumns+` FROM messages WHERE agent_id = $1 AND seq > $2 ORDER BY seq DESC LIMIT $3
	) newest ORDER BY seq`, agentID, afterSeq, limit)
}

// LatestSummary returns the agent's newest summary row, or ErrNotFound when it has none.
func (s *Conversations) LatestSummary(ctx context.Context, agentID uuid.UUID) (Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE agent_id = $1 AND role = 'summary' ORDER BY seq DESC LIMIT 1`, agentID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Message{}, ErrNotFound
	}
	return m, err
}

// GetMessage loads one message of an agent by ID, or ErrNotFound (a retried activity finds the
// row its first attempt stored).
func (s *Conversations) GetMessage(ctx context.Context, agentID, id uuid.UUID) (Message, error) {
	m, err := scanMessage(s.pool.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE agent_id = $1 AND id = $2`, agentID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Message{}, ErrNotFound
	}
	return m, err
}
