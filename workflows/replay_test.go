package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestRecordedHistoriesReplay replays every history recorded from a real run (see
// integration/history_test.go). A failure means a workflow change is not replay-safe: guard
// it with workflow.GetVersion instead of changing the recorded file.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories in testdata/")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(Conversation, workflow.RegisterOptions{Name: ConversationWorkflowName})
			r.RegisterWorkflowWithOptions(DeleteWorkspace, workflow.RegisterOptions{Name: DeleteWorkspaceWorkflowName})
			r.RegisterWorkflowWithOptions(DeleteOrg, workflow.RegisterOptions{Name: DeleteOrgWorkflowName})
			r.RegisterWorkflowWithOptions(SAPSync, workflow.RegisterOptions{Name: SyncWorkflowName})
			r.RegisterWorkflowWithOptions(SAPSyncScheduled, workflow.RegisterOptions{Name: SyncScheduledWorkflowName})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
