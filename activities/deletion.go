package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"

	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// The deletion's activities are idempotent: each may run again after a crash, and what is
// already gone counts as done. Each heartbeats from its start (deletionHeartbeat), well inside
// the deletion's 5 s heartbeat timeout, so a long SQL delete is not taken for a lost worker.

// deletionHeartbeat is how often a deletion step tells Temporal it is alive.
const deletionHeartbeat = time.Second

func parseTarget(t workflows.DeletionTarget) (uuid.UUID, error) {
	id, err := uuid.Parse(t.ID)
	if err != nil || (t.Kind != workflows.DeletionWorkspace && t.Kind != workflows.DeletionOrg) {
		return id, badInput("bad deletion target", err)
	}
	return id, nil
}

func parseID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, badInput("bad id", err)
	}
	return id, nil
}

// MarkDeleting hides the workspace (or the org and its workspaces) from every API read.
func (a *Activities) MarkDeleting(ctx context.Context, t workflows.DeletionTarget) error {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	id, err := parseTarget(t)
	if err != nil {
		return err
	}
	if t.Kind == workflows.DeletionOrg {
		err = a.Store.MarkOrgDeleting(ctx, id)
	} else {
		err = a.Store.MarkWorkspaceDeleting(ctx, id)
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("mark deleting: %w", err)
	}
	return nil
}

// ListWorkspaceAgents returns every agent of the workspace, archived ones included.
func (a *Activities) ListWorkspaceAgents(ctx context.Context, workspaceID string) ([]string, error) {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	id, err := parseID(workspaceID)
	if err != nil {
		return nil, err
	}
	ids, err := a.Store.WorkspaceAgentIDs(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return uuidStrings(ids), nil
}

// ListOrgWorkspaces returns every workspace of the org.
func (a *Activities) ListOrgWorkspaces(ctx context.Context, orgID string) ([]string, error) {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	id, err := parseID(orgID)
	if err != nil {
		return nil, err
	}
	ids, err := a.Store.OrgWorkspaceIDs(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	return uuidStrings(ids), nil
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// StopConversations terminates the agents' conversation workflows; one that is not running
// is already stopped.
func (a *Activities) StopConversations(ctx context.Context, in workflows.StopInput) error {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	if a.Temporal == nil {
		return errors.New("stop conversations: no Temporal client configured")
	}
	for _, agentID := range in.AgentIDs {
		if _, err := parseID(agentID); err != nil {
			return err
		}
		err := a.Temporal.TerminateWorkflow(ctx, workflows.ConversationWorkflowID(agentID), "", in.Reason)
		var notFound *serviceerror.NotFound
		if err != nil && !errors.As(err, &notFound) {
			return fmt.Errorf("terminate conversation: %w", err)
		}
		activity.RecordHeartbeat(ctx)
	}
	return nil
}

// DeleteEvents removes the event logs of the workspace's topic and its agents' topics.
func (a *Activities) DeleteEvents(ctx context.Context, in workflows.EventsInput) error {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	topics := []string{events.WorkspaceTopic(in.WorkspaceID)}
	for _, agentID := range in.AgentIDs {
		topics = append(topics, events.AgentTopic(agentID))
	}
	for _, topic := range topics {
		if err := a.Bus.DeleteTopic(ctx, topic); err != nil {
			return err
		}
		activity.RecordHeartbeat(ctx)
	}
	return nil
}

// DeleteWorkspaceFiles removes the bytes of every file of the workspace (the rows go last,
// with the workspace), returning how many files it had.
func (a *Activities) DeleteWorkspaceFiles(ctx context.Context, workspaceID string) (int, error) {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	id, err := parseID(workspaceID)
	if err != nil {
		return 0, err
	}
	keys, err := a.Store.WorkspaceFileKeys(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("list files: %w", err)
	}
	if len(keys) > 0 && a.Blobs == nil {
		return 0, errors.New("delete files: no blob store configured")
	}
	for _, key := range keys {
		if err := a.Blobs.Delete(ctx, key); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return 0, fmt.Errorf("delete file bytes: %w", err)
		}
		activity.RecordHeartbeat(ctx)
	}
	return len(keys), nil
}

// DeleteRows removes the workspace's (or org's) rows; the foreign keys cascade to everything in it.
func (a *Activities) DeleteRows(ctx context.Context, t workflows.DeletionTarget) error {
	defer heartbeatEvery(ctx, deletionHeartbeat)()
	id, err := parseTarget(t)
	if err != nil {
		return err
	}
	if t.Kind == workflows.DeletionOrg {
		err = a.Store.DeleteOrg(ctx, id)
	} else {
		err = a.Store.DeleteWorkspace(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("delete rows: %w", err)
	}
	return nil
}
