package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/sapagent/sapagent/internal/tools"
)

// deletionLog records the deletion's steps; the first DeleteWorkspaceFiles fails as an outage would.
type deletionLog struct {
	mu        sync.Mutex
	steps     []string
	failFiles bool
}

func (l *deletionLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, s)
}

func (l *deletionLog) register(env *testsuite.TestWorkflowEnvironment) {
	RegisterWorkflows(env, tools.Default())
	MarkDeleting.Register(env, func(_ context.Context, t DeletionTarget) error { l.add("mark " + t.Kind + " " + t.ID); return nil })
	ListOrgWorkspaces.Register(env, func(context.Context, string) ([]string, error) { return []string{"w1", "w2"}, nil })
	ListWorkspaceAgents.Register(env, func(_ context.Context, ws string) ([]string, error) { return []string{ws + "-a"}, nil })
	StopConversations.Register(env, func(_ context.Context, in StopInput) error { l.add("stop " + in.AgentIDs[0]); return nil })
	DeleteEvents.Register(env, func(_ context.Context, in EventsInput) error { l.add("events " + in.WorkspaceID); return nil })
	DeleteWorkspaceFiles.Register(env, func(_ context.Context, ws string) (int, error) {
		l.mu.Lock()
		fail := l.failFiles
		l.failFiles = false
		l.mu.Unlock()
		if fail {
			return 0, errors.New("blob store unavailable")
		}
		l.add("files " + ws)
		return 3, nil
	})
	DeleteRows.Register(env, func(_ context.Context, t DeletionTarget) error { l.add("rows " + t.Kind + " " + t.ID); return nil })
	StopWorkspaceSyncs.Register(env, func(_ context.Context, ws string) error { l.add("syncs " + ws); return nil })
}

func TestDeleteWorkspaceRemovesContentBeforeRowsAndRetriesOutages(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	l := &deletionLog{failFiles: true}
	l.register(env)
	env.ExecuteWorkflow(DeleteWorkspace, DeletionInput{ID: "w1", OrgID: "o1", RequestedBy: "alice"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st DeletionStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	assert.Equal(t, DeletionStatus{Kind: "workspace", ID: "w1", OrgID: "o1", RequestedBy: "alice", Step: StepDone, Done: true, Agents: 1, Files: 3}, st)
	assert.Equal(t, []string{"mark workspace w1", "syncs w1", "stop w1-a", "events w1", "files w1", "rows workspace w1", "stop w1-a", "events w1"}, l.steps)
}

func TestDeleteOrgDeletesEachWorkspaceThenTheOrg(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	l := &deletionLog{}
	l.register(env)
	env.ExecuteWorkflow(DeleteOrg, DeletionInput{ID: "o1", RequestedBy: "alice"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st DeletionStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	assert.Equal(t, 2, st.Workspaces)
	assert.Equal(t, 2, st.WorkspacesDone)
	assert.Equal(t, 2, st.Agents)
	assert.Equal(t, 6, st.Files)
	require.NotEmpty(t, l.steps)
	assert.Equal(t, "mark org o1", l.steps[0])
	assert.Equal(t, "rows org o1", l.steps[len(l.steps)-1], "the org's rows go last")
	for _, ws := range []string{"w1", "w2"} {
		assert.Contains(t, l.steps, "files "+ws)
		assert.Contains(t, l.steps, "rows workspace "+ws)
	}
}
