// Package workflows holds deterministic workflow code only: no I/O, no clocks, no goroutines,
// no map iteration. Side effects live in package activities, referenced through the typed
// activity contracts in activity.go.
package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/toolpolicy"
)

// Defaults of the loop's bounds.
const (
	DefaultMaxSteps        = 25
	DefaultMaxQueued       = 20
	DefaultApprovalTimeout = 24 * time.Hour
)

// MaxModelTries bounds how often a turn's model step is tried after the provider failed
// (HTTP 5xx, 429, network). Worker crashes and heartbeat timeouts do not count.
const MaxModelTries = 3

// RejectedResult is what the model sees for a call the user rejected.
const RejectedResult = "User rejected this tool call"

// StoppedResult is what the model sees for a call cut short by the user's stop.
const StoppedResult = "The user stopped the turn before this tool call completed"

// ToolHeartbeatTimeout: a tool call whose worker sent no heartbeat for this long is retried
// (the activity heartbeats every second).
const ToolHeartbeatTimeout = 5 * time.Second

// ConversationTaskTimeout is the conversations' workflow task timeout (the API starts them
// with it; continue-as-new keeps it): how long a workflow task given to a worker that hung or
// vanished blocks the conversation before another worker takes it. Temporal's default is 10 s;
// a conversation's task needs milliseconds (a full replay of a run well under a second), and
// under TEMPORAL_CALL_TIMEOUT (5 s) a message sent meanwhile is accepted instead of refused.
const ConversationTaskTimeout = 4 * time.Second

// DefaultIdleTimeout is used when the input leaves IdleTimeout unset.
const DefaultIdleTimeout = 7 * 24 * time.Hour

// summaryNamespace derives a summary row's ID from the turn and step it follows.
var summaryNamespace = uuid.MustParse("9e2b7c1d-5a4f-4e3b-8d6c-1f0a2b3c4d5e")

// replyNamespace derives the assistant message ID from the user message ID, so the ID is
// deterministic on replay and stable across activity retries.
var replyNamespace = uuid.MustParse("6f1c2a7e-4b8d-4a51-9a3e-5d0c9b7e2f10")

type conversation struct {
	in      ConversationInput
	status  string
	lastSeq int64
	queue   []UserMessage
	seen    map[string]bool // message IDs accepted by this run (Postgres catches earlier runs')

	cancelTurn workflow.CancelFunc // stops the running turn's activities and waits
	stopped    bool                // the user asked to stop the running turn
	stopReason string              // why, when it was not the user (her removal)
	pending    []*approval         // the current approval group, in call order
	sender     string              // the user whose message started the running turn

	legacy LegacyClassifier // decides modes for runs recorded before versionRecordedMode
}

type approval struct {
	PendingApproval
	decided   bool
	approved  bool
	reason    string
	decidedBy string // "" when the approval timed out (or in histories recorded before it)
	removed   bool   // rejected because its requester was removed (published even when stopped)
}

// conversationWorkflow is the workflow of one agent: the single writer of its transcript. It
// waits for messages, answers them one turn at a time, and completes after an idle period. It
// never fails on an outage of our own infrastructure: those activities retry until it is back.
// It is registered as ConversationWorkflowName by RegisterWorkflows.
func conversationWorkflow(legacy LegacyClassifier) func(workflow.Context, ConversationInput) error {
	return func(ctx workflow.Context, in ConversationInput) error { return runConversation(ctx, in, legacy) }
}

func runConversation(ctx workflow.Context, in ConversationInput, legacy LegacyClassifier) error {
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
	c := &conversation{in: in, status: StatusIdle, lastSeq: in.LastSeq, queue: in.Pending, seen: map[string]bool{}, legacy: legacy}
	for _, m := range in.Pending {
		c.seen[m.ID] = true
	}
	if err := c.registerHandlers(ctx); err != nil {
		return err
	}
	workflow.SetCurrentDetails(ctx, c.details())

	if c.lastSeq == 0 {
		// A new run of an existing conversation continues numbering after what Postgres holds.
		seq, err := LoadConversation.RunLocal(infraLocal(ctx, "load conversation"), in.AgentID)
		if err != nil {
			return err // only a malformed agent ID gets here: retrying cannot fix it
		}
		c.lastSeq = seq
	}

	for {
		got, err := c.await(ctx, in.IdleTimeout, func() bool { return len(c.queue) > 0 })
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

		if c.shouldContinueAsNew(ctx) {
			return c.continueAsNew(ctx)
		}
	}
}

// await waits for cond or the timeout. The timer is cancelled when cond comes true, so
// a long-lived run does not pile up one open timer per message.
func (c *conversation) await(ctx workflow.Context, timeout time.Duration, cond func() bool) (bool, error) {
	if workflow.GetVersion(ctx, versionCancelTimers, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return workflow.AwaitWithTimeout(ctx, timeout, cond)
	}
	if cond() {
		return true, nil
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	return workflow.AwaitWithTimeout(tctx, timeout, cond)
}

// continueAsNew starts the next run at a turn boundary, carrying the numbering and the
// queued messages. Their contents are parked in Postgres first, so the next run's input holds
// IDs only (20 queued messages of 100 KiB would pass Temporal's 2 MiB payload limit).
func (c *conversation) continueAsNew(ctx workflow.Context) error {
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return err
		}
		parked := true
		for _, m := range c.queue {
			parked = parked && m.Parked
		}
		if parked || workflow.GetVersion(ctx, versionParkQueued, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			break
		}
		// Messages accepted while one is parked are parked on the next pass.
		for i := 0; i < len(c.queue); i++ {
			m := c.queue[i]
			if m.Parked {
				continue
			}
			if err := ParkMessage.RunLocal(infraLocal(ctx, "park queued message"), ParkInput{AgentID: c.in.AgentID, Message: m}); err != nil {
				return err
			}
			// Attachment IDs stay in the input: ten UUIDs at most. Found again by ID: a
			// member's removal may have dropped messages from the queue meanwhile.
			if j := c.queued(m.ID); j >= 0 {
				c.queue[j] = UserMessage{ID: m.ID, UserID: m.UserID, Parked: true, Attachments: m.Attachments}
				continue
			}
			// Dropped while it was being parked: its content must not stay behind.
			in := DropMessagesInput{AgentID: c.in.AgentID, MessageIDs: []string{m.ID}, Reason: RemovedSenderReason}
			if err := DropMessages.RunLocal(infraLocal(ctx, "drop a removed member's messages"), in); err != nil {
				workflow.GetLogger(ctx).Warn("dropped message not cleaned up", "error", err)
			}
		}
	}
	next := c.in
	next.LastSeq = c.lastSeq
	next.Pending = c.queue
	return workflow.NewContinueAsNewError(ctx, ConversationWorkflowName, next)
}

// queued is the queue position of message id, or -1.
func (c *conversation) queued(id string) int {
	for i, m := range c.queue {
		if m.ID == id {
			return i
		}
	}
	return -1
}

func (c *conversation) registerHandlers(ctx workflow.Context) error {
	if err := ConversationState.SetHandler(ctx, func() (State, error) {
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
	err := SendMessage.SetHandler(ctx,
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
		func(ctx workflow.Context, m UserMessage) error {
			if err := validateUserMessage(ctx, m); err != nil {
				return err
			}
			if !c.seen[m.ID] && len(c.queue) >= c.in.MaxQueued {
				return temporal.NewApplicationError(fmt.Sprintf("%d messages are already waiting; try again when the agent has answered", len(c.queue)), ErrTypeQueueFull)
			}
			return nil
		})
	if err != nil {
		return err
	}
	err = Approve.SetHandler(ctx,
		func(ctx workflow.Context, req ApproveRequest) (ApproveResult, error) {
			for _, d := range req.Decisions {
				a := c.findPending(d.ToolCallID)
				a.decided, a.approved, a.reason, a.decidedBy = true, d.Approved, d.Reason, req.DecidedBy
			}
			return ApproveResult{Remaining: c.undecided()}, nil
		},
		c.validateDecisions)
	if err != nil {
		return err
	}
	err = StopTurn.SetHandler(ctx, func(ctx workflow.Context, _ StopRequest) (StopResult, error) {
		if c.status == StatusIdle {
			return StopResult{}, nil
		}
		// A stop that arrives while the turn is still starting (no cancel function yet) is
		// honoured as soon as the message is recorded.
		c.stopped = true
		if c.cancelTurn != nil {
			c.cancelTurn()
		}
		return StopResult{Stopped: true}, nil
	}, nil)
	if err != nil {
		return err
	}
	return RemoveMember.SetHandler(ctx, c.removeMember,
		func(_ workflow.Context, req RemoveMemberRequest) error {
			if strings.TrimSpace(req.UserID) == "" {
				return errors.New("user_id is required")
			}
			return nil
		})
}

// removeMember forgets what a removed member left behind: her queued messages are dropped (and
// clients told), her calls waiting for approval rejected, and her running turn stopped. What
// is already running or arrives later is refused by the activities, which check membership
// when they run. The queue and approvals change before the first blocking call, so the loop
// never starts one of her messages after the update arrived.
func (c *conversation) removeMember(ctx workflow.Context, req RemoveMemberRequest) (RemoveMemberResult, error) {
	var res RemoveMemberResult
	reason := req.Reason
	if reason == "" {
		reason = RemovedSenderReason
	}
	var dropped []string
	kept := make([]UserMessage, 0, len(c.queue))
	for _, m := range c.queue {
		if m.UserID == req.UserID {
			dropped = append(dropped, m.ID)
			continue
		}
		kept = append(kept, m)
	}
	c.queue = kept
	for _, a := range c.pending {
		if !a.decided && a.RequestedBy == req.UserID {
			a.decided, a.approved, a.reason, a.removed = true, false, RemovedRequesterReason, true
			res.Rejected++
		}
	}
	if c.status != StatusIdle && c.sender == req.UserID {
		c.stopped, c.stopReason = true, reason
		if c.cancelTurn != nil {
			c.cancelTurn()
		}
		res.Stopped = true
	}
	res.Dropped = len(dropped)
	workflow.SetCurrentDetails(ctx, c.details())
	if len(dropped) > 0 {
		in := DropMessagesInput{AgentID: c.in.AgentID, MessageIDs: dropped, Reason: reason}
		if err := DropMessages.RunLocal(infraLocal(ctx, "drop a removed member's messages"), in); err != nil {
			workflow.GetLogger(ctx).Warn("dropped messages not cleaned up", "error", err)
		}
	}
	return res, nil
}

// validateDecisions rejects decisions for calls that are not pending or already decided, and
// decisions by someone who may not make them (mayDecide); rejected updates never enter history,
// and one refused decision refuses the whole request.
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
		if err := mayDecide(req, a.PendingApproval, d.Approved); err != nil {
			return err
		}
		seen[d.ToolCallID] = true
	}
	return nil
}

// mayDecide says whether req's user may approve (or reject) call p. A call runs with its
// requester's SAP login, so by default only the requester decides it. Where the workspace allows
// it (AdminsMayApprove), a workspace admin may decide too. With four eyes, a write
// (confirm_before_execution) needs a second person: its requester may only reject it, and any
// other member of the workspace may approve or reject it (admins included, whether or not
// AdminsMayApprove is set). Four eyes applies when the workspace has it now or had it when the
// call was requested, so switching it off does not let a requester approve their own write.
// Calls that already ran (confirm_after_execution) keep the default.
func mayDecide(req ApproveRequest, p PendingApproval, approve bool) error {
	by := req.DecidedBy
	if by == "" {
		return notAllowed("the decision does not name who made it")
	}
	if (req.FourEyes || p.FourEyes) && p.Mode == string(toolpolicy.ConfirmBefore) {
		if by == p.RequestedBy && approve {
			return notAllowed("this call needs a second person's approval (four eyes, the workspace's rule when it was requested or now): " +
				"you cannot approve tool call " + p.ToolCallID + " yourself; another member must approve it (you may reject it)")
		}
		return nil
	}
	if by == p.RequestedBy || (req.DeciderIsAdmin && req.AdminsMayApprove) {
		return nil
	}
	if req.DeciderIsAdmin {
		return notAllowed("only the user whose message led to tool call " + p.ToolCallID + " may decide it (this workspace does not let admins decide)")
	}
	return notAllowed("only the user whose message led to tool call " + p.ToolCallID + " may decide it")
}

func notAllowed(msg string) error { return temporal.NewApplicationError(msg, ErrTypeNotAllowed) }

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
	if m.Parked {
		return errors.New("a sent message cannot be parked")
	}
	if len(m.Attachments) > MaxAttachments {
		return fmt.Errorf("a message may carry at most %d attachments", MaxAttachments)
	}
	for _, id := range m.Attachments {
		if _, err := uuid.Parse(id); err != nil {
			return fmt.Errorf("attachment %q is not a file ID", id)
		}
	}
	return nil
}

func (c *conversation) runTurn(ctx workflow.Context, msg UserMessage) {
	c.status = StatusActive
	c.sender = msg.UserID
	c.stopped, c.stopReason = false, ""
	workflow.SetCurrentDetails(ctx, c.details())
	// BeginTurn is one transaction: the message is stored at this seq or nothing is, so the seq
	// is committed only after it succeeded.
	begin := BeginTurnInput{AgentID: c.in.AgentID, Message: msg, Seq: c.lastSeq + 1, EventID: "turn:" + msg.ID + ":begin"}
	tc, err := BeginTurn.RunLocal(infraLocal(ctx, "record user message"), begin)
	if err != nil {
		// Only input that can never be stored gets here; outages are retried until they end.
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == ErrTypeNotMember {
			// Its sender was removed: the message is refused, the clients told which one.
			in := ErrorInput{AgentID: c.in.AgentID, Message: appErr.Message(), EventID: "turn:" + msg.ID + ":error", MessageID: msg.ID}
			if err := PublishError.RunLocal(infraLocal(ctx, "publish error"), in); err != nil {
				workflow.GetLogger(ctx).Warn("error event not published", "error", err)
			}
		} else {
			c.publishError(ctx, msg.ID, "could not record the message: "+rootMessage(err))
		}
		c.finishTurn(ctx, msg.ID)
		return
	}
	if tc.Duplicate {
		// Answered by an earlier run: no second turn, only the idle status a turn ends with.
		c.finishTurn(ctx, msg.ID)
		return
	}
	c.lastSeq = begin.Seq
	if tc.Seq > 0 {
		c.lastSeq = tc.Seq
	}
	if c.stopped {
		c.publishStopped(ctx, msg.ID)
		c.finishTurn(ctx, msg.ID)
		return
	}

	// The first message of a conversation names it, alongside the reply. Runs recorded before
	// titles existed replay without it (GetVersion).
	var title workflow.Future
	if c.lastSeq == 1 && workflow.GetVersion(ctx, versionTitle, workflow.DefaultVersion, 1) == 1 {
		tctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			// The turn waits for its title: a lost worker must cost seconds, not the minute.
			Summary: "title", StartToCloseTimeout: time.Minute, HeartbeatTimeout: 3 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{ErrTypeModelRejected}},
		})
		title = GenerateTitle.Start(tctx, c.in.AgentID).f
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
	compactDue := false
	defer func() {
		if compactDue && !c.stopped {
			c.compact(turnCtx, msg, tc.Model)
		}
	}()
	for step := 0; ; step++ {
		if compactDue && !c.stopped {
			c.compact(turnCtx, msg, tc.Model)
		}
		compactDue = false
		if step >= c.in.MaxSteps {
			c.publishError(ctx, msg.ID, fmt.Sprintf("stopped after %d model steps without a final answer (MAX_LOOP_STEPS)", c.in.MaxSteps))
			break
		}
		res, err := c.modelStep(turnCtx, msg, step, tc)
		if c.stopped || res.Stopped {
			c.publishStopped(ctx, msg.ID)
			break
		}
		if err != nil {
			c.publishError(ctx, msg.ID, "the model did not answer: "+rootMessage(err))
			break
		}
		compactDue = res.Compact
		if len(res.ToolCalls) == 0 {
			break
		}
		results := c.runTools(turnCtx, msg, res.ToolCalls, toolpolicy.Policy(tc.Policy), tc.FourEyes)
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

// compact summarises the turns the last model request had to leave out into a summary row the
// model sees from now on (and the user reads in the transcript). A failure only leaves the
// window as it is: every request fits the budget without a summary too.
func (c *conversation) compact(ctx workflow.Context, msg UserMessage, model string) {
	if workflow.GetVersion(ctx, versionCompaction, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	in := CompactInput{
		AgentID:   c.in.AgentID,
		MessageID: uuid.NewSHA1(summaryNamespace, []byte(fmt.Sprintf("%s:%d", msg.ID, c.lastSeq))).String(),
		Seq:       c.lastSeq + 1,
		Model:     model,
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "compact context",
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{ErrTypeModelRejected, ErrTypeModelUnavailable, ErrTypeBadInput, "SeqTaken"},
		},
	})
	res, err := CompactConversation.Run(actx, in)
	if err != nil {
		workflow.GetLogger(ctx).Warn("context not compacted", "error", err)
		return
	}
	if res.Compacted {
		c.lastSeq = in.Seq
	}
}

// modelStep streams one model reply (activity GenerateReply) and returns its tool calls.
// Temporal retries an attempt lost to a crashed worker or an outage without limit; a failing
// model is tried MaxModelTries times here, so the two budgets never mix.
func (c *conversation) modelStep(ctx workflow.Context, msg UserMessage, step int, tc TurnContext) (TurnResult, error) {
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
		Policy:    tc.Policy,
		FourEyes:  tc.FourEyes,
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             strings.TrimSpace("model reply " + tc.Model),
		StartToCloseTimeout: 10 * time.Minute,
		// The activity heartbeats every second from its start, so a crashed worker's attempt
		// is retried within a few seconds.
		HeartbeatTimeout:    2500 * time.Millisecond,
		WaitForCancellation: true, // a stopped reply saves its partial text before the turn ends
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        200 * time.Millisecond,
			BackoffCoefficient:     2,
			MaximumInterval:        10 * time.Second,
			NonRetryableErrorTypes: []string{ErrTypeModelRejected, ErrTypeModelUnavailable, ErrTypeBadInput},
		},
	})
	for try := 1; ; try++ {
		turn.Try = try
		res, err := GenerateReply.Run(actx, turn)
		var appErr *temporal.ApplicationError
		if err == nil || try >= MaxModelTries || !errors.As(err, &appErr) || appErr.Type() != ErrTypeModelUnavailable {
			return res, err
		}
		if serr := workflow.Sleep(ctx, time.Duration(try)*time.Second); serr != nil {
			return res, serr // stopped while waiting
		}
	}
}

// runTools classifies a step's calls by policy, asks for approvals, and runs what may run
// (in parallel), returning one result per call in call order.
func (c *conversation) runTools(ctx workflow.Context, msg UserMessage, calls []ToolCall, policy toolpolicy.Policy, fourEyes bool) []ToolResult {
	results := make([]ToolResult, len(calls))
	modes := make([]toolpolicy.Mode, len(calls))
	if workflow.GetVersion(ctx, versionRecordedMode, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		c.legacyModes(calls, policy, results, modes)
	} else {
		for i, call := range calls {
			if call.Invalid != "" {
				results[i] = ToolResult{ToolCallID: call.ID, Name: call.Name, IsError: true, Content: call.Invalid}
				continue
			}
			modes[i] = toolpolicy.Mode(call.Mode)
		}
	}
	c.pending = nil
	// Auto calls and confirm-after calls run now; confirm-before calls wait for approval.
	c.execute(ctx, msg, calls, results, nil, func(i int) bool { return modes[i] == toolpolicy.Auto || modes[i] == toolpolicy.ConfirmAfter })
	for i, call := range calls {
		if modes[i] == toolpolicy.ConfirmBefore || (modes[i] == toolpolicy.ConfirmAfter && !results[i].IsError) {
			a := &approval{PendingApproval: PendingApproval{ToolCallID: call.ID, Tool: call.Name, Arguments: call.Arguments,
				Mode: string(modes[i]), RequestedBy: c.sender, FourEyes: fourEyes}}
			if modes[i] == toolpolicy.ConfirmAfter {
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
		if c.stopped && !a.removed {
			a.approved = false
			results[i] = ToolResult{ToolCallID: a.ToolCallID, Name: a.Tool, Content: StoppedResult, IsError: true}
			continue
		}
		if a.approved {
			// Runs recorded before versionDecidedBy published nothing for an approval.
			if workflow.GetVersion(ctx, versionDecidedBy, workflow.DefaultVersion, 1) == 1 {
				c.publish(ctx, "tool:"+a.ToolCallID+":approved",
					frames.ToolApproved{ToolCallID: a.ToolCallID, Tool: a.Tool, Mode: a.Mode, DecidedBy: a.decidedBy})
			}
			continue
		}
		results[i] = ToolResult{ToolCallID: a.ToolCallID, Name: a.Tool, Content: RejectedResult, IsError: true, Rejected: true}
		if a.reason != "" {
			results[i].Content += ": " + a.reason
		}
		pctx := ctx
		if a.removed {
			// Her removal also stopped the turn (cancelling ctx); clients still learn why.
			pctx, _ = workflow.NewDisconnectedContext(ctx)
		}
		c.publish(pctx, "tool:"+a.ToolCallID+":rejected", frames.ToolRejected{ToolCallID: a.ToolCallID, Tool: a.Tool, Reason: a.reason, DecidedBy: a.decidedBy})
	}
	approvedBy := map[int]string{} // confirm-before calls that were approved, and by whom
	for _, a := range c.pending {
		if a.approved && a.Mode == string(toolpolicy.ConfirmBefore) {
			approvedBy[indexOf(calls, a.ToolCallID)] = a.decidedBy
		}
	}
	c.pending = nil
	if !c.stopped {
		c.execute(ctx, msg, calls, results, approvedBy, func(i int) bool { _, ok := approvedBy[i]; return ok })
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

// legacyModes decides modes in workflow code, as runs recorded before versionRecordedMode did;
// kept only so their histories replay (the retire rule is next to versionRecordedMode).
func (c *conversation) legacyModes(calls []ToolCall, policy toolpolicy.Policy, results []ToolResult, modes []toolpolicy.Mode) {
	for i, call := range calls {
		mode, invalid := c.legacy.Classify(call.Name, call.Arguments, policy)
		if invalid != "" {
			results[i] = ToolResult{ToolCallID: call.ID, Name: call.Name, IsError: true, Content: invalid}
			continue
		}
		modes[i] = mode
	}
}

// awaitApprovals announces the group and waits until every call is decided, the approval
// timeout passes (the rest are rejected with that reason) or the user stops the turn.
func (c *conversation) awaitApprovals(ctx workflow.Context, msg UserMessage) {
	c.status = StatusWaiting
	workflow.SetCurrentDetails(ctx, c.details())
	c.setStatus(ctx, msg.ID, StatusWaiting)
	for _, a := range c.pending {
		f := frames.ApprovalNeeded{ToolCallID: a.ToolCallID, Tool: a.Tool, Arguments: a.Arguments, Mode: a.Mode, RequestedBy: a.RequestedBy, FourEyes: a.FourEyes}
		if a.Result != nil {
			f.Result = &a.Result.Content
		}
		c.publish(ctx, "tool:"+a.ToolCallID+":approval", f)
	}
	done, err := c.await(ctx, c.in.ApprovalTimeout, func() bool { return c.undecided() == 0 })
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

// execute runs the selected calls as parallel activities and fills their results; deciders
// names who approved a call (by index), for the action log.
func (c *conversation) execute(ctx workflow.Context, msg UserMessage, calls []ToolCall, results []ToolResult, deciders map[int]string, selected func(int) bool) {
	type running struct {
		i   int
		res Pending[ToolResult]
	}
	var futures []running
	for i, call := range calls {
		if !selected(i) {
			continue
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			Summary:             "tool " + call.Name,
			StartToCloseTimeout: 5 * time.Minute,
			// The activity heartbeats every second from its start, so a lost worker's call is
			// retried within seconds. A retry is safe even while the first attempt might still
			// run: writes carry an idempotency key (the connector runs a key once and makes a
			// repeat wait for the first), and the first attempt's next heartbeat cancels it.
			HeartbeatTimeout: ToolHeartbeatTimeout,
			// A tool's own failure is a result, not an activity error; what fails the activity
			// is our infrastructure or a lost worker.
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
				NonRetryableErrorTypes: []string{ErrTypeBadInput}},
		})
		in := ToolCallInput{AgentID: c.in.AgentID, UserID: msg.UserID, Call: call, DecidedBy: deciders[i]}
		futures = append(futures, running{i, ExecuteTool.Start(actx, in)})
	}
	for _, f := range futures {
		r, err := f.res.Get(ctx)
		if err != nil {
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
	if err := SaveToolResults.RunLocal(infraLocal(ctx, "record tool results"), in); err != nil {
		return err
	}
	c.lastSeq += int64(len(results))
	return nil
}

func (c *conversation) publish(ctx workflow.Context, eventID string, f frames.Frame) {
	in := EventInput{AgentID: c.in.AgentID, EventID: eventID, Frame: f}
	if err := PublishEvent.RunLocal(infraLocal(ctx, f.FrameType()), in); err != nil {
		workflow.GetLogger(ctx).Warn("event not published", "type", f.FrameType(), "error", err)
	}
}

func (c *conversation) publishStopped(ctx workflow.Context, msgID string) {
	c.publish(ctx, "turn:"+msgID+":stopped", frames.Stopped{MessageID: msgID, Reason: c.stopReason})
}

func (c *conversation) setStatus(ctx workflow.Context, msgID, status string) {
	in := StatusInput{AgentID: c.in.AgentID, Status: status, EventID: fmt.Sprintf("turn:%s:%s:%d", msgID, status, c.lastSeq)}
	if err := SetStatus.RunLocal(infraLocal(ctx, "status "+status), in); err != nil {
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
	in := StatusInput{AgentID: c.in.AgentID, Status: StatusIdle, EventID: "turn:" + msgID + ":idle"}
	if err := SetStatus.RunLocal(infraLocal(ctx, "status idle"), in); err != nil {
		workflow.GetLogger(ctx).Warn("status not recorded", "error", err)
	}
}

func (c *conversation) publishError(ctx workflow.Context, msgID, text string) {
	in := ErrorInput{AgentID: c.in.AgentID, Message: text, EventID: "turn:" + msgID + ":error"}
	if err := PublishError.RunLocal(infraLocal(ctx, "publish error"), in); err != nil {
		workflow.GetLogger(ctx).Warn("error event not published", "error", err)
	}
}

// details is the markdown operators see as the workflow's current details in the Temporal UI.
func (c *conversation) details() string {
	return fmt.Sprintf("**status:** %s  \n**messages:** %d  \n**queued:** %d  \n**awaiting approval:** %d",
		c.status, c.lastSeq, len(c.queue), c.undecided())
}

// infraRetryForever is effectively unlimited: a local activity's schedule-to-close defaults to
// its start-to-close, which would end the retries after one attempt's timeout.
const infraRetryForever = 10 * 365 * 24 * time.Hour

// infraLocal is for local activities that touch only our own infrastructure (Postgres, Redis):
// they retry with backoff until it is back, and stop only on input that can never succeed.
func infraLocal(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		Summary:                summary,
		StartToCloseTimeout:    10 * time.Second,
		ScheduleToCloseTimeout: infraRetryForever,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        200 * time.Millisecond,
			BackoffCoefficient:     2,
			MaximumInterval:        5 * time.Second,
			NonRetryableErrorTypes: []string{ErrTypeBadInput},
		},
	})
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
	DefaultRunEvents = 3800
	canBytesMargin   = 3 << 20
)

func (c *conversation) shouldContinueAsNew(ctx workflow.Context) bool {
	events := c.in.RunEvents
	if events <= 0 {
		events = DefaultRunEvents
	}
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= events ||
		info.GetCurrentHistorySize() >= canBytesMargin
}
