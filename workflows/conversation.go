// Package workflows holds deterministic workflow code only: no I/O, no clocks, no goroutines,
// no map iteration. Side effects live in package activities and are referenced by name here.
package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activity names (registered by package activities under exactly these names).
const (
	ActivityLoadConversation = "LoadConversation"
	ActivityBeginTurn        = "BeginTurn"
	ActivitySetStatus        = "SetStatus"
	ActivityGenerateReply    = "GenerateReply"
	ActivityPublishError     = "PublishError"
)

// ErrTypeModelRejected marks a model request the provider refused (e.g. context too long):
// retrying the same request cannot help.
const ErrTypeModelRejected = "ModelRejected"

// DefaultIdleTimeout is used when the input leaves IdleTimeout unset.
const DefaultIdleTimeout = 7 * 24 * time.Hour

// replyNamespace derives the assistant message ID from the user message ID, so the ID is
// deterministic on replay and stable across activity retries.
var replyNamespace = uuid.MustParse("6f1c2a7e-4b8d-4a51-9a3e-5d0c9b7e2f10")

type conversation struct {
	in      ConversationInput
	status  string
	lastSeq int64
	queue   []UserMessage
	seen    map[string]bool // message IDs accepted by this run
}

// Conversation is the workflow of one agent: the single writer of its transcript. It waits
// for messages, answers them one turn at a time, and completes after an idle period.
func Conversation(ctx workflow.Context, in ConversationInput) error {
	if in.IdleTimeout <= 0 {
		in.IdleTimeout = DefaultIdleTimeout
	}
	c := &conversation{in: in, status: StatusIdle, lastSeq: in.LastSeq, queue: in.Pending, seen: map[string]bool{}}
	for _, m := range in.Pending {
		c.seen[m.ID] = true
	}
	if err := c.registerHandlers(ctx); err != nil {
		return err
	}
	workflow.SetCurrentDetails(ctx, c.details())

	if c.lastSeq == 0 {
		// A new run of an existing conversation continues numbering after what Postgres holds.
		lctx := workflow.WithLocalActivityOptions(ctx, localOptions("load conversation"))
		if err := workflow.ExecuteLocalActivity(lctx, ActivityLoadConversation, in.AgentID).Get(ctx, &c.lastSeq); err != nil {
			return err
		}
	}

	for {
		got, err := workflow.AwaitWithTimeout(ctx, in.IdleTimeout, func() bool { return len(c.queue) > 0 })
		if err != nil {
			return err
		}
		if !got {
			// Idle long enough: finish. Handlers still running may have queued a message.
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			if len(c.queue) > 0 {
				continue
			}
			return nil
		}
		msg := c.queue[0]
		c.queue = c.queue[1:]
		c.runTurn(ctx, msg)

		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return err
			}
			next := c.in
			next.LastSeq = c.lastSeq
			next.Pending = c.queue
			return workflow.NewContinueAsNewError(ctx, Conversation, next)
		}
	}
}

func (c *conversation) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) {
		return State{Status: c.status, LastSeq: c.lastSeq, Queued: len(c.queue)}, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateSendMessage,
		func(ctx workflow.Context, m UserMessage) (SendMessageResult, error) {
			if !c.seen[m.ID] {
				c.seen[m.ID] = true
				c.queue = append(c.queue, m)
			}
			ahead := len(c.queue) - 1
			if c.status == StatusActive {
				ahead++
			}
			return SendMessageResult{MessageID: m.ID, Queued: ahead}, nil
		},
		workflow.UpdateHandlerOptions{Validator: validateUserMessage})
}

// validateUserMessage runs before an update enters history: a rejected message leaves no trace.
func validateUserMessage(_ workflow.Context, m UserMessage) error {
	if strings.TrimSpace(m.Content) == "" {
		return errors.New("message content is empty")
	}
	if _, err := uuid.Parse(m.ID); err != nil {
		return fmt.Errorf("message id %q is not a UUID", m.ID)
	}
	return nil
}

func (c *conversation) runTurn(ctx workflow.Context, msg UserMessage) {
	c.lastSeq++
	c.status = StatusActive
	workflow.SetCurrentDetails(ctx, c.details())
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("record user message"))
	begin := BeginTurnInput{AgentID: c.in.AgentID, Message: msg, Seq: c.lastSeq, EventID: "turn:" + msg.ID + ":begin"}
	if err := workflow.ExecuteLocalActivity(lctx, ActivityBeginTurn, begin).Get(ctx, nil); err != nil {
		// The message could not be stored: tell the clients, keep the conversation alive.
		c.lastSeq--
		c.publishError(ctx, msg.ID, "could not record the message: "+err.Error())
		c.finishTurn(ctx, msg.ID)
		return
	}

	c.lastSeq++
	turn := TurnInput{
		AgentID:   c.in.AgentID,
		MessageID: uuid.NewSHA1(replyNamespace, []byte(msg.ID)).String(),
		Seq:       c.lastSeq,
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "model reply",
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{ErrTypeModelRejected},
		},
	})
	var res TurnResult
	if err := workflow.ExecuteActivity(actx, ActivityGenerateReply, turn).Get(ctx, &res); err != nil {
		c.publishError(ctx, msg.ID, "the model did not answer: "+rootMessage(err))
	}
	c.finishTurn(ctx, msg.ID)
}

// finishTurn goes idle unless more messages are waiting.
func (c *conversation) finishTurn(ctx workflow.Context, msgID string) {
	if len(c.queue) > 0 {
		return
	}
	c.status = StatusIdle
	workflow.SetCurrentDetails(ctx, c.details())
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("status idle"))
	in := StatusInput{AgentID: c.in.AgentID, Status: StatusIdle, EventID: "turn:" + msgID + ":idle"}
	if err := workflow.ExecuteLocalActivity(lctx, ActivitySetStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("status not recorded", "error", err)
	}
}

func (c *conversation) publishError(ctx workflow.Context, msgID, text string) {
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("publish error"))
	in := ErrorInput{AgentID: c.in.AgentID, Message: text, EventID: "turn:" + msgID + ":error"}
	if err := workflow.ExecuteLocalActivity(lctx, ActivityPublishError, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("error event not published", "error", err)
	}
}

// details is the markdown operators see as the workflow's current details in the Temporal UI.
func (c *conversation) details() string {
	return fmt.Sprintf("**status:** %s  \n**messages:** %d  \n**queued:** %d", c.status, c.lastSeq, len(c.queue))
}

func localOptions(summary string) workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		Summary:             summary,
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaximumAttempts: 5},
	}
}

// rootMessage is the innermost error text (the activity's own message, not the wrappers').
func rootMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
