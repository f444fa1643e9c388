// Package activities holds everything with side effects that workflows call: model calls,
// persistence and event publishing. Activities receive IDs and load what they need.
package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/prompt"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
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
	Sync         Sync // the SAP index syncs (sync_enrich.go)
	// Tools are the tools this worker offers, classifies and runs; nil means tools.Default().
	Tools *tools.Registry
	// Temporal stops a deleted workspace's conversations; Blobs holds its files' bytes.
	Temporal client.Client
	Blobs    blob.Store

	prompts      prompt.Cache
	codeDocsOnce sync.Once
	codeDocsText string
}

// registry is the worker's tool registry.
func (a *Activities) registry() *tools.Registry {
	if a.Tools != nil {
		return a.Tools
	}
	return tools.Default()
}

// Register registers every activity through the workflows' typed contracts, so a signature
// that drifts from what the workflow calls does not compile.
func (a *Activities) Register(r workflows.Registry) {
	workflows.LoadConversation.Register(r, a.LoadConversation)
	workflows.BeginTurn.Register(r, a.BeginTurn)
	workflows.SetStatus.Register(r, a.SetStatus)
	workflows.GenerateReply.Register(r, a.GenerateReply)
	workflows.PublishError.Register(r, a.PublishError)
	workflows.ExecuteTool.Register(r, a.ExecuteTool)
	workflows.SaveToolResults.Register(r, a.SaveToolResults)
	workflows.PublishEvent.Register(r, a.PublishEvent)
	workflows.GenerateTitle.Register(r, a.GenerateTitle)
	workflows.ParkMessage.Register(r, a.ParkMessage)
	workflows.DropMessages.Register(r, a.DropMessages)
	workflows.CompactConversation.Register(r, a.CompactConversation)
	workflows.MarkDeleting.Register(r, a.MarkDeleting)
	workflows.ListWorkspaceAgents.Register(r, a.ListWorkspaceAgents)
	workflows.ListOrgWorkspaces.Register(r, a.ListOrgWorkspaces)
	workflows.StopConversations.Register(r, a.StopConversations)
	workflows.DeleteEvents.Register(r, a.DeleteEvents)
	workflows.DeleteWorkspaceFiles.Register(r, a.DeleteWorkspaceFiles)
	workflows.DeleteRows.Register(r, a.DeleteRows)
	workflows.StopWorkspaceSyncs.Register(r, a.StopWorkspaceSyncs)
	workflows.StartSyncRun.Register(r, a.StartSyncRun)
	workflows.ProbeChanges.Register(r, a.ProbeChanges)
	workflows.IndexPhase.Register(r, a.IndexPhase)
	workflows.EnrichPhase.Register(r, a.EnrichPhase)
	workflows.FinishSyncRun.Register(r, a.FinishSyncRun)
	workflows.RecordSkippedSync.Register(r, a.RecordSkippedSync)
}

// LoadConversation returns the last message seq stored for the agent.
func (a *Activities) LoadConversation(ctx context.Context, agentID string) (int64, error) {
	id, err := parseAgentID(agentID)
	if err != nil {
		return 0, err
	}
	return a.Store.LastMessageSeq(ctx, id)
}

// BeginTurn stores the user's message and marks the agent active (one transaction), tells the
// clients both, and returns the sender's tool policy for the turn. Outages are returned as
// plain errors (the workflow retries until they end); only input that can never be stored is
// non-retryable.
func (a *Activities) BeginTurn(ctx context.Context, in workflows.BeginTurnInput) (workflows.TurnContext, error) {
	tc := workflows.TurnContext{Policy: store.DefaultToolPolicy}
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return tc, err
	}
	msgID, err := uuid.Parse(in.Message.ID)
	if err != nil {
		return tc, badInput("bad message id", err)
	}
	agent, err := a.loadAgent(ctx, agentID)
	if err != nil {
		return tc, err
	}
	if err := a.refuseRemovedSender(ctx, agent, in.Message); err != nil {
		return tc, err
	}
	tc.Model = agent.Model
	if tc.Model == "" {
		tc.Model = a.PrimaryModel
	}
	if err := a.turnRules(ctx, agent.WorkspaceID, in.Message.UserID, &tc); err != nil {
		return tc, err
	}
	parts, err := a.attachmentParts(ctx, agent.WorkspaceID, in.Message.Attachments)
	if err != nil {
		return tc, err
	}
	saved, dup, err := a.Store.RecordUserMessage(ctx, store.UserTurn{
		ID: msgID, AgentID: agentID, Seq: in.Seq, Content: in.Message.Content, Parked: in.Message.Parked, Parts: parts,
	})
	switch {
	case errors.Is(err, store.ErrParkedMessageMissing), errors.Is(err, store.ErrMessageIDTaken):
		return tc, badInput(err.Error(), err)
	case err != nil:
		return tc, storeFailure("save user message", err)
	}
	tc.Seq, tc.Duplicate = saved.Seq, dup
	if dup {
		return tc, nil
	}
	topic := events.AgentTopic(in.AgentID)
	// The message is stored: from here on nothing may hold the user's 202 for long. When Redis
	// does not take the first event the second is not tried (clients catch up from an init).
	if _, err := a.tryPublish(ctx, topic, messageEvent(saved)); err == nil {
		a.publish(ctx, topic, events.Event{ID: in.EventID, Frame: frames.Status{Status: workflows.StatusActive}})
	}
	return tc, nil
}

// turnRules sets the turn's tool rules: the sender's chosen policy bounded by the workspace's
// max_tool_policy, and its four-eyes rule. Decided here (recorded in history) so the whole turn
// follows the rules as they were when it started.
func (a *Activities) turnRules(ctx context.Context, workspaceID uuid.UUID, user string, tc *workflows.TurnContext) error {
	r, err := a.Store.ToolRules(ctx, workspaceID, user)
	if errors.Is(err, store.ErrNotFound) {
		return badInput("the agent's workspace no longer exists", err)
	}
	if err != nil {
		return fmt.Errorf("load tool policy: %w", err)
	}
	tc.ChosenPolicy = r.Chosen
	tc.Policy = string(tools.EffectivePolicy(tools.Policy(r.Chosen), tools.Policy(r.Max)))
	tc.FourEyes = r.FourEyes
	return nil
}

// ParkMessage stores a queued message's content before the workflow continues as new.
func (a *Activities) ParkMessage(ctx context.Context, in workflows.ParkInput) error {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return err
	}
	msgID, err := uuid.Parse(in.Message.ID)
	if err != nil {
		return badInput("bad message id", err)
	}
	return a.Store.ParkMessage(ctx, msgID, agentID, in.Message.UserID, in.Message.Content)
}

// loadAgent loads the agent; one that no longer exists is not an outage to wait out.
func (a *Activities) loadAgent(ctx context.Context, id uuid.UUID) (store.Agent, error) {
	agent, err := a.Store.GetAgent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return agent, badInput("agent "+id.String()+" no longer exists", err)
	}
	if err != nil {
		return agent, fmt.Errorf("load agent: %w", err)
	}
	return agent, nil
}

// PublishEvent publishes one workflow-driven event (approval_needed, tool_rejected, stopped…).
func (a *Activities) PublishEvent(ctx context.Context, in workflows.EventInput) error {
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Frame: in.Frame})
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
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Frame: frames.Status{Status: in.Status}})
	return nil
}

// PublishError tells the conversation's clients that a turn failed.
func (a *Activities) PublishError(ctx context.Context, in workflows.ErrorInput) error {
	a.publish(ctx, events.AgentTopic(in.AgentID), events.Event{ID: in.EventID, Frame: frames.Error{Error: in.Message, MessageID: in.MessageID}})
	return nil
}

// PublishTimeout bounds one publish from an activity. A Redis that refuses connections or never
// answers must not hold a turn: the user's message is acknowledged (202) only when BeginTurn
// has returned, and a stop waits for the local activity in flight. What was not published is
// caught up from Postgres (every init is a snapshot of it) and by the next reply frame.
var PublishTimeout = time.Second

// publish sends an event; a Redis outage must not fail the turn (Postgres holds the truth,
// clients resynchronise), so failures are logged, not returned.
func (a *Activities) publish(ctx context.Context, topic string, ev events.Event) {
	_, _ = a.tryPublish(ctx, topic, ev)
}

// tryPublish is publish that says where the event went, or that it was not published.
func (a *Activities) tryPublish(ctx context.Context, topic string, ev events.Event) (events.Cursor, error) {
	ctx, cancel := context.WithTimeout(ctx, PublishTimeout)
	defer cancel()
	pos, err := a.Bus.Publish(ctx, topic, ev)
	switch {
	case errors.Is(err, events.ErrTopicDeleted):
		// A late event of a deleted conversation or workspace: nobody is left to tell.
		a.Log.Debug("event of a deleted topic dropped", "topic", topic, "type", ev.Frame.FrameType())
	case err != nil:
		a.Log.Warn("event not published", "topic", topic, "type", ev.Frame.FrameType(), "error", err)
	}
	return pos, err
}

// messageEvent announces a stored transcript message; its ID makes a repeat a no-op.
func messageEvent(m store.Message) events.Event {
	return events.Event{ID: "msg:" + m.ID.String(), Frame: frames.Message[store.Message]{Message: m}}
}

// storeFailure classifies a failed write: a value Postgres refuses fails the same way on every
// retry, so it is bad input (the turn ends with an error) rather than an outage to wait out.
func storeFailure(what string, err error) error {
	if store.IsDataError(err) {
		return badInput(what+": the database refused the text", err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func parseAgentID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, badInput("bad agent id "+s, err)
	}
	return id, nil
}

// badInput is an error no retry can fix.
func badInput(msg string, cause error) error {
	return temporal.NewNonRetryableApplicationError(msg, workflows.ErrTypeBadInput, cause)
}
