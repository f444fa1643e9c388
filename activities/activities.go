// Package activities holds everything with side effects that workflows call: model calls,
// persistence and event publishing. Activities receive IDs and load what they need.
package activities

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/prompt"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// Activities carries the dependencies every activity shares.
type Activities struct {
	Store        *store.Store
	Bus          *events.Bus
	Models       *llm.Registry
	PrimaryModel string // provider:model used when the agent has no override
	Log          *slog.Logger
	SAP          SAP

	prompts      prompt.Cache
	codeDocsOnce sync.Once
	codeDocsText string
}

// Registrar is the part of worker.Worker that registers activities.
type Registrar interface {
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// Register registers every activity under the name the workflows use.
func (a *Activities) Register(r Registrar) {
	r.RegisterActivityWithOptions(a.LoadConversation, activity.RegisterOptions{Name: workflows.ActivityLoadConversation})
	r.RegisterActivityWithOptions(a.BeginTurn, activity.RegisterOptions{Name: workflows.ActivityBeginTurn})
	r.RegisterActivityWithOptions(a.SetStatus, activity.RegisterOptions{Name: workflows.ActivitySetStatus})
	r.RegisterActivityWithOptions(a.GenerateReply, activity.RegisterOptions{Name: workflows.ActivityGenerateReply})
	r.RegisterActivityWithOptions(a.PublishError, activity.RegisterOptions{Name: workflows.ActivityPublishError})
	r.RegisterActivityWithOptions(a.ExecuteTool, activity.RegisterOptions{Name: workflows.ActivityExecuteTool})
	r.RegisterActivityWithOptions(a.SaveToolResults, activity.RegisterOptions{Name: workflows.ActivitySaveToolResults})
	r.RegisterActivityWithOptions(a.PublishEvent, activity.RegisterOptions{Name: workflows.ActivityPublishEvent})
	r.RegisterActivityWithOptions(a.GenerateTitle, activity.RegisterOptions{Name: workflows.ActivityGenerateTitle})
}

// LoadConversation returns the last message seq stored for the agent.
func (a *Activities) LoadConversation(ctx context.Context, agentID string) (int64, error) {
	id, err := parseAgentID(agentID)
	if err != nil {
		return 0, err
	}
	return a.Store.LastMessageSeq(ctx, id)
}

// BeginTurn stores the user's message, marks the agent active, tells the clients both, and
// returns the sender's tool policy for the turn.
func (a *Activities) BeginTurn(ctx context.Context, in workflows.BeginTurnInput) (workflows.TurnContext, error) {
	tc := workflows.TurnContext{Policy: store.DefaultToolPolicy}
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return tc, err
	}
	msgID, err := uuid.Parse(in.Message.ID)
	if err != nil {
		return tc, temporal.NewNonRetryableApplicationError("bad message id", "BadInput", err)
	}
	agent, err := a.Store.GetAgent(ctx, agentID)
	if err != nil {
		return tc, fmt.Errorf("load agent: %w", err)
	}
	tc.Model = agent.Model
	if tc.Model == "" {
		tc.Model = a.PrimaryModel
	}
	if in.Message.UserID != "" {
		if tc.Policy, err = a.Store.ToolPolicy(ctx, agent.WorkspaceID, in.Message.UserID); err != nil {
			return tc, fmt.Errorf("load tool policy: %w", err)
		}
	}
	saved, err := a.Store.SaveMessage(ctx, store.Message{
		ID: msgID, AgentID: agentID, Seq: in.Seq, Role: "user", Content: in.Message.Content,
	})
	if err != nil {
		return tc, fmt.Errorf("save user message: %w", err)
	}
	if err := a.Store.SetAgentStatus(ctx, agentID, workflows.StatusActive); err != nil {
		return tc, fmt.Errorf("save status: %w", err)
	}
	topic := events.AgentTopic(in.AgentID)
	a.publish(ctx, topic, events.Event{ID: "msg:" + saved.ID.String(), Type: "message", Fields: map[string]any{"message": saved}})
	a.publish(ctx, topic, events.Event{ID: in.EventID, Type: "status", Fields: map[string]any{"status": workflows.StatusActive}})
	return tc, nil
}

// PublishEvent publishes one workflow-driven event (approval_needed, tool_rejected, stopped…).
func (a *Activities) PublishEvent(ctx context.Context, in workflows.EventInput) error {
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Type: in.Type, Fields: in.Fields})
	return nil
}

// SetStatus records and announces a status change.
func (a *Activities) SetStatus(ctx context.Context, in workflows.StatusInput) error {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return err
	}
	if err := a.Store.SetAgentStatus(ctx, agentID, in.Status); err != nil {
		return err
	}
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Type: "status", Fields: map[string]any{"status": in.Status}})
	return nil
}

// PublishError tells the conversation's clients that a turn failed.
func (a *Activities) PublishError(ctx context.Context, in workflows.ErrorInput) error {
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Type: "error", Fields: map[string]any{"error": in.Message}})
	return nil
}

// publish sends an event; a Redis outage must not fail the turn (Postgres holds the truth,
// clients resynchronise), so failures are logged, not returned.
func (a *Activities) publish(ctx context.Context, topic string, ev events.Event) {
	if _, err := a.Bus.Publish(ctx, topic, ev); err != nil {
		a.Log.Warn("event not published", "topic", topic, "type", ev.Type, "error", err)
	}
}

func parseAgentID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, temporal.NewNonRetryableApplicationError("bad agent id "+s, "BadInput", err)
	}
	return id, nil
}
