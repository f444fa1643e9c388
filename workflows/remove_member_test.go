package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/tools"
)

// removal records what the conversation asked DropMessages to forget and what it began.
type removal struct {
	dropped []DropMessagesInput
	begun   []string // contents of the messages whose turn began
}

func (r *removal) register(env *testsuite.TestWorkflowEnvironment, f *loopFakes) {
	DropMessages.Register(env, func(_ context.Context, in DropMessagesInput) error {
		f.mu.Lock()
		r.dropped = append(r.dropped, in)
		f.mu.Unlock()
		return nil
	})
	BeginTurn.Register(env, func(_ context.Context, in BeginTurnInput) (TurnContext, error) {
		f.mu.Lock()
		r.begun = append(r.begun, in.Message.Content)
		f.mu.Unlock()
		return TurnContext{Policy: f.policy, Seq: in.Seq}, nil
	})
}

func sendAs(env *testsuite.TestWorkflowEnvironment, at time.Duration, user, id, content string) {
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, SendMessage, id, UserMessage{ID: id, Content: content, UserID: user}, func(SendMessageResult, error) {})
	}, at)
}

func removeAt(env *testsuite.TestWorkflowEnvironment, at time.Duration, user string, out *RemoveMemberResult, outErr *error) {
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, RemoveMember, uuid.NewString(), RemoveMemberRequest{UserID: user}, func(res RemoveMemberResult, err error) {
			*out, *outErr = res, err
		})
	}, at)
}

// A removed member's queued messages are dropped (clients told, parked contents forgotten)
// while another member's turn runs; the other members' messages are still answered.
func TestRemovedMembersQueuedMessagesNeverRun(t *testing.T) {
	f := &loopFakes{modelWait: 2 * time.Second} // real time: the test clock stands still while the model "streams"
	r := &removal{}
	env := newLoopEnv(f)
	r.register(env, f)
	env.SetTestTimeout(30 * time.Second)
	sendAs(env, time.Second, "alice", uuid.NewString(), "alice first")
	bob1, bob2 := uuid.NewString(), uuid.NewString()
	sendAs(env, time.Second+10*time.Millisecond, "bob", bob1, "bob one")
	sendAs(env, time.Second+20*time.Millisecond, "carol", uuid.NewString(), "carol")
	sendAs(env, time.Second+30*time.Millisecond, "bob", bob2, "bob two")
	var res RemoveMemberResult
	var err error
	removeAt(env, time.Second+100*time.Millisecond, "bob", &res, &err)
	var empty error
	removeAt(env, time.Second+200*time.Millisecond, " ", &RemoveMemberResult{}, &empty)
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())

	require.NoError(t, err)
	assert.Equal(t, RemoveMemberResult{Dropped: 2}, res, "alice's turn is not hers: it goes on")
	assert.ErrorContains(t, empty, "user_id is required")
	assert.Equal(t, []string{"alice first", "carol"}, r.begun, "bob's messages never start a turn")
	require.Len(t, r.dropped, 1)
	assert.Equal(t, []string{bob1, bob2}, r.dropped[0].MessageIDs)
	assert.Equal(t, RemovedSenderReason, r.dropped[0].Reason)
}

// Her parked messages (carried over continue-as-new) are dropped the same way.
func TestRemovedMembersParkedMessagesAreDropped(t *testing.T) {
	f := &loopFakes{modelWait: 2 * time.Second}
	r := &removal{}
	env := newLoopEnv(f)
	r.register(env, f)
	env.SetTestTimeout(30 * time.Second)
	parked := uuid.NewString()
	var res RemoveMemberResult
	var err error
	removeAt(env, 100*time.Millisecond, "bob", &res, &err)
	run(env, ConversationInput{LastSeq: 3, Pending: []UserMessage{
		{ID: uuid.NewString(), UserID: "alice", Parked: true}, {ID: parked, UserID: "bob", Parked: true}}})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, err)
	assert.Equal(t, 1, res.Dropped)
	require.Len(t, r.dropped, 1)
	assert.Equal(t, []string{parked}, r.dropped[0].MessageIDs)
	assert.Len(t, r.begun, 1, "only alice's parked message runs")
}

// Her write waiting for approval is rejected with the reason (tool_rejected, as any
// rejection), never runs, and her turn stops; a later approval finds nothing to approve.
func TestRemovedRequestersPendingWriteIsRejectedAndHerTurnStops(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("w1", tools.SaveNote, finalNote), call("r1", tools.ListNotes, `{}`)}}, {}}}
	r := &removal{}
	env := newLoopEnv(f)
	r.register(env, f)
	sendAs(env, time.Second, "bob", uuid.NewString(), "save it")
	var res RemoveMemberResult
	var err error
	removeAt(env, time.Minute, "bob", &res, &err)
	var late updateResult
	approveAs(env, 2*time.Minute, &late, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "carol", FourEyes: true})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())

	require.NoError(t, err)
	assert.Equal(t, RemoveMemberResult{Rejected: 1, Stopped: true}, res)
	assert.Equal(t, []string{"r1"}, f.ran, "the read ran before; the write never")
	rejected, ok := eventOf[frames.ToolRejected](f)
	require.True(t, ok)
	assert.Equal(t, "w1", rejected.ToolCallID)
	assert.Equal(t, RemovedRequesterReason, rejected.Reason)
	stopped, ok := eventOf[frames.Stopped](f)
	require.True(t, ok)
	assert.Equal(t, RemovedSenderReason, stopped.Reason)
	assert.Equal(t, 1, f.stepCalls, "no further model step for her")
	require.Len(t, f.results, 1)
	assert.Equal(t, RejectedResult+": "+RemovedRequesterReason, f.results[0][0].Content)
	assert.True(t, f.results[0][0].Rejected)
	require.Error(t, late.err, "nothing is left to approve")
}

// Removing someone with nothing in the conversation changes nothing.
func TestRemovingAnotherMemberLeavesTheTurnAlone(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("w1", tools.SaveNote, finalNote)}}, {}}}
	r := &removal{}
	env := newLoopEnv(f)
	r.register(env, f)
	sendAs(env, time.Second, "alice", uuid.NewString(), "save it")
	var res RemoveMemberResult
	var err error
	removeAt(env, time.Minute, "bob", &res, &err)
	var ok updateResult
	approveAt(env, 2*time.Minute, &ok, Decision{ToolCallID: "w1", Approved: true})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, err)
	assert.Equal(t, RemoveMemberResult{}, res)
	require.NoError(t, ok.err)
	assert.Equal(t, []string{"w1"}, f.ran)
	assert.Empty(t, r.dropped)
	assert.NotContains(t, f.events, "stopped")
}

// A turn whose sender was removed before it began (BeginTurn refuses it) ends at once with an
// error naming the message, is not retried, and the next message is answered.
func TestTurnOfARemovedSenderIsRefusedOnceAndTheNextRuns(t *testing.T) {
	f := &loopFakes{}
	env := newLoopEnv(f)
	var begins []string
	var errs []ErrorInput
	BeginTurn.Register(env, func(_ context.Context, in BeginTurnInput) (TurnContext, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		begins = append(begins, in.Message.UserID)
		if in.Message.UserID == "bob" {
			return TurnContext{}, temporal.NewNonRetryableApplicationError("message not answered: "+RemovedSenderReason, ErrTypeNotMember, nil)
		}
		return TurnContext{Seq: in.Seq}, nil
	})
	PublishError.Register(env, func(_ context.Context, in ErrorInput) error {
		f.mu.Lock()
		errs = append(errs, in)
		f.mu.Unlock()
		return nil
	})
	bob := uuid.NewString()
	sendAs(env, time.Second, "bob", bob, "bob's")
	sendAs(env, 2*time.Second, "alice", uuid.NewString(), "alice's")
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"bob", "alice"}, begins, "tried once, never retried")
	require.Len(t, errs, 1)
	assert.Equal(t, "message not answered: "+RemovedSenderReason, errs[0].Message)
	assert.Equal(t, bob, errs[0].MessageID)
	assert.Equal(t, 1, f.stepCalls, "only alice's message reaches the model")
}
