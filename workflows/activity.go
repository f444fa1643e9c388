package workflows

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

// Activity is a typed reference to an activity with a result. The workflow calls it, package
// activities registers the implementation through it, and tests register their fakes through
// it, so the compiler checks all three against one contract (a name string alone let fakes and
// implementations drift apart).
type Activity[In, Out any] struct{ Name string }

// Effect is a typed reference to an activity without a result.
type Effect[In any] struct{ Name string }

// Registry is what activities are registered on: a worker, a replayer, a test environment.
type Registry interface {
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// Register registers fn as the implementation of a.
func (a Activity[In, Out]) Register(r Registry, fn func(context.Context, In) (Out, error)) {
	r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: a.Name})
}

// Start schedules the activity (options come from ctx) and returns its pending result.
func (a Activity[In, Out]) Start(ctx workflow.Context, in In) Pending[Out] {
	return Pending[Out]{workflow.ExecuteActivity(ctx, a.Name, in)}
}

// Run executes the activity and waits for its result.
func (a Activity[In, Out]) Run(ctx workflow.Context, in In) (Out, error) {
	return a.Start(ctx, in).Get(ctx)
}

// RunLocal executes the activity as a local activity (options from ctx) and waits.
func (a Activity[In, Out]) RunLocal(ctx workflow.Context, in In) (Out, error) {
	return Pending[Out]{workflow.ExecuteLocalActivity(ctx, a.Name, in)}.Get(ctx)
}

// Register registers fn as the implementation of e.
func (e Effect[In]) Register(r Registry, fn func(context.Context, In) error) {
	r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: e.Name})
}

// Start schedules the activity and returns its future.
func (e Effect[In]) Start(ctx workflow.Context, in In) workflow.Future {
	return workflow.ExecuteActivity(ctx, e.Name, in)
}

// Run executes the activity and waits for it.
func (e Effect[In]) Run(ctx workflow.Context, in In) error {
	return e.Start(ctx, in).Get(ctx, nil)
}

// RunLocal executes the activity as a local activity and waits.
func (e Effect[In]) RunLocal(ctx workflow.Context, in In) error {
	return workflow.ExecuteLocalActivity(ctx, e.Name, in).Get(ctx, nil)
}

// Pending is a scheduled activity's typed result.
type Pending[Out any] struct{ f workflow.Future }

// Get waits for the result.
func (p Pending[Out]) Get(ctx workflow.Context) (Out, error) {
	var out Out
	err := p.f.Get(ctx, &out)
	return out, err
}

// The conversation's activities. Names are part of recorded histories: never rename one.
var (
	LoadConversation = Activity[string, int64]{"LoadConversation"}
	BeginTurn        = Activity[BeginTurnInput, TurnContext]{"BeginTurn"}
	SetStatus        = Effect[StatusInput]{"SetStatus"}
	GenerateReply    = Activity[TurnInput, TurnResult]{"GenerateReply"}
	PublishError     = Effect[ErrorInput]{"PublishError"}
	ExecuteTool      = Activity[ToolCallInput, ToolResult]{"ExecuteTool"}
	SaveToolResults  = Effect[ToolResultsInput]{"SaveToolResults"}
	PublishEvent     = Effect[EventInput]{"PublishEvent"}
	GenerateTitle    = Activity[string, string]{"GenerateTitle"}
	ParkMessage      = Effect[ParkInput]{"ParkMessage"}
	// DropMessages forgets queued messages of a removed member (RemoveMemberRequest).
	DropMessages = Effect[DropMessagesInput]{"DropMessages"}
	// CompactConversation summarises older turns into a summary row (context windows).
	CompactConversation = Activity[CompactInput, CompactResult]{"CompactConversation"}
)
