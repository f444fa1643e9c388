package activities

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
)

// A tool that runs longer than the heartbeat interval keeps telling Temporal it is alive, and
// stops doing so when it returns.
func TestRunningToolsHeartbeat(t *testing.T) {
	old := toolHeartbeat
	toolHeartbeat = 20 * time.Millisecond
	defer func() { toolHeartbeat = old }()

	var beats atomic.Int32
	record := recordHeartbeat
	recordHeartbeat = func(ctx context.Context, details ...interface{}) {
		beats.Add(1)
		record(ctx, details...)
	}
	defer func() { recordHeartbeat = record }()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	slowTool := func(ctx context.Context) error {
		stop := heartbeatEvery(ctx, toolHeartbeat)
		time.Sleep(150 * time.Millisecond)
		stop()
		return nil
	}
	env.RegisterActivity(slowTool)
	_, err := env.ExecuteActivity(slowTool)
	require.NoError(t, err)
	got := beats.Load()
	assert.GreaterOrEqual(t, got, int32(3), "heartbeats while the tool ran")
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, got, beats.Load(), "no heartbeats after the tool returned")

	// Outside an activity (unit tests, scripts run elsewhere) it is a no-op.
	heartbeatEvery(context.Background(), time.Second)()
}
