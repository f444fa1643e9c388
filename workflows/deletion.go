package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Deleting a workspace or an organization is a workflow, so it finishes whatever crashes in
// between: the workspace is hidden first (the API answers 404 at once and nothing new gets
// in), then its conversations are stopped, its event logs, file bytes and finally its rows
// are removed. Every step is idempotent and retried until the infrastructure answers.
const (
	DeleteWorkspaceWorkflowName = "DeleteWorkspace"
	DeleteOrgWorkflowName       = "DeleteOrg"
)

// Deletion kinds, as in the workflow ID and the status URL.
const (
	DeletionWorkspace = "workspace"
	DeletionOrg       = "org"
)

// Deletion steps, in order.
const (
	StepHiding        = "hiding"
	StepConversations = "stopping_conversations"
	StepEvents        = "deleting_events"
	StepFiles         = "deleting_files"
	StepWorkspaces    = "deleting_workspaces" // an org's workspaces, one child each
	StepRows          = "deleting_rows"
	StepSweep         = "sweeping_events" // late events of cancelled activities
	StepDone          = "done"
)

// DeletionWorkflowID is the ID of the deletion of a workspace or an org (operators find it
// under delete/ in the Temporal UI); a repeated request finds the same deletion.
func DeletionWorkflowID(kind, id string) string { return "delete/" + kind + "/" + id }

// DeletionInput starts a deletion. RequestedBy is the user who asked: they (and the org's
// owners) may watch it.
type DeletionInput struct {
	ID          string `json:"id"`
	OrgID       string `json:"org_id"`
	RequestedBy string `json:"requested_by"`
}

// DeletionStatus is the deletion's progress.
type DeletionStatus struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	OrgID       string `json:"org_id"`
	RequestedBy string `json:"requested_by"`
	Step        string `json:"step"`
	Done        bool   `json:"done"`
	Agents      int    `json:"agents"`
	Files       int    `json:"files"`
	Workspaces  int    `json:"workspaces,omitempty"`
	// WorkspacesDone counts an org's workspaces already deleted.
	WorkspacesDone int `json:"workspaces_done,omitempty"`
}

// DeletionTarget names what an activity acts on.
type DeletionTarget struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// StopInput lists the conversations to terminate.
type StopInput struct {
	AgentIDs []string `json:"agent_ids"`
	Reason   string   `json:"reason"`
}

// EventsInput names the event topics to delete: the workspace's and its agents'.
type EventsInput struct {
	WorkspaceID string   `json:"workspace_id"`
	AgentIDs    []string `json:"agent_ids"`
}

// The deletion's activities. Names are part of recorded histories: never rename one.
var (
	MarkDeleting         = Effect[DeletionTarget]{"MarkDeleting"}
	ListWorkspaceAgents  = Activity[string, []string]{"ListWorkspaceAgents"}
	ListOrgWorkspaces    = Activity[string, []string]{"ListOrgWorkspaces"}
	StopConversations    = Effect[StopInput]{"StopConversations"}
	DeleteEvents         = Effect[EventsInput]{"DeleteEvents"}
	DeleteWorkspaceFiles = Activity[string, int]{"DeleteWorkspaceFiles"}
	DeleteRows           = Effect[DeletionTarget]{"DeleteRows"}
	// StopWorkspaceSyncs deletes the sync schedules of a workspace's connections and cancels
	// their running syncs (their index rows go with the rows).
	StopWorkspaceSyncs = Effect[string]{"StopWorkspaceSyncs"}
)

// deletionActivities: no attempt limit (an outage only delays the deletion); only input that
// can never succeed stops it. Every step is idempotent and heartbeats every second from its
// start, so a crashed worker's step is retried within seconds; retries back off to 10 s.
func deletionActivities(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{ErrTypeBadInput},
		},
	})
}

// DeleteWorkspace removes a workspace and everything of it.
func DeleteWorkspace(ctx workflow.Context, in DeletionInput) (DeletionStatus, error) {
	st := DeletionStatus{Kind: DeletionWorkspace, ID: in.ID, OrgID: in.OrgID, RequestedBy: in.RequestedBy, Step: StepHiding}
	if err := DeletionProgress.SetHandler(ctx, func() (DeletionStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	ctx = deletionActivities(ctx)
	target := DeletionTarget{Kind: DeletionWorkspace, ID: in.ID}
	if err := MarkDeleting.Run(ctx, target); err != nil {
		return st, err
	}
	if workflow.GetVersion(ctx, versionStopSyncs, workflow.DefaultVersion, 1) == 1 {
		if err := StopWorkspaceSyncs.Run(ctx, in.ID); err != nil {
			return st, err
		}
	}
	agents, err := deleteWorkspaceContent(ctx, in.ID, &st)
	if err != nil {
		return st, err
	}
	st.Step = StepRows
	if err := DeleteRows.Run(ctx, target); err != nil {
		return st, err
	}
	// A model or tool activity that was running when its conversation was terminated may still
	// publish an event before it notices the cancellation (within a heartbeat), and a message
	// that passed its access check just before the workspace was hidden may have started a
	// conversation run again: sweep both.
	st.Step = StepSweep
	if err := workflow.Sleep(ctx, eventSweepDelay); err != nil {
		return st, err
	}
	if len(agents) > 0 {
		if err := StopConversations.Run(ctx, StopInput{AgentIDs: agents, Reason: "workspace deleted"}); err != nil {
			return st, err
		}
	}
	if err := DeleteEvents.Run(ctx, EventsInput{WorkspaceID: in.ID, AgentIDs: agents}); err != nil {
		return st, err
	}
	st.Step, st.Done = StepDone, true
	return st, nil
}

// eventSweepDelay is how long after the rows the events are deleted once more: several
// heartbeat intervals, so every cancelled activity has stopped publishing.
const eventSweepDelay = 5 * time.Second

// deleteWorkspaceContent stops the workspace's conversations and removes their events and the
// workspace's file bytes; the rows stay (they list what to remove until the last step).
func deleteWorkspaceContent(ctx workflow.Context, workspaceID string, st *DeletionStatus) ([]string, error) {
	st.Step = StepConversations
	agents, err := ListWorkspaceAgents.Run(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	st.Agents = len(agents)
	if len(agents) > 0 {
		if err := StopConversations.Run(ctx, StopInput{AgentIDs: agents, Reason: "workspace deleted"}); err != nil {
			return nil, err
		}
	}
	st.Step = StepEvents
	if err := DeleteEvents.Run(ctx, EventsInput{WorkspaceID: workspaceID, AgentIDs: agents}); err != nil {
		return nil, err
	}
	st.Step = StepFiles
	n, err := DeleteWorkspaceFiles.Run(ctx, workspaceID)
	st.Files = n
	return agents, err
}

// DeleteOrg hides an org and all its workspaces, deletes each workspace in a child workflow
// (delete/org/<org>/workspace/<id>), then the org's rows.
func DeleteOrg(ctx workflow.Context, in DeletionInput) (DeletionStatus, error) {
	st := DeletionStatus{Kind: DeletionOrg, ID: in.ID, OrgID: in.ID, RequestedBy: in.RequestedBy, Step: StepHiding}
	if err := DeletionProgress.SetHandler(ctx, func() (DeletionStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	actx := deletionActivities(ctx)
	target := DeletionTarget{Kind: DeletionOrg, ID: in.ID}
	if err := MarkDeleting.Run(actx, target); err != nil {
		return st, err
	}
	workspaces, err := ListOrgWorkspaces.Run(actx, in.ID)
	if err != nil {
		return st, err
	}
	st.Step, st.Workspaces = StepWorkspaces, len(workspaces)
	futures := make([]workflow.ChildWorkflowFuture, len(workspaces))
	for i, ws := range workspaces {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: DeletionWorkflowID(DeletionOrg, in.ID) + "/workspace/" + ws,
		})
		futures[i] = workflow.ExecuteChildWorkflow(cctx, DeleteWorkspaceWorkflowName, DeletionInput{ID: ws, OrgID: in.ID, RequestedBy: in.RequestedBy})
	}
	for _, f := range futures {
		var child DeletionStatus
		if err := f.Get(ctx, &child); err != nil {
			return st, err
		}
		st.WorkspacesDone++
		st.Agents += child.Agents
		st.Files += child.Files
	}
	st.Step = StepRows
	if err := DeleteRows.Run(actx, target); err != nil {
		return st, err
	}
	st.Step, st.Done = StepDone, true
	return st, nil
}
