package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/sapagent/sapagent/internal/tools"
)

// loopFakes script the model (one TurnResult per step) and record tool runs, events and results.
type loopFakes struct {
	mu        sync.Mutex
	steps     []TurnResult
	stepCalls int
	policy    string
	fourEyes  bool // the workspace's four-eyes rule BeginTurn reports
	ran       []string
	deciders  map[string]string // ExecuteTool's DecidedBy by call ID
	published []EventInput
	results   [][]ToolResult
	events    []string
	modelWait time.Duration // the model "streams" this long (for stop tests)
}

func (f *loopFakes) register(env *testsuite.TestWorkflowEnvironment) {
	LoadConversation.Register(env, func(context.Context, string) (int64, error) { return 0, nil })
	BeginTurn.Register(env, func(_ context.Context, in BeginTurnInput) (TurnContext, error) {
		return TurnContext{Policy: f.policy, FourEyes: f.fourEyes, Seq: in.Seq}, nil
	})
	GenerateReply.Register(env, func(ctx context.Context, in TurnInput) (TurnResult, error) {
		f.mu.Lock()
		i := f.stepCalls
		f.stepCalls++
		wait := f.modelWait
		f.mu.Unlock()
		if wait > 0 {
			select {
			case <-ctx.Done():
				return TurnResult{Stopped: true}, nil
			case <-time.After(wait):
			}
		}
		if i >= len(f.steps) {
			return TurnResult{}, nil
		}
		// Like the real activity: the calls come back classified with this deploy's tools.
		res := f.steps[i]
		res.ToolCalls = append([]ToolCall(nil), res.ToolCalls...)
		for j, c := range res.ToolCalls {
			mode, invalid := tools.Default().ClassifyUnder(c.Name, c.Arguments, tools.Rule{Policy: tools.Policy(in.Policy), FourEyes: in.FourEyes})
			res.ToolCalls[j].Mode, res.ToolCalls[j].Invalid = string(mode), invalid
		}
		return res, nil
	})
	ExecuteTool.Register(env, func(_ context.Context, in ToolCallInput) (ToolResult, error) {
		f.mu.Lock()
		f.ran = append(f.ran, in.Call.ID)
		if f.deciders == nil {
			f.deciders = map[string]string{}
		}
		f.deciders[in.Call.ID] = in.DecidedBy
		f.mu.Unlock()
		return ToolResult{ToolCallID: in.Call.ID, Name: in.Call.Name, Content: "ok:" + in.Call.ID}, nil
	})
	SaveToolResults.Register(env, func(_ context.Context, in ToolResultsInput) error {
		f.mu.Lock()
		f.results = append(f.results, in.Results)
		f.mu.Unlock()
		return nil
	})
	PublishEvent.Register(env, func(_ context.Context, in EventInput) error {
		f.mu.Lock()
		f.events = append(f.events, in.Frame.FrameType())
		f.published = append(f.published, in)
		f.mu.Unlock()
		return nil
	})
	SetStatus.Register(env, func(context.Context, StatusInput) error { return nil })
	PublishError.Register(env, func(_ context.Context, in ErrorInput) error {
		f.mu.Lock()
		f.events = append(f.events, "error:"+in.Message)
		f.mu.Unlock()
		return nil
	})
	ParkMessage.Register(env, func(context.Context, ParkInput) error { return nil })
}

func newLoopEnv(f *loopFakes) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	RegisterWorkflows(env, tools.Default())
	f.register(env)
	return env
}

func call(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: args} }

const finalNote = `{"title":"t","body":"b"}`

func sendAt(env *testsuite.TestWorkflowEnvironment, at time.Duration, content string) {
	var r updateResult
	send(env, at, uuid.NewString(), content, &r)
}

// approveAt decides as alice, who sends every message of these tests.
func approveAt(env *testsuite.TestWorkflowEnvironment, at time.Duration, out *updateResult, ds ...Decision) {
	approveAs(env, at, out, ApproveRequest{Decisions: ds, DecidedBy: "alice"})
}

func approveAs(env *testsuite.TestWorkflowEnvironment, at time.Duration, out *updateResult, req ApproveRequest) {
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, Approve, uuid.NewString(), req, func(_ ApproveResult, err error) {
			if err != nil {
				out.err = err
			}
		})
	}, at)
}

func stateAt(env *testsuite.TestWorkflowEnvironment, at time.Duration, out *State) {
	env.RegisterDelayedCallback(func() {
		if st, err := ask(env, ConversationState); err == nil {
			*out = st
		}
	}, at)
}

func run(env *testsuite.TestWorkflowEnvironment, in ConversationInput) {
	in.AgentID = "a1"
	if in.IdleTimeout == 0 {
		in.IdleTimeout = 100 * time.Hour
	}
	env.ExecuteWorkflow(ConversationWorkflowName, in)
}

func TestApprovedWriteRunsAndTheLoopContinues(t *testing.T) {
	f := &loopFakes{policy: string(tools.ReadsOnly), steps: []TurnResult{
		{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote)}},
		{},
	}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	var st State
	stateAt(env, time.Minute, &st)
	var ap updateResult
	approveAt(env, 2*time.Minute, &ap, Decision{ToolCallID: "c1", Approved: true})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, ap.err)
	assert.Equal(t, StatusWaiting, st.Status)
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "c1", st.PendingApprovals[0].ToolCallID)
	assert.Equal(t, []string{"c1"}, f.ran)
	assert.Equal(t, 2, f.stepCalls, "the model sees the result and answers")
	require.Len(t, f.results, 1)
	assert.Equal(t, "ok:c1", f.results[0][0].Content)
	assert.Contains(t, f.events, "approval_needed")
}

func TestRejectedCallBecomesTheRejectionResult(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	var ap updateResult
	approveAt(env, time.Minute, &ap, Decision{ToolCallID: "c1", Approved: false, Reason: "not now"})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, f.ran)
	assert.Equal(t, RejectedResult+": not now", f.results[0][0].Content)
	assert.True(t, f.results[0][0].Rejected)
	assert.Contains(t, f.events, "tool_rejected")
}

func TestMixedGroupRunsReadsAtOnceAndWritesOnlyWhenApproved(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{
		call("r1", tools.ListNotes, `{}`),
		call("w1", tools.SaveNote, finalNote),
		call("w2", tools.SaveNote, `{"title":"x","body":"y"}`),
		call("bad", tools.SaveNote, `{"title":""}`),
		call("nope", "drop_database", `{}`),
	}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "do things")
	var first, dup, unknown updateResult
	approveAt(env, time.Minute, &first, Decision{ToolCallID: "w1", Approved: true})
	approveAt(env, 2*time.Minute, &dup, Decision{ToolCallID: "w1", Approved: false})
	approveAt(env, 3*time.Minute, &unknown, Decision{ToolCallID: "r1", Approved: true})
	var mid State
	stateAt(env, 4*time.Minute, &mid)
	var last updateResult
	approveAt(env, 5*time.Minute, &last, Decision{ToolCallID: "w2", Approved: false})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, first.err)
	require.ErrorContains(t, dup.err, "already decided")
	require.ErrorContains(t, unknown.err, "no pending approval", "auto calls are not approvable")
	require.Len(t, mid.PendingApprovals, 1, "one call still waits after the first decision")
	assert.ElementsMatch(t, []string{"r1", "w1"}, f.ran)
	res := f.results[0]
	require.Len(t, res, 5)
	assert.Equal(t, "ok:r1", res[0].Content)
	assert.Equal(t, "ok:w1", res[1].Content)
	assert.True(t, res[2].Rejected)
	assert.True(t, res[3].IsError)
	assert.Contains(t, res[3].Content, "/title", "invalid arguments become an error the model can correct")
	assert.Equal(t, "unknown tool drop_database", res[4].Content)
}

func TestApprovalTimeoutRejectsWhatIsStillOpen(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	run(env, ConversationInput{ApprovalTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, f.ran)
	assert.Equal(t, RejectedResult+": approval timed out", f.results[0][0].Content)
}

func TestConfirmAfterRunsFirstAndShowsTheResultForApproval(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("e1", tools.ExportNote, `{}`)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "export")
	var st State
	stateAt(env, time.Minute, &st)
	var ap updateResult
	approveAt(env, 2*time.Minute, &ap, Decision{ToolCallID: "e1", Approved: true})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"e1"}, f.ran, "ran once, before approval")
	require.Len(t, st.PendingApprovals, 1)
	require.NotNil(t, st.PendingApprovals[0].Result)
	assert.Equal(t, "ok:e1", st.PendingApprovals[0].Result.Content)
	assert.Equal(t, "ok:e1", f.results[0][0].Content, "approved: the model sees the result")
}

func TestPoliciesChangeWhatAsks(t *testing.T) {
	f := &loopFakes{policy: string(tools.RunEverything), steps: []TurnResult{{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"c1"}, f.ran)
	assert.NotContains(t, f.events, "approval_needed")

	f = &loopFakes{policy: string(tools.AskEveryTime), steps: []TurnResult{{ToolCalls: []ToolCall{call("r1", tools.ListNotes, `{}`)}}, {}}}
	env = newLoopEnv(f)
	sendAt(env, time.Second, "list")
	run(env, ConversationInput{ApprovalTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Empty(t, f.ran, "even reads ask")
}

func TestMaxStepsEndsTheTurn(t *testing.T) {
	steps := make([]TurnResult, 10)
	for i := range steps {
		steps[i] = TurnResult{ToolCalls: []ToolCall{call(uuid.NewString(), tools.ListNotes, `{}`)}}
	}
	f := &loopFakes{steps: steps}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "loop")
	run(env, ConversationInput{MaxSteps: 3})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 3, f.stepCalls)
	require.NotEmpty(t, f.events)
	assert.Contains(t, f.events[len(f.events)-1], "after 3 model steps")
}

func TestStopWhileWaitingForApprovalAnswersEveryCall(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote), call("r1", tools.ListNotes, `{}`)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	var stop StopResult
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, StopTurn, "stop-1", StopRequest{}, func(res StopResult, _ error) { stop = res })
	}, time.Minute)
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, stop.Stopped)
	assert.Equal(t, 1, f.stepCalls, "no further model step after a stop")
	require.Len(t, f.results, 1)
	assert.Equal(t, StoppedResult, f.results[0][0].Content)
	assert.Equal(t, "ok:r1", f.results[0][1].Content)
	assert.Contains(t, f.events, "stopped")
}

func TestStopWhileStreamingCancelsTheModel(t *testing.T) {
	f := &loopFakes{modelWait: 3 * time.Second} // real time: the test clock does not run while an activity does
	env := newLoopEnv(f)
	env.SetTestTimeout(30 * time.Second)
	sendAt(env, time.Second, "long answer")
	var stop StopResult
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, StopTurn, "stop-1", StopRequest{}, func(res StopResult, _ error) { stop = res })
	}, time.Second+100*time.Millisecond)
	sendAt(env, time.Second+200*time.Millisecond, "next question")
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, stop.Stopped)
	assert.Contains(t, f.events, "stopped")
	assert.Equal(t, 2, f.stepCalls, "the next message is answered after the stop")
}

func TestQueueIsBounded(t *testing.T) {
	f := &loopFakes{modelWait: 2 * time.Second}
	env := newLoopEnv(f)
	env.SetTestTimeout(30 * time.Second)
	results := make([]updateResult, 4)
	for i := range results {
		send(env, time.Second+time.Duration(i)*time.Millisecond, uuid.NewString(), "m", &results[i])
	}
	run(env, ConversationInput{MaxQueued: 2})
	require.NoError(t, results[0].err)
	require.NoError(t, results[1].err)
	require.NoError(t, results[2].err)
	require.Error(t, results[3].err, "the first runs, two wait, the fourth is refused")
	assert.Contains(t, results[3].err.Error(), "already waiting")
}

func TestContinueAsNewWaitsForTheTurnBoundaryAndCarriesQueuedInput(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("c1", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	env.SetContinueAsNewSuggested(true)
	var first, second updateResult
	firstID, secondID := uuid.NewString(), uuid.NewString()
	send(env, time.Second, firstID, "save it", &first)
	send(env, 2*time.Second, secondID, "and then this", &second)
	var ap updateResult
	approveAt(env, time.Minute, &ap, Decision{ToolCallID: "c1", Approved: true})
	run(env, ConversationInput{LastSeq: 7})

	require.NoError(t, ap.err, "the approval arrives in the same run: no continue-as-new mid-turn")
	require.NoError(t, second.err)
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next ConversationInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Len(t, next.Pending, 1, "the queued message moves to the next run")
	assert.Equal(t, secondID, next.Pending[0].ID)
	assert.True(t, next.Pending[0].Parked, "its content was parked in Postgres")
	assert.Empty(t, next.Pending[0].Content, "the next run's input carries IDs, not contents")
	// user 8, assistant 9, tool result 10, assistant 11
	assert.Equal(t, int64(11), next.LastSeq)
	assert.Equal(t, []string{"c1"}, f.ran)
}

func TestInvalidAndExcessCallsBecomeErrorResultsWithoutRunning(t *testing.T) {
	calls := []ToolCall{call("c1", "no_such_tool", "{}"), call("c2", tools.ListNotes, `{"limit":"many"}`), call("c3", tools.ListNotes, "{}")}
	f := &loopFakes{steps: []TurnResult{{ToolCalls: calls}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "go")
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"c3"}, f.ran, "only the valid call runs")
	require.Len(t, f.results, 1)
	assert.Contains(t, f.results[0][0].Content, "unknown tool no_such_tool")
	assert.True(t, f.results[0][1].IsError)
	assert.Equal(t, "ok:c3", f.results[0][2].Content)
}

func TestRecordedModeIsFollowedEvenIfToolsChanged(t *testing.T) {
	// The model activity of an earlier deploy decided "auto" for a tool this deploy would ask
	// about: the waiting conversation keeps the recorded decision.
	f := &loopFakes{}
	env := newLoopEnv(f)
	GenerateReply.Register(env, func(ctx context.Context, in TurnInput) (TurnResult, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stepCalls++
		if f.stepCalls == 1 {
			return TurnResult{ToolCalls: []ToolCall{{ID: "c1", Name: tools.SaveNote, Arguments: finalNote, Mode: string(tools.Auto)}}}, nil
		}
		return TurnResult{}, nil
	})
	sendAt(env, time.Second, "save")
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"c1"}, f.ran, "ran without asking, as recorded")
	assert.NotContains(t, f.events, "approval_needed")
}

func TestStopDuringTurnStartEndsTheTurnBeforeTheModel(t *testing.T) {
	f := &loopFakes{}
	env := newLoopEnv(f)
	env.SetTestTimeout(30 * time.Second)
	BeginTurn.Register(env, func(_ context.Context, in BeginTurnInput) (TurnContext, error) {
		time.Sleep(500 * time.Millisecond) // real time: the stop arrives while the message is being recorded
		return TurnContext{Seq: in.Seq}, nil
	})
	sendAt(env, time.Second, "hello")
	var stop StopResult
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, StopTurn, "stop-1", StopRequest{}, func(res StopResult, _ error) { stop = res })
	}, time.Second+time.Millisecond)
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, stop.Stopped)
	assert.Contains(t, f.events, "stopped")
	assert.Zero(t, f.stepCalls, "no model call after the stop")
}

// The next run keeps the short workflow task timeout the API starts conversations with, so a
// hung worker blocks a long conversation no longer than a new one.
func TestContinueAsNewKeepsTheConversationTaskTimeout(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{}}}
	env := newLoopEnv(f)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{WorkflowTaskTimeout: ConversationTaskTimeout})
	env.SetContinueAsNewSuggested(true)
	sendAt(env, time.Second, "hello")
	run(env, ConversationInput{})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	assert.Equal(t, ConversationTaskTimeout, can.WorkflowTaskTimeout)
}
