// Package worker builds the Temporal worker that runs every workflow and activity.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sapagent/sapagent/activities"
	"github.com/sapagent/sapagent/workflows"
)

// New registers the workflows and activities on a worker for taskQueue. The caller starts it
// (Run or Start) and stops it. Stopping stops polling at once and lets running activities
// finish for up to stopGrace before they are cancelled (and retried on another worker).
func New(c client.Client, taskQueue string, acts *activities.Activities, stopGrace time.Duration) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{
		WorkerStopTimeout: stopGrace,
		// Heartbeats carry cancellation to a streaming model call: sending them at least every
		// second makes Stop take effect within about a second.
		MaxHeartbeatThrottleInterval:     time.Second,
		DefaultHeartbeatThrottleInterval: time.Second,
	})
	Register(w, acts)
	return w
}

// Register adds the product's workflows and activities to any registry (a worker, a replayer's
// test environment).
func Register(w sdkworker.Registry, acts *activities.Activities) {
	// The workflow is registered by name: the name is in every recorded history.
	w.RegisterWorkflowWithOptions(workflows.Conversation, workflow.RegisterOptions{Name: workflows.ConversationWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.DeleteWorkspace, workflow.RegisterOptions{Name: workflows.DeleteWorkspaceWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.DeleteOrg, workflow.RegisterOptions{Name: workflows.DeleteOrgWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SAPSync, workflow.RegisterOptions{Name: workflows.SyncWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SAPSyncScheduled, workflow.RegisterOptions{Name: workflows.SyncScheduledWorkflowName})
	if acts != nil {
		acts.Register(w)
	}
}
