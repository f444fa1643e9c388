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

	"github.com/sapagent/sapagent/internal/tools"
)

// Activity names (registered by package activities under exactly these names).
const (
	ActivityLoadConversation = "LoadConversation"
	ActivityBeginTurn        = "BeginTurn"
	ActivitySetStatus        = "SetStatus"
	ActivityGenerateReply    = "GenerateReply"
	ActivityPublishError     = "PublishError"
	ActivityExecuteTool      = "ExecuteTool"
	ActivitySaveToolResults  = "SaveToolResults"
	ActivityPublishEvent     = "PublishEvent"
	ActivityGenerateTitle    = "GenerateTitle"
)

// Defaults of the loop's bounds.
const (
	DefaultMaxSteps        = 25
	DefaultMaxQueued       = 20
	DefaultApprovalTimeout = 24 * time.Hour
)

// RejectedResult is what the model sees for a call the user rejected.
const RejectedResult = "User rejected this tool call"

// StoppedResult is what the model sees for a call cut short by the user's stop.
const StoppedResult = "The user stopped the turn before this tool call completed"

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

	cancelTurn workflow.CancelFunc // stops the running turn's activities and waits
	stopped    bool                // the user asked to stop the running turn
	pending    []*approval         // the current approval group, in call order
}

type approval struct {
	PendingApproval
	decided  bool
	approved bool
	reason   string
}

// Conversation is the workflow of one agent: the single writer of its transcript. It waits
// for messages, answers them one turn at a time, and completes after an idle period.
func Conversation(ctx workflow.Context, in ConversationInput) error {
	if in.IdleTimeout <= 0 {
		in.IdleTimeout = DefaultIdleTimeout
	}
	if in.MaxSteps <= 0 {
		in.MaxSteps = DefaultMaxSteps
	}
	if in.MaxQueued <= 0 {
		in.MaxQueued = DefaultMaxQueued
	}
	if in.ApprovalTimeout <= 0 {
		in.ApprovalTimeout = DefaultApprovalTimeout
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

		if shouldContinueAsNew(ctx) {
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
		st := State{Status: c.status, LastSeq: c.lastSeq, Queued: len(c.queue), PendingApprovals: []PendingApproval{}}
		for _, a := range c.pending {
			if !a.decided {
				st.PendingApprovals = append(st.PendingApprovals, a.PendingApproval)
			}
		}
		return st, nil
	}); err != nil {
		return err
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateSendMessage,
		func(ctx workflow.Context, m UserMessage) (SendMessageResult, error) {
			if !c.seen[m.ID] {
				c.seen[m.ID] = true
				c.queue = append(c.queue, m)
			}
			ahead := len(c.queue) - 1
			if c.status != StatusIdle {
				ahead++
			}
			return SendMessageResult{MessageID: m.ID, Queued: ahead}, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, m UserMessage) error {
			if err := validateUserMessage(ctx, m); err != nil {
				return err
			}
			if !c.seen[m.ID] && len(c.queue) >= c.in.MaxQueued {
				return temporal.NewApplicationError(fmt.Sprintf("%d messages are already waiting; try again when the agent has answered", len(c.queue)), ErrTypeQueueFull)
			}
			return nil
		}})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove,
		func(ctx workflow.Context, req ApproveRequest) (ApproveResult, error) {
			for _, d := range req.Decisions {
				a := c.findPending(d.ToolCallID)
				a.decided, a.approved, a.reason = true, d.Approved, d.Reason
			}
			return ApproveResult{Remaining: c.undecided()}, nil
		},
		workflow.UpdateHandlerOptions{Validator: c.validateDecisions})
	if err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, UpdateStop, func(ctx workflow.Context) (StopResult, error) {
		if c.status == StatusIdle || c.cancelTurn == nil {
			return StopResult{}, nil
		}
		c.stopped = true
		c.cancelTurn()
		return StopResult{Stopped: true}, nil
	})
}

// validateDecisions rejects decisions for calls that are not pending or already decided;
// rejected updates never enter history.
func (c *conversation) validateDecisions(_ workflow.Context, req ApproveRequest) error {
	if len(req.Decisions) == 0 {
		return errors.New("no decisions given")
	}
	seen := map[string]bool{}
	for _, d := range req.Decisions {
		a := c.findPending(d.ToolCallID)
		if a == nil {
			return temporal.NewApplicationError("no pending approval for tool call "+d.ToolCallID, ErrTypeUnknownToolCall)
		}
		if a.decided || seen[d.ToolCallID] {
			return temporal.NewApplicationError("tool call "+d.ToolCallID+" is already decided", ErrTypeAlreadyDecided)
		}
		seen[d.ToolCallID] = true
	}
	return nil
}

func (c *conversation) findPending(id string) *approval {
	for _, a := range c.pending {
		if a.ToolCallID == id {
			return a
		}
	}
	return nil
}

func (c *conversation) undecided() int {
	n := 0
	for _, a := range c.pending {
		if !a.decided {
			n++
		}
	}
	return n
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
	c.stopped = false
	workflow.SetCurrentDetails(ctx, c.details())
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("record user message"))
	begin := BeginTurnInput{AgentID: c.in.AgentID, Message: msg, Seq: c.lastSeq, EventID: "turn:" + msg.ID + ":begin"}
	var tc TurnContext
	if err := workflow.ExecuteLocalActivity(lctx, ActivityBeginTurn, begin).Get(ctx, &tc); err != nil {
		// The message could not be stored: tell the clients, keep the conversation alive.
		c.lastSeq--
		c.publishError(ctx, msg.ID, "could not record the message: "+err.Error())
		c.finishTurn(ctx, msg.ID)
		return
	}

	// The first message of a conversation names it, alongside the reply. Runs recorded before
	// titles existed replay without it (GetVersion).
	var title workflow.Future
	if begin.Seq == 1 && workflow.GetVersion(ctx, "title", workflow.DefaultVersion, 1) == 1 {
		tctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			Summary: "title", StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 2, NonRetryableErrorTypes: []string{ErrTypeModelRejected}},
		})
		title = workflow.ExecuteActivity(tctx, ActivityGenerateTitle, c.in.AgentID)
	}
	defer func() {
		if title != nil {
			if err := title.Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("no title", "error", err)
			}
		}
	}()

	turnCtx, cancel := workflow.WithCancel(ctx)
	c.cancelTurn = cancel
	defer func() { c.cancelTurn = nil; cancel() }()
	for step := 0; ; step++ {
		if step >= c.in.MaxSteps {
			c.publishError(ctx, msg.ID, fmt.Sprintf("stopped after %d model steps without a final answer (MAX_LOOP_STEPS)", c.in.MaxSteps))
			break
		}
		res, err := c.modelStep(turnCtx, msg, step, tc.Model)
		if c.stopped || res.Stopped {
			c.publishStopped(ctx, msg.ID)
			break
		}
		if err != nil {
			c.publishError(ctx, msg.ID, "the model did not answer: "+rootMessage(err))
			break
		}
		if len(res.ToolCalls) == 0 {
			break
		}
		results := c.runTools(turnCtx, msg, res.ToolCalls, tools.Policy(tc.Policy))
		// Results are stored even after a stop: every call the model made gets an answer, so
		// the transcript stays valid for the next turn.
		if err := c.saveToolResults(ctx, results); err != nil {
			c.publishError(ctx, msg.ID, "could not record tool results: "+rootMessage(err))
			break
		}
		if c.stopped {
			c.publishStopped(ctx, msg.ID)
			break
		}
	}
	c.finishTurn(ctx, msg.ID)
}

// modelStep streams one model reply (activity GenerateReply) and returns its tool calls.
func (c *conversation) modelStep(ctx workflow.Context, msg UserMessage, step int, model string) (TurnResult, error) {
	c.lastSeq++
	replyKey := msg.ID
	if step > 0 {
		replyKey = fmt.Sprintf("%s:%d", msg.ID, step)
	}
	turn := TurnInput{
		AgentID:   c.in.AgentID,
		MessageID: uuid.NewSHA1(replyNamespace, []byte(replyKey)).String(),
		Seq:       c.lastSeq,
		Step:      step,
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             strings.TrimSpace("model reply " + model),
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    10 * time.Second, // a crashed worker's attempt is retried after this
		WaitForCancellation: true,             // a stopped reply saves its partial text before the turn ends
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{ErrTypeModelRejected},
		},
	})
	var res TurnResult
	err := workflow.ExecuteActivity(actx, ActivityGenerateReply, turn).Get(ctx, &res)
	return res, err
}

// runTools classifies a step's calls by policy, asks for approvals, and runs what may run
// (in parallel), returning one result per call in call order.
func (c *conversation) runTools(ctx workflow.Context, msg UserMessage, calls []ToolCall, policy tools.Policy) []ToolResult {
	reg := tools.Default()
	results := make([]ToolResult, len(calls))
	modes := make([]tools.Mode, len(calls))
	c.pending = nil
	for i, call := range calls {
		def, ok := reg.Get(call.Name)
		if !ok {
			results[i] = ToolResult{ToolCallID: call.ID, Name: call.Name, IsError: true, Content: "unknown tool " + call.Name}
			continue
		}
		args, err := def.ParseArguments(call.Arguments)
		if err != nil {
			results[i] = ToolResult{ToolCallID: call.ID, Name: call.Name, IsError: true, Content: err.Error()}
			continue
		}
		modes[i] = tools.Decide(def, args, policy)
	}
	// Auto calls and confirm-after calls run now; confirm-before calls wait for approval.
	c.execute(ctx, msg, calls, results, func(i int) bool { return modes[i] == tools.Auto || modes[i] == tools.ConfirmAfter })
	for i, call := range calls {
		if modes[i] == tools.ConfirmBefore || (modes[i] == tools.ConfirmAfter && !results[i].IsError) {
			a := &approval{PendingApproval: PendingApproval{ToolCallID: call.ID, Tool: call.Name, Arguments: call.Arguments, Mode: string(modes[i])}}
			if modes[i] == tools.ConfirmAfter {
				r := results[i]
				a.Result = &r
			}
			c.pending = append(c.pending, a)
		}
	}
	if len(c.pending) > 0 && !c.stopped {
		c.awaitApprovals(ctx, msg)
	}
	for _, a := range c.pending {
		i := indexOf(calls, a.ToolCallID)
		if c.stopped {
			a.approved = false
			results[i] = ToolResult{ToolCallID: a.ToolCallID, Name: a.Tool, Content: StoppedResult, IsError: true}
			continue
		}
		if !a.approved {
			results[i] = ToolResult{ToolCallID: a.ToolCallID, Name: a.Tool, Content: RejectedResult, IsError: true, Rejected: true}
			if a.reason != "" {
				results[i].Content += ": " + a.reason
			}
			c.publish(ctx, "tool:"+a.ToolCallID+":rejected", "tool_rejected", map[string]any{"tool_call_id": a.ToolCallID, "tool": a.Tool, "reason": a.reason})
		}
	}
	approvedBefore := map[int]bool{}
	for _, a := range c.pending {
		if a.approved && a.Mode == string(tools.ConfirmBefore) {
			approvedBefore[indexOf(calls, a.ToolCallID)] = true
		}
	}
	c.pending = nil
	if !c.stopped {
		c.execute(ctx, msg, calls, results, func(i int) bool { return approvedBefore[i] })
	}
	if c.stopped {
		for i := range results {
			if results[i].ToolCallID == "" { // never ran

				results[i] = ToolResult{ToolCallID: calls[i].ID, Name: calls[i].Name, Content: StoppedResult, IsError: true}
			}
		}
	}
	return results
}

// awaitApprovals announces the group and waits until every call is decided, the approval
// timeout passes (the rest are rejected with that reason) or the user stops the turn.
func (c *conversation) awaitApprovals(ctx workflow.Context, msg UserMessage) {
	c.status = StatusWaiting
	workflow.SetCurrentDetails(ctx, c.details())
	c.setStatus(ctx, msg.ID, StatusWaiting)
	for _, a := range c.pending {
		fields := map[string]any{"tool_call_id": a.ToolCallID, "tool": a.Tool, "arguments": a.Arguments, "mode": a.Mode}
		if a.Result != nil {
			fields["result"] = a.Result.Content
		}
		c.publish(ctx, "tool:"+a.ToolCallID+":approval", "approval_needed", fields)
	}
	done, err := workflow.AwaitWithTimeout(ctx, c.in.ApprovalTimeout, func() bool { return c.undecided() == 0 })
	if err == nil && !done {
		for _, a := range c.pending {
			if !a.decided {
				a.decided, a.approved, a.reason = true, false, "approval timed out"
			}
		}
	}
	if !c.stopped {
		c.status = StatusActive
		workflow.SetCurrentDetails(ctx, c.details())
		c.setStatus(ctx, msg.ID, StatusActive)
	}
}

// execute runs the selected calls as parallel activities and fills their results.
func (c *conversation) execute(ctx workflow.Context, msg UserMessage, calls []ToolCall, results []ToolResult, selected func(int) bool) {
	type running struct {
		i   int
		fut workflow.Future
	}
	var futures []running
	for i, call := range calls {
		if !selected(i) {
			continue
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			Summary:             "tool " + call.Name,
			StartToCloseTimeout: 5 * time.Minute,
			HeartbeatTimeout:    30 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
		})
		in := ToolCallInput{AgentID: c.in.AgentID, UserID: msg.UserID, Call: call}
		futures = append(futures, running{i, workflow.ExecuteActivity(actx, ActivityExecuteTool, in)})
	}
	for _, f := range futures {
		var r ToolResult
		if err := f.fut.Get(ctx, &r); err != nil {
			r = ToolResult{ToolCallID: calls[f.i].ID, Name: calls[f.i].Name, IsError: true, Content: "tool failed: " + rootMessage(err)}
			if temporal.IsCanceledError(err) {
				r.Content = StoppedResult
			}
		}
		results[f.i] = r
	}
}

func (c *conversation) saveToolResults(ctx workflow.Context, results []ToolResult) error {
	in := ToolResultsInput{AgentID: c.in.AgentID, FirstSeq: c.lastSeq + 1, Results: results}
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("record tool results"))
	if err := workflow.ExecuteLocalActivity(lctx, ActivitySaveToolResults, in).Get(ctx, nil); err != nil {
		return err
	}
	c.lastSeq += int64(len(results))
	return nil
}

func (c *conversation) publish(ctx workflow.Context, eventID, typ string, fields map[string]any) {
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions(typ))
	in := EventInput{AgentID: c.in.AgentID, EventID: eventID, Type: typ, Fields: fields}
	if err := workflow.ExecuteLocalActivity(lctx, ActivityPublishEvent, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("event not published", "type", typ, "error", err)
	}
}

func (c *conversation) publishStopped(ctx workflow.Context, msgID string) {
	c.publish(ctx, "turn:"+msgID+":stopped", "stopped", map[string]any{"message_id": msgID})
}

func (c *conversation) setStatus(ctx workflow.Context, msgID, status string) {
	lctx := workflow.WithLocalActivityOptions(ctx, localOptions("status "+status))
	in := StatusInput{AgentID: c.in.AgentID, Status: status, EventID: fmt.Sprintf("turn:%s:%s:%d", msgID, status, c.lastSeq)}
	if err := workflow.ExecuteLocalActivity(lctx, ActivitySetStatus, in).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("status not recorded", "error", err)
	}
}

func indexOf(calls []ToolCall, id string) int {
	for i, c := range calls {
		if c.ID == id {
			return i
		}
	}
	return -1
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
	return fmt.Sprintf("**status:** %s  \n**messages:** %d  \n**queued:** %d  \n**awaiting approval:** %d",
		c.status, c.lastSeq, len(c.queue), c.undecided())
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

// Continue-as-new happens only between turns, so it starts a little before Temporal's own
// suggestion (4,096 events / 4 MiB): a turn that begins just under the mark must not carry
// the run past it.
const (
	canEventMargin = 3800
	canBytesMargin = 3 << 20
)

func shouldContinueAsNew(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= canEventMargin ||
		info.GetCurrentHistorySize() >= canBytesMargin
}
