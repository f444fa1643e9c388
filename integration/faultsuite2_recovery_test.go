package integration

// Recovery time (issue 18, finding 13): how long a user waits after a worker dies. Nothing is
// lost in these faults (the fault suite checks that); these tests measure the wait and keep it
// short. The figures are logged (docs/benchmarks.md, "Recovery after a worker dies").

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/workflows"
)

// toolDone matches the frame that shows the call's result.
func toolDone(callID string) func(wsFrame) bool {
	return func(f wsFrame) bool {
		return f.ToolCallID == callID && (f.Type == "tool_update" && f.Status == "done" || f.Type == "tool_error")
	}
}

// conversationHolder is the worker process that ran the conversation's last workflow task: the
// one that keeps it cached, and that the next task is offered to first.
func (tp *topology) conversationHolder(agentID string) *proc {
	tp.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it := tp.tc.GetWorkflowHistory(ctx, workflows.ConversationWorkflowID(agentID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	identity := ""
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(tp.t, err)
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			identity = a.GetIdentity()
		}
	}
	pid, _, _ := strings.Cut(identity, "@")
	for _, w := range tp.workers {
		if strconv.Itoa(w.pid()) == pid && w.running() {
			return w
		}
	}
	require.FailNow(tp.t, "no running worker holds the conversation", "last workflow task identity %q", identity)
	return nil
}

// addWorkerWith starts one more worker process with extra environment variables.
func (tp *topology) addWorkerWith(env ...string) *proc {
	n := len(tp.workers) + 1
	p := &proc{name: fmt.Sprintf("worker%d", n), path: binaryPath, args: []string{"worker"}, env: append(append([]string{}, tp.env...), env...),
		log: filepath.Join(tp.dir, fmt.Sprintf("worker%d.log", n))}
	tp.workers = append(tp.workers, p)
	require.NoError(tp.t, p.start())
	return p
}

// TestFaultRecoveryWorkerKilledMidTool: the worker running an approved SAP write is killed
// (kill -9) while SAP works on it. The call is retried on the other worker (its write is
// answered from the connector's memory) and the user sees the result soon, not after a
// heartbeat timeout of half a minute.
func TestFaultRecoveryWorkerKilledMidTool(t *testing.T) {
	// Serial: asserts recovery within seconds (see TestMain).
	tp := startTopology(t, topoOptions{apis: 1, workers: 2, bapiLatency: 2 * time.Second})
	tp.connectECC()
	agent := tp.newAgent()
	c := tp.watch("watcher", 0, agent, -1)
	tp.warmUp(agent)

	matnr := tp.someMaterial()
	base := tp.sim.changes(t, "ECC", 0).LatestSeq
	call := tp.proposeRename(c, agent, matnr, "Recovery bolt")
	from := len(c.snapshot())
	tp.approve(agent, call)
	tp.waitWriteArrives()
	w := tp.workerRunning(agent, "ExecuteTool", 1)
	holder := w == tp.conversationHolder(agent)
	killed := time.Now()
	w.kill()

	i := c.waitFor(2*time.Minute, from, "the tool's result", toolDone(call))
	wait := c.snapshot()[i].at.Sub(killed)
	t.Logf("worker killed mid-tool (it also held the conversation: %v): result after %s", holder, wait.Round(10*time.Millisecond))
	tp.restartWorker(w, false)
	tp.mustSettle(agent, 2*time.Minute)
	assert.Equal(t, "Recovery bolt", tp.materialText(matnr))
	// The retry re-sends the write (answered from memory) and waits the simulated SAP's 2 s.
	assert.Less(t, wait, 15*time.Second, "the tool call is retried within seconds of the crash")
	tp.checkInvariants([]string{agent}, []writeExpect{{sid: "ECC", table: "MAKT", after: base, want: 1}})
}

// TestFaultRecoveryWorkerStoppedPastGrace: the worker running an approved write is told to
// stop (SIGTERM) and its stop grace ends before SAP answers. The call is retried on another
// worker right away (not after a heartbeat timeout), runs once, and the user sees no failure.
func TestFaultRecoveryWorkerStoppedPastGrace(t *testing.T) {
	// Serial: asserts recovery within seconds (see TestMain).
	tp := startTopology(t, topoOptions{apis: 1, workers: 0, bapiLatency: 6 * time.Second})
	tp.connectECC()
	// The only worker stops with a 1 s grace: the write (6 s) outlives it.
	short := tp.addWorkerWith("WORKER_STOP_GRACE=1s")
	tp.waitWorker(short)
	agent := tp.newAgent()
	c := tp.watch("watcher", 0, agent, -1)
	tp.warmUp(agent)

	matnr := tp.someMaterial()
	base := tp.sim.changes(t, "ECC", 0).LatestSeq
	call := tp.proposeRename(c, agent, matnr, "Grace bolt")
	from := len(c.snapshot())
	tp.approve(agent, call)
	tp.waitWriteArrives()

	stopped := time.Now()
	short.send(syscall.SIGTERM)
	tp.addWorker() // the deploy's replacement
	assert.True(t, short.waitExit(time.Minute), "the worker ends by itself after SIGTERM")
	i := c.waitFor(2*time.Minute, from, "the tool's result", toolDone(call))
	f := c.snapshot()[i]
	wait := f.at.Sub(stopped)
	t.Logf("worker stopped mid-tool with a 1 s grace: result after %s (%s)", wait.Round(10*time.Millisecond), f.Type)
	tp.mustSettle(agent, 2*time.Minute)
	assert.Equal(t, "tool_update", f.Type, "the user sees no tool failure: %s", f.Error)
	assert.Equal(t, "Grace bolt", tp.materialText(matnr))
	// 1 s grace, then the retry re-sends the write and waits the simulated SAP's 6 s.
	assert.Less(t, wait, 20*time.Second, "the tool call is retried as soon as the grace ends")
	tp.checkInvariants([]string{agent}, []writeExpect{{sid: "ECC", table: "MAKT", after: base, want: 1}})
}

// TestFaultRecoveryConversationWorkerHangs: the worker that holds a conversation hangs
// (SIGSTOP: its connections stay open, as with a frozen VM or a network partition), so the next
// workflow task is handed to it and never answered. Messages are accepted again after the
// conversation's workflow task timeout, not Temporal's default 10 s.
func TestFaultRecoveryConversationWorkerHangs(t *testing.T) {
	// Serial: asserts recovery within seconds (see TestMain).
	tp := startTopology(t, topoOptions{apis: 1, workers: 2})
	agent := tp.newAgent()
	tp.warmUp(agent)
	w := tp.conversationHolder(agent)

	frozen := time.Now()
	w.send(syscall.SIGSTOP)
	accepted, refused := tp.sendUntilAccepted(agent, frozen)
	t.Logf("worker holding the conversation frozen: first message accepted after %s, %d answered 503 before",
		accepted.Round(10*time.Millisecond), refused)
	w.kill()
	tp.restartWorker(w, false)
	tp.mustSettle(agent, 2*time.Minute)
	assert.Less(t, accepted, 8*time.Second, "messages are accepted again within seconds")
	tp.checkInvariants([]string{agent}, nil)
}

// sendUntilAccepted sends messages, as a user retrying after each 503, until one is accepted;
// it returns how long after since that was and how many were refused.
func (tp *topology) sendUntilAccepted(agent string, since time.Time) (time.Duration, int) {
	tp.t.Helper()
	refused := 0
	for n := 1; ; n++ {
		require.Less(tp.t, time.Since(since), 2*time.Minute, "no message accepted two minutes after the fault")
		c, _ := tp.sendWithin(20*time.Second, 0, agent, fmt.Sprintf("sent after the fault (%d)", n))
		switch c.status {
		case http.StatusAccepted:
			return time.Since(since), refused
		case http.StatusServiceUnavailable:
			refused++
			time.Sleep(500 * time.Millisecond) // a client retrying promptly
		default:
			require.FailNow(tp.t, "unexpected answer", "%+v", c)
		}
	}
}

// TestFaultRecoveryConversationWorkerKilled: the worker that holds a conversation (ran its
// last workflow task) is killed while the conversation is idle; a user who keeps sending gets
// 503s only for a few seconds, and every message is answered.
func TestFaultRecoveryConversationWorkerKilled(t *testing.T) {
	// Serial: asserts recovery within seconds (see TestMain).
	tp := startTopology(t, topoOptions{apis: 1, workers: 2})
	agent := tp.newAgent()
	tp.warmUp(agent)
	w := tp.conversationHolder(agent)

	killed := time.Now()
	w.kill()
	accepted, refused := tp.sendUntilAccepted(agent, killed)
	t.Logf("worker holding the conversation killed: first message accepted after %s, %d answered 503 before",
		accepted.Round(10*time.Millisecond), refused)
	tp.restartWorker(w, false)
	tp.mustSettle(agent, 2*time.Minute)
	assert.Less(t, accepted, 4500*time.Millisecond, "messages are accepted again within seconds (the sticky task timeout, 2 s, and a replay)")
	tp.checkInvariants([]string{agent}, nil)
}

// TestFaultRecoveryWorkerKilledMidDeletion: the worker running a workspace deletion's step dies
// (kill -9) while the step waits on Postgres (frozen with SIGSTOP, so the step is surely in
// flight). The step is retried on the other worker within its heartbeat timeout and the deletion
// finishes; the wait includes the deletion's fixed 5 s before its final sweep.
func TestFaultRecoveryWorkerKilledMidDeletion(t *testing.T) {
	// Serial: asserts recovery within seconds (see TestMain).
	tp := startTopology(t, topoOptions{apis: 1, workers: 2})
	agent := tp.newAgent()
	tp.warmUp(agent)

	// Started by the test rather than the API, which needs Postgres to accept the DELETE.
	id := workflows.DeletionWorkflowID(workflows.DeletionWorkspace, tp.ws)
	frozen := tp.pg.signalAll(syscall.SIGSTOP)
	thawed := false
	thaw := func() {
		if !thawed {
			for _, pid := range frozen {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
			thawed = true
		}
	}
	defer thaw()
	run, err := tp.tc.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: "sapagent"},
		workflows.DeleteWorkspaceWorkflowName, workflows.DeletionInput{ID: tp.ws, OrgID: tp.org, RequestedBy: "alice"})
	require.NoError(t, err)
	w := tp.workerRunningWorkflow(id)
	killed := time.Now()
	w.kill()
	thaw()

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var st workflows.DeletionStatus
	require.NoError(t, run.Get(ctx, &st))
	took := time.Since(killed)
	t.Logf("worker killed mid-deletion: deletion done %s after the kill (5 s of it the wait before the final sweep)", took.Round(10*time.Millisecond))
	assert.True(t, st.Done)
	var n int
	require.NoError(t, tp.db.QueryRow(t.Context(), `SELECT count(*) FROM workspaces WHERE id = $1`, tp.ws).Scan(&n))
	assert.Zero(t, n, "the workspace is gone")
	assert.Less(t, took, 20*time.Second, "a crashed step is retried within seconds")
}

// workerRunningWorkflow returns the live worker process that runs a started activity of the
// workflow.
func (tp *topology) workerRunningWorkflow(workflowID string) *proc {
	tp.t.Helper()
	var found *proc
	last := "nothing pending"
	ok := assertEventually(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		d, err := tp.tc.DescribeWorkflowExecution(ctx, workflowID, "")
		if err != nil {
			last = err.Error()
			return false
		}
		for _, pa := range d.PendingActivities {
			last = fmt.Sprintf("%s attempt %d state %s identity %s", pa.ActivityType.GetName(), pa.Attempt, pa.State, pa.LastWorkerIdentity)
			if pa.State != enumspb.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			pid, _, _ := strings.Cut(pa.LastWorkerIdentity, "@")
			for _, w := range tp.workers {
				if strconv.Itoa(w.pid()) == pid && w.running() {
					found = w
					return true
				}
			}
		}
		return false
	}, 20*time.Second)
	require.True(tp.t, ok, "no live worker runs an activity of %s (last seen: %s)", workflowID, last)
	return found
}

// signalAll sends sig to the postmaster and every backend it forked (a stopped postmaster
// alone still lets open connections run queries), returning their pids.
func (s *pgServer) signalAll(sig syscall.Signal) []int {
	s.t.Helper()
	root := s.p.pid()
	require.NotZero(s.t, root)
	pids := []int{root}
	entries, err := os.ReadDir("/proc")
	require.NoError(s.t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: the command may hold spaces, so parse after its ')'.
		rest := string(raw[strings.LastIndexByte(string(raw), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) > 1 && fields[1] == strconv.Itoa(root) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return pids
}
