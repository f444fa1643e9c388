package integration

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/store"
)

// toolTurns makes every "turn N" message call export_notes (a ≈50 KB CSV with the notes the
// benchmark seeds) under the run-everything policy, then answer.
func toolTurns(c *config.Config, o *devstack.Options) {
	c.OfflineLLMDelay = time.Microsecond
	c.RateLimitPerMinute = 1 << 30
	o.OfflineLLM.ChunkSize = 64
	o.OfflineLLM.Rules = []offlinellm.Rule{{Name: "turn", Match: `^turn \d+$`, ToolCalls: []offlinellm.ToolCallRule{{Name: "export_notes", Arguments: `{}`}}}}
}

func seedBigNotes(b *testing.B, e *env, agentID string) {
	id := uuid.MustParse(agentID)
	for i := 0; i < 5; i++ {
		require.NoError(b, e.stack.Deps.Store.SaveNote(context.Background(), id, store.Note{ID: uuid.New(), Title: fmt.Sprint("note ", i), Body: strings.Repeat("x", 10000)}))
	}
}

func (e *env) turn(ws *socket, agentID string, n int) {
	require.Equal(e.t, http.StatusAccepted, e.do("POST", "/api/agents/"+agentID+"/message", map[string]any{"content": fmt.Sprint("turn ", n)}, nil))
	ws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
}

// BenchmarkLongConversation runs one conversation of BENCH_TURNS (default 1000) tool-using turns
// whose tool returns ≈50 KB, and reports per workflow run the events and history bytes, plus the
// largest payload anywhere in history. Goal: no payload over 256 KB, no run past Temporal's
// continue-as-new suggestion (4,096 events / 4 MiB).
func BenchmarkLongConversation(b *testing.B) {
	turns := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_TURNS")); err == nil && v > 0 {
		turns = v
	}
	e := startEnv(b, toolTurns)
	require.Equal(b, 200, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "run_everything"}, nil))
	for i := 0; i < b.N; i++ {
		agent := e.createAgent("long")
		seedBigNotes(b, e, agent.ID)
		ws := e.dial(agent.ID, "")
		ws.next(5 * time.Second)
		start := time.Now()
		for n := 0; n < turns; n++ {
			e.turn(ws, agent.ID, n)
		}
		elapsed := time.Since(start)
		runs, maxEvents, maxBytes, largest := historyStats(b, e, "agent/"+agent.ID)
		b.ReportMetric(float64(turns)/elapsed.Seconds(), "turns/s")
		b.ReportMetric(float64(runs), "runs")
		b.ReportMetric(float64(maxEvents), "max-events/run")
		b.ReportMetric(float64(maxBytes)/1024, "max-KiB/run")
		b.ReportMetric(float64(largest)/1024, "largest-event-KiB")
	}
}

func historyStats(b *testing.B, e *env, workflowID string) (runs, maxEvents, maxBytes, largest int) {
	ctx := context.Background()
	c := e.stack.Deps.Temporal
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.cfg.TemporalNamespace, Query: "WorkflowId = '" + workflowID + "'", NextPageToken: token})
		require.NoError(b, err)
		for _, ex := range resp.Executions {
			runs++
			iter := c.GetWorkflowHistory(ctx, workflowID, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			events, bytes := 0, 0
			for iter.HasNext() {
				ev, err := iter.Next()
				require.NoError(b, err)
				events++
				bytes += ev.Size()
				largest = max(largest, ev.Size())
			}
			maxEvents, maxBytes = max(maxEvents, events), max(maxBytes, bytes)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return
		}
	}
}

// trivialWorkflow is the baseline: one activity, then done.
func trivialWorkflow(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	return workflow.ExecuteActivity(ctx, trivialActivity).Get(ctx, nil)
}

func trivialActivity(context.Context) error { return nil }

// BenchmarkConcurrentToolTurns measures tool-using turns per second with 50 conversations at
// once, against trivial one-activity workflows run the same way on the same embedded server.
func BenchmarkConcurrentToolTurns(b *testing.B) {
	const conversations, turnsEach = 50, 4
	e := startEnv(b, toolTurns)
	require.Equal(b, 200, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "run_everything"}, nil))
	w := sdkworker.New(e.stack.Deps.Temporal, "bench-trivial", sdkworker.Options{})
	w.RegisterWorkflow(trivialWorkflow)
	w.RegisterActivity(trivialActivity)
	require.NoError(b, w.Start())
	defer w.Stop()

	agents := make([]agentJSON, conversations)
	sockets := make([]*socket, conversations)
	for i := range agents {
		agents[i] = e.createAgent("bench")
		seedBigNotes(b, e, agents[i].ID)
		sockets[i] = e.dial(agents[i].ID, "")
		sockets[i].next(5 * time.Second)
	}
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		for a := range agents {
			wg.Add(1)
			go func(a int) {
				defer wg.Done()
				for n := 0; n < turnsEach; n++ {
					e.turn(sockets[a], agents[a].ID, n)
				}
			}(a)
		}
		wg.Wait()
		toolRate := float64(conversations*turnsEach) / time.Since(start).Seconds()

		start = time.Now()
		for a := 0; a < conversations; a++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < turnsEach; n++ {
					run, err := e.stack.Deps.Temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: "bench-trivial"}, trivialWorkflow)
					if err == nil {
						err = run.Get(context.Background(), nil)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		trivialRate := float64(conversations*turnsEach) / time.Since(start).Seconds()
		b.ReportMetric(toolRate, "tool-turns/s")
		b.ReportMetric(trivialRate, "trivial-workflows/s")
		b.ReportMetric(toolRate/trivialRate, "ratio")
	}
}
