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
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sapagent/sapagent/internal/tools"
)

// recorder stands in for the activities and remembers what the workflow asked of them.
type recorder struct {
	mu        sync.Mutex
	calls     []string
	turns     []TurnInput
	begins    []BeginTurnInput
	replyErr  error
	replyErrs []error // returned by the first replies, in order (then replyErr)
	storedSeq int64
	// duplicates are message IDs an earlier run already answered
	duplicates map[string]bool
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) register(env *testsuite.TestWorkflowEnvironment) {
	LoadConversation.Register(env, func(ctx context.Context, agentID string) (int64, error) {
		r.note("load")
		return r.storedSeq, nil
	})
	BeginTurn.Register(env, func(ctx context.Context, in BeginTurnInput) (TurnContext, error) {
		r.note("begin:" + in.Message.Content)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.begins = append(r.begins, in)
		return TurnContext{Seq: in.Seq, Duplicate: r.duplicates[in.Message.ID]}, nil
	})
	GenerateReply.Register(env, func(ctx context.Context, in TurnInput) (TurnResult, error) {
		r.note("reply")
		r.mu.Lock()
		defer r.mu.Unlock()
		r.turns = append(r.turns, in)
		err := r.replyErr
		if len(r.replyErrs) > 0 {
			err, r.replyErrs = r.replyErrs[0], r.replyErrs[1:]
		}
		return TurnResult{MessageID: in.MessageID}, err
	})
	SetStatus.Register(env, func(ctx context.Context, in StatusInput) error {
		r.note("status:" + in.Status)
		return nil
	})
	PublishError.Register(env, func(ctx context.Context, in ErrorInput) error {
		r.note("error")
		return nil
	})
	PublishEvent.Register(env, func(ctx context.Context, in EventInput) error {
		r.note("event:" + in.Frame.FrameType())
		return nil
	})
	ParkMessage.Register(env, func(ctx context.Context, in ParkInput) error {
		r.note("park:" + in.Message.Content)
		return nil
	})
}

func newEnv(t *testing.T, r *recorder) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	RegisterWorkflows(env, tools.Default())
	r.register(env)
	return env
}

type updateResult struct {
	res SendMessageResult
	err error
}

func send(env *testsuite.TestWorkflowEnvironment, after time.Duration, id, content string, out *updateResult) {
	env.RegisterDelayedCallback(func() {
		sendUpdate(env, SendMessage, id, UserMessage{ID: id, Content: content, UserID: "alice"}, func(res SendMessageResult, err error) {
			out.res, out.err = res, err
		})
	}, after)
}

func TestMessageRunsOneTurnThenIdlesAndCompletes(t *testing.T) {
	r := &recorder{storedSeq: 4}
	env := newEnv(t, r)
	var first updateResult
	id := uuid.NewString()
	send(env, time.Second, id, "hello", &first)

	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})

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
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
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
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:same", "reply", "status:idle"}, r.calls)
}

func TestValidatorRejectsEmptyAndBadlyIdentifiedMessages(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	var empty, badID updateResult
	send(env, time.Second, uuid.NewString(), "   ", &empty)
	send(env, time.Second, "not-a-uuid", "hi", &badID)
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
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
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:too much", "reply", "error", "status:idle"}, r.calls)
}

func TestContinuedRunKeepsNumberingAndPendingMessages(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	pending := UserMessage{ID: uuid.NewString(), Content: "carried over"}
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour, LastSeq: 10, Pending: []UserMessage{pending}})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"begin:carried over", "reply", "status:idle"}, r.calls, "no reload when the seq is carried")
	assert.Equal(t, int64(11), r.begins[0].Seq)
}

func TestMessageAnsweredByAnEarlierRunGetsNoSecondTurn(t *testing.T) {
	id := uuid.NewString()
	r := &recorder{storedSeq: 2, duplicates: map[string]bool{id: true}}
	env := newEnv(t, r)
	var a updateResult
	send(env, time.Second, id, "sent again after continue-as-new", &a)
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, a.err)
	assert.Equal(t, []string{"load", "begin:sent again after continue-as-new", "status:idle"}, r.calls, "no model call, no ghost turn")
}

func TestModelOutagesAreTriedAgainWithinTheModelBudget(t *testing.T) {
	unavailable := func() error { return temporal.NewApplicationError("model error (HTTP 503)", ErrTypeModelUnavailable) }
	r := &recorder{storedSeq: 2, replyErrs: []error{unavailable(), unavailable()}}
	env := newEnv(t, r)
	var a updateResult
	send(env, time.Second, uuid.NewString(), "hi", &a)
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:hi", "reply", "reply", "reply", "status:idle"}, r.calls, "answered on the third try")
	require.Len(t, r.turns, 3)
	assert.Equal(t, []int{1, 2, 3}, []int{r.turns[0].Try, r.turns[1].Try, r.turns[2].Try})
	assert.Equal(t, r.turns[0].MessageID, r.turns[2].MessageID, "every try writes the same reply")

	r = &recorder{storedSeq: 2, replyErr: unavailable()}
	env = newEnv(t, r)
	send(env, time.Second, uuid.NewString(), "hi", &a)
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"load", "begin:hi", "reply", "reply", "reply", "error", "status:idle"}, r.calls, "three tries, then the error")
}

func TestOutagesOfOurOwnServicesAreWaitedOutNotDropped(t *testing.T) {
	r := &recorder{}
	env := newEnv(t, r)
	var loads, begins int
	LoadConversation.Register(env, func(ctx context.Context, agentID string) (int64, error) {
		loads++
		if loads < 20 {
			return 0, errors.New("dial tcp: connection refused")
		}
		return 3, nil
	})
	BeginTurn.Register(env, func(ctx context.Context, in BeginTurnInput) (TurnContext, error) {
		begins++
		if begins < 20 {
			return TurnContext{}, errors.New("dial tcp: connection refused")
		}
		r.note("begin:" + in.Message.Content)
		return TurnContext{Seq: in.Seq}, nil
	})
	var a updateResult
	send(env, time.Second, uuid.NewString(), "during the outage", &a)
	env.ExecuteWorkflow(ConversationWorkflowName, ConversationInput{AgentID: "a1", IdleTimeout: time.Hour})
	require.NoError(t, env.GetWorkflowError(), "an outage never fails the conversation")
	assert.Equal(t, []string{"begin:during the outage", "reply", "status:idle"}, r.calls)
	require.Len(t, r.turns, 1)
	assert.Equal(t, int64(5), r.turns[0].Seq, "numbering continues after the stored seq")
}
