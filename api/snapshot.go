package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// partialTail is how many logged events init looks at to rebuild a running turn's text.
const partialTail = 4000

// partial is the text (and reasoning) streamed so far for a message not finished yet.
type partial struct {
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	Reasoning string `json:"reasoning,omitempty"`
}

// snapshot is the init frame: the newest stored messages (at most initMessageLimit, in seq
// order), status and pending approvals from the workflow, and the partial text of a turn that
// is streaming right now.
func (s *Server) snapshot(ctx context.Context, agent store.Agent, topic string, seq int64) (gin.H, error) {
	msgs, err := s.Store.ListRecentMessages(ctx, agent.ID, initMessageLimit)
	if err != nil {
		return nil, err
	}
	fresh, err := s.Store.GetAgent(ctx, agent.ID)
	if err != nil {
		return nil, err
	}
	status, pending := fresh.Status, []workflows.PendingApproval{}
	if fresh.Status != workflows.StatusIdle {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if v, err := s.Temporal.QueryWorkflow(qctx, workflows.ConversationWorkflowID(agent.ID.String()), "", workflows.QueryState); err == nil {
			var st workflows.State
			if v.Get(&st) == nil {
				status, pending = st.Status, st.PendingApprovals
			}
		}
		cancel()
	}
	partials := []partial{}
	if status != workflows.StatusIdle {
		tail, err := s.Bus.Tail(ctx, topic, partialTail)
		if err != nil {
			return nil, err
		}
		partials = partialsOf(tail, seq)
	}
	return gin.H{"type": "init", "seq": seq, "agent": fresh, "status": status, "messages": msgs,
		"pending_approvals": pending, "partial": partials}, nil
}

// partialsOf replays stream/thinking deltas up to seq and keeps those of messages that have
// neither ended nor been retried.
func partialsOf(tail []events.Raw, seq int64) []partial {
	open := map[string]*partial{}
	var order []string
	for _, ev := range tail {
		if ev.Seq > seq {
			break
		}
		var e struct {
			Type      string `json:"type"`
			MessageID string `json:"message_id"`
			Delta     string `json:"delta"`
		}
		if json.Unmarshal(ev.JSON, &e) != nil || e.MessageID == "" {
			continue
		}
		switch e.Type {
		case "stream", "thinking":
			p := open[e.MessageID]
			if p == nil {
				p = &partial{MessageID: e.MessageID}
				open[e.MessageID] = p
				order = append(order, e.MessageID)
			}
			if e.Type == "stream" {
				p.Text += e.Delta
			} else {
				p.Reasoning += e.Delta
			}
		case "stream_end", "retry":
			delete(open, e.MessageID)
		}
	}
	out := []partial{}
	for _, id := range order {
		if p, ok := open[id]; ok {
			out = append(out, *p)
		}
	}
	return out
}
