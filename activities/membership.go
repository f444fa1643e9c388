package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// Membership is checked when work runs, not only when it was asked for: a member removed since
// (docs/api.md, "Removing a member") has no turn started, no tool run and no SAP call made in
// her name, whether or not her conversations were told.

// mayUse reports whether user may still use the agent's workspace. A database failure is an
// error (the activity retries; nothing has run yet).
func (a *Activities) mayUse(ctx context.Context, agent store.Agent, user string) (bool, error) {
	ok, err := a.Store.CanUseWorkspace(ctx, agent.WorkspaceID, user)
	if err != nil {
		return false, fmt.Errorf("check membership: %w", err)
	}
	return ok, nil
}

// refuseRemovedSender refuses the turn of a message whose sender may no longer use the
// workspace: a non-retryable error, so the workflow ends the turn with an error event and goes
// on with the next message. A parked content is forgotten with it.
func (a *Activities) refuseRemovedSender(ctx context.Context, agent store.Agent, msg workflows.UserMessage) error {
	if msg.UserID == "" { // histories recorded before senders were named
		return nil
	}
	ok, err := a.mayUse(ctx, agent, msg.UserID)
	if err != nil || ok {
		return err
	}
	if id, perr := uuid.Parse(msg.ID); perr == nil && msg.Parked {
		if err := a.Store.DropParkedMessages(ctx, agent.ID, []uuid.UUID{id}); err != nil {
			a.Log.Warn("parked message of a removed member not deleted", "agent", agent.ID, "error", err)
		}
	}
	return temporal.NewNonRetryableApplicationError("message not answered: "+workflows.RemovedSenderReason, workflows.ErrTypeNotMember, nil)
}

// refuseRemovedRequester answers a tool call whose requester may no longer use the workspace
// with a tool error, before anything runs or reaches SAP; the refusal is in the action log.
func (a *Activities) refuseRemovedRequester(ctx context.Context, agent store.Agent, in workflows.ToolCallInput) (workflows.ToolResult, bool, error) {
	if in.UserID == "" {
		return workflows.ToolResult{}, false, nil
	}
	ok, err := a.mayUse(ctx, agent, in.UserID)
	if err != nil || ok {
		return workflows.ToolResult{}, false, err
	}
	msg := "not run: the requester is no longer a member of this workspace (nothing was sent to SAP)"
	res := workflows.ToolResult{ToolCallID: in.Call.ID, Name: in.Call.Name, Content: msg, IsError: true}
	book := context.WithoutCancel(ctx)
	a.publish(book, events.AgentTopic(in.AgentID), events.Event{ID: "tool:" + in.Call.ID + ":error",
		Frame: frames.ToolError{ToolCallID: in.Call.ID, Tool: in.Call.Name, Error: msg}})
	_ = a.bookkeep(book, "action log", func(ctx context.Context) error {
		return a.Store.LogAction(ctx, store.Action{AgentID: agent.ID, WorkspaceID: agent.WorkspaceID, UserID: in.UserID, DecidedBy: in.DecidedBy,
			ToolCallID: in.Call.ID, Tool: in.Call.Name, Input: truncate(in.Call.Arguments, maxLoggedInput), OutputSummary: msg, Error: msg})
	})
	return res, true, nil
}

// DropMessages forgets queued messages of a removed member: parked contents are deleted and
// every client is told, per message, that it will not be answered (an error event with its
// message_id, so a page stops showing it as queued).
func (a *Activities) DropMessages(ctx context.Context, in workflows.DropMessagesInput) error {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(in.MessageIDs))
	for i, s := range in.MessageIDs {
		if ids[i], err = uuid.Parse(s); err != nil {
			return badInput("bad message id "+s, err)
		}
	}
	if err := a.Store.DropParkedMessages(ctx, agentID, ids); err != nil {
		return fmt.Errorf("drop parked messages: %w", err)
	}
	topic := events.AgentTopic(in.AgentID)
	for _, id := range in.MessageIDs {
		a.publish(ctx, topic, events.Event{ID: "msg:" + id + ":dropped",
			Frame: frames.Error{Error: "message not answered: " + in.Reason, MessageID: id}})
	}
	return nil
}
