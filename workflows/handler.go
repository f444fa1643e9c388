package workflows

import (
	"context"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Update is a typed reference to a workflow update, like Activity is to an activity: the
// workflow registers its handler through it, the API sends it through it and tests send it
// through it, so the compiler checks all three against one contract (a name string with []any
// arguments let the caller's argument and the handler's parameter drift apart).
type Update[In, Out any] struct{ Name string }

// Query is a typed reference to a workflow query. Every query of ours takes no input.
type Query[Out any] struct{ Name string }

// Signal is a typed reference to a workflow signal.
type Signal[T any] struct{ Name string }

// Updater sends updates to running workflows (client.Client is one).
type Updater interface {
	UpdateWorkflow(ctx context.Context, options client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
}

// UpdateStarter sends an update and starts the workflow when it is not running (client.Client is one).
type UpdateStarter interface {
	UpdateWithStartWorkflow(ctx context.Context, options client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error)
}

// Signaler sends signals to running workflows (client.Client is one).
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// Querier asks running or closed workflows (client.Client is one).
type Querier interface {
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}

// SetHandler registers fn as the workflow's handler of u; validate (may be nil) rejects an
// update before it is written to the history.
func (u Update[In, Out]) SetHandler(ctx workflow.Context, fn func(workflow.Context, In) (Out, error), validate func(workflow.Context, In) error) error {
	var opts workflow.UpdateHandlerOptions
	if validate != nil { // a nil func in the interface field would be called
		opts.Validator = validate
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, u.Name, fn, opts)
}

// Do sends the update to the workflow's running execution and waits for its result.
func (u Update[In, Out]) Do(ctx context.Context, c Updater, workflowID string, in In) (Out, error) {
	var out Out
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID, UpdateName: u.Name, Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, &out)
	}
	return out, err
}

// UpdateWithStart sends the update with updateID, starting the workflow through start when it
// is not running, and waits for the result. Temporal delivers an update ID once, so a client
// that retries with the same ID is answered without a second delivery.
func (u Update[In, Out]) UpdateWithStart(ctx context.Context, c UpdateStarter, start client.WithStartWorkflowOperation, updateID string, in In) (Out, error) {
	var out Out
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateID: updateID, UpdateName: u.Name, Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = h.Get(ctx, &out)
	}
	return out, err
}

// SetHandler registers fn as the workflow's answer to q.
func (q Query[Out]) SetHandler(ctx workflow.Context, fn func() (Out, error)) error {
	return workflow.SetQueryHandler(ctx, q.Name, fn)
}

// Ask queries the workflow's run (the latest when runID is "") and decodes the answer.
func (q Query[Out]) Ask(ctx context.Context, c Querier, workflowID, runID string) (Out, error) {
	var out Out
	v, err := c.QueryWorkflow(ctx, workflowID, runID, q.Name)
	if err == nil {
		err = v.Get(&out)
	}
	return out, err
}

// Receive waits for the next signal on the workflow's channel of s; ok is false when the
// channel is closed.
func (s Signal[T]) Receive(ctx workflow.Context) (v T, ok bool) {
	ok = workflow.GetSignalChannel(ctx, s.Name).Receive(ctx, &v)
	return v, ok
}

// Send signals the workflow's run (the latest when runID is "").
func (s Signal[T]) Send(ctx context.Context, c Signaler, workflowID, runID string, v T) error {
	return c.SignalWorkflow(ctx, workflowID, runID, s.Name, v)
}

// The workflows' updates, queries and signals. Names are part of recorded histories: never rename one.
var (
	SendMessage  = Update[UserMessage, SendMessageResult]{"send_message"}
	Approve      = Update[ApproveRequest, ApproveResult]{"approve"}
	StopTurn     = Update[StopRequest, StopResult]{"stop"}
	RemoveMember = Update[RemoveMemberRequest, RemoveMemberResult]{"remove_member"}

	ConversationState = Query[State]{"state"}
	// DeletionProgress answers a deletion's DeletionStatus.
	DeletionProgress = Query[DeletionStatus]{"deletion"}
	// SyncProgress answers a sync run's SyncStatus (the Temporal UI's query tab).
	SyncProgress = Query[SyncStatus]{"progress"}

	// SyncWaitingChanged is how a phase activity tells the run that the connector fails and it
	// is retried, or that pages arrive again (Attempt 0).
	SyncWaitingChanged = Signal[SyncWaiting]{"sync_waiting"}
)
