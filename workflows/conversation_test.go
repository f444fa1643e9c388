package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// recorder stands in for the activities and remembers what the workflow asked of them.
type recorder struct {
	mu        sync.Mutex
	calls     []string
	turns     []TurnInput
	begins    []BeginTurnInput
	replyErr  error
	storedSeq int64
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(ctx context.Context, agentID string) (int64, error) {
		r.note("load")
		return r.storedSeq, nil
	}, activity.RegisterOptions{Name: ActivityLoadConversation})
	env.RegisterActivityWithOptions(func(ctx context.Context, in BeginTurnInput) error {
		r.note("begin:" + in.Message.Content)
		r.mu.Lock()
		r.begins = append(r.begins, in)
		r.mu.Unlock()
		return nil
	}, activity.RegisterOptions{Name: ActivityBeginTurn})
	env.RegisterActivityWithOptions(func(ctx context.Context, in TurnInput) (TurnResult, error) {
		r.note("reply")
		r.mu.Lock()
		r.turns = append(r.turns, in)
		r.mu.Unlock()
		return TurnResult{MessageID: in.MessageID}, r.replyErr
	}, activity.RegisterOptions{Name: ActivityGenerateReply})
	env.RegisterActivityWithOptions(func(ctx context.Context, in StatusInput) error {
		r.note("status:" + in.Status)
		return nil
	}, activity.RegisterOptions{Name: ActivitySetStatus})
	env.RegisterActivityWithOptions(func(ctx context.Context, in ErrorInput) error {
		r.note("error")
		return nil
	}, activity.RegisterOptions{Name: ActivityPublishError})
}

func newEnv(t *testing.T, r *recorder) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Conversation)
	r.register(env)
	return env
}

type updateResult struct {
	res SendMessageResult
	err error
}

func send(env *testsuite.TestWorkflowEnvironment, after time.Duration, id, content string, out *updateResult) {
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateSendMessage, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { out.err = err },
			OnComplete: func(v interface{}, err error) {
				if err != nil {
					out.err = err
					return
				}
				out.res = v.(SendMessageResult)
			},
		}, UserMessage{ID: id, Content: content})
	}, after)
}

func TestMessageRunsOneTurnThenIdlesAndCompletes(t *testing.T) {
	r := &recorder{storedSeq: 4}
	env := newEnv(t, r)
	var first updateResult
	id := uuid.NewString()
	send(env, time.Second, id, "hello", &first)

	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "an idle conversation completes cleanly")
	require.NoError(t, first.err)
	assert.Equal(t, id, first.res.MessageID)
	assert.Equal(t, []string{"load", "begin:hello", "reply", "status:idle"}, r.calls)
	// Numbering continues after what Postgres holds; the reply gets the next seq and an ID
	// derived from the message ID (stable across retries and replays).
	require.Len(t, r.begins, 1)
	assert.Equal(t, int64(5), r.begins[0].Seq)
	require.Len(t, r.turns, 1)
	assert.Equal(t, int64(6), r.turns[0].Seq)
	assert.Equal(t, uuid.NewSHA1(replyNamespace, []byte(id)).String(), r.turns[0].MessageID)
}

func TestMessagesArrivingDuringATurnAreAnsweredInOrder(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	var a, b, c updateResult
	send(env, time.Second, uuid.NewString(), "one", &a)
	send(env, time.Second, uuid.NewString(), "two", &b)
	send(env, time.Second, uuid.NewString(), "three", &c)
	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:one", "reply", "begin:two", "reply", "begin:three", "reply", "status:idle"}, r.calls)
	assert.Equal(t, 2, c.res.Queued, "the third message waits behind two")
}

func TestDuplicateMessageIDIsQueuedOnce(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	id := uuid.NewString()
	var a, b updateResult
	send(env, time.Second, id, "same", &a)
	send(env, time.Second, id, "same", &b)
	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:same", "reply", "status:idle"}, r.calls)
}

func TestValidatorRejectsEmptyAndBadlyIdentifiedMessages(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	var empty, badID updateResult
	send(env, time.Second, uuid.NewString(), "   ", &empty)
	send(env, time.Second, "not-a-uuid", "hi", &badID)
	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	require.Error(t, empty.err)
	assert.Contains(t, empty.err.Error(), "empty")
	require.Error(t, badID.err)
	assert.Equal(t, []string{"load"}, r.calls, "rejected messages never reach a turn")
}

func TestModelFailureIsReportedAndTheConversationStaysUsable(t *testing.T) {
	r := &recorder{replyErr: temporal.NewNonRetryableApplicationError("context too long", ErrTypeModelRejected, errors.New("400"))}
	env := newEnv(t, r)
	var a updateResult
	send(env, time.Second, uuid.NewString(), "too much", &a)
	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:too much", "reply", "error", "status:idle"}, r.calls)
}

func TestContinuedRunKeepsNumberingAndPendingMessages(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	pending := UserMessage{ID: uuid.NewString(), Content: "carried over"}
	env.ExecuteWorkflow(Conversation, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour, LastSeq: 10, Pending: []UserMessage{pending}})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"begin:carried over", "reply", "status:idle"}, r.calls, "no reload when the seq is carried")
	assert.Equal(t, int64(11), r.begins[0].Seq)
}
