package workflows

import "go.temporal.io/sdk/workflow"

// WorkflowRegistry is what workflows are registered on: a worker, a replayer, a test environment.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// RegisterWorkflows registers every workflow of the product under the name its recorded
// histories carry. It is the one list: the worker, the dev stack, the replayer and tests all
// register through it, so none misses a workflow or registers one under another name.
func RegisterWorkflows(r WorkflowRegistry, legacy LegacyClassifier) {
	r.RegisterWorkflowWithOptions(conversationWorkflow(legacy), workflow.RegisterOptions{Name: ConversationWorkflowName})
	r.RegisterWorkflowWithOptions(DeleteWorkspace, workflow.RegisterOptions{Name: DeleteWorkspaceWorkflowName})
	r.RegisterWorkflowWithOptions(DeleteOrg, workflow.RegisterOptions{Name: DeleteOrgWorkflowName})
	r.RegisterWorkflowWithOptions(SAPSync, workflow.RegisterOptions{Name: SyncWorkflowName})
	r.RegisterWorkflowWithOptions(SAPSyncScheduled, workflow.RegisterOptions{Name: SyncScheduledWorkflowName})
}
