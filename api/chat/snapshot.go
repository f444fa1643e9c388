package chat

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// partialTail is how many logged events init looks at to rebuild a running turn's text.
const partialTail = 4000

// partial is the text (and reasoning) streamed so far for a message not finished yet.
// Incomplete: the log no longer holds the beginning of the stream (Redis lost its data
// mid-reply, or the reply is longer than the log window), so Text and Reasoning are only
// their ends; the stored message replaces them when it arrives. Reset: clients ignore later
// frames numbered below it, which are late copies of publishes that timed out.
type partial = frames.PartialText

// agentInit is the init frame of a conversation's stream.
type agentInit = frames.AgentInit[store.Agent, store.Message, workflows.PendingApproval]

// snapshot is the init frame: the newest stored messages (at most initMessageLimit, in seq
// order), status and pending approvals from the workflow, and the partial text of a turn that
// is streaming right now.
func (s *Streams) snapshot(ctx context.Context, agent store.Agent, topic string, head events.Cursor) (agentInit, error) {
	msgs, err := s.Store.ListRecentMessages(ctx, agent.ID, initMessageLimit)
	if err != nil {
		return agentInit{}, err
	}
	fresh, err := s.Store.GetAgent(ctx, agent.ID)
	if err != nil {
		return agentInit{}, err
	}
	status, pending := fresh.Status, []workflows.PendingApproval{}
	if fresh.Status != workflows.StatusIdle {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if st, err := workflows.ConversationState.Ask(qctx, s.Temporal, workflows.ConversationWorkflowID(agent.ID.String()), ""); err == nil {
			status, pending = st.Status, st.PendingApprovals
		}
		cancel()
	}
	partials := []partial{}
	if status != workflows.StatusIdle {
		tail, err := s.Bus.Tail(ctx, topic, partialTail)
		if err != nil {
			return agentInit{}, err
		}
		partials = partialsOf(tail, head)
	}
	return agentInit{Seq: head.Seq, Epoch: head.Epoch, Agent: fresh, Status: status, Messages: msgs,
		PendingApprovals: pending, Partial: partials}, nil
}

// partialsOf replays stream/thinking deltas of head's epoch up to head's seq and keeps those
// of messages that have neither ended nor been retried. A partial is complete only when the
// window shows an event from before its first delta (the turn's start, an earlier step, its
// thinking_start or retry), or when a reset gave the whole text: otherwise its beginning may be
// missing and it is marked incomplete.
func partialsOf(tail []events.Raw, head events.Cursor) []partial {
	open := map[string]*partial{}
	var order []string
	anchored := false // an event seen that precedes any step still streaming
	for _, ev := range tail {
		if ev.Seq > head.Seq {
			break
		}
		if ev.Epoch != head.Epoch && ev.Epoch != "" {
			// Another numbering (Redis restarted between reading the head and the log).
			open, order, anchored = map[string]*partial{}, nil, false
			continue
		}
		var e struct {
			Type      string  `json:"type"`
			MessageID string  `json:"message_id"`
			Delta     string  `json:"delta"`
			Text      *string `json:"text"` // a reset: the whole text so far
			N         int     `json:"n"`
		}
		if json.Unmarshal(ev.JSON, &e) != nil {
			continue
		}
		switch e.Type {
		case "stream", "thinking":
			if e.MessageID == "" {
				continue
			}
			p := open[e.MessageID]
			if p == nil {
				p = &partial{MessageID: e.MessageID, Incomplete: !anchored}
				open[e.MessageID] = p
				if !slices.Contains(order, e.MessageID) { // a retried message keeps its place
					order = append(order, e.MessageID)
				}
			}
			switch {
			case e.Type == "stream" && e.N > 0 && e.N < p.Reset:
				// Published before the reset the text holds: already in it.
			case e.Type == "stream" && e.Text != nil:
				// A reset holds the whole text: whatever the window lacked is in it.
				p.Text, p.Incomplete, p.Reset = *e.Text, false, e.N
			case e.Type == "stream":
				p.Text += e.Delta
			case e.Text != nil:
				p.Reasoning = *e.Text
			default:
				p.Reasoning += e.Delta
			}
		case "thinking_end", "title_update":
			// Published while a step streams (the title concurrently with the first reply).
		case "stream_end", "retry":
			delete(open, e.MessageID)
			anchored = true
		default:
			anchored = true
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
