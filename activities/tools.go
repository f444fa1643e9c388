package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// maxLoggedInput bounds the tool input kept in the action log.
const maxLoggedInput = 4 << 10

// InlineToolOutput is the largest tool output carried through workflow history; larger ones
// are stored by reference. ModelToolOutput is the largest the model is shown in full; beyond it
// the model gets the preview and the size.
const (
	InlineToolOutput = 8 << 10
	ModelToolOutput  = 32 << 10
	previewBytes     = 2 << 10
)

func preview(content string) string {
	return truncate(content, previewBytes) + fmt.Sprintf("\n[output truncated: %d bytes in total]", len(content))
}

// ExecuteTool runs one tool call for the user, tells the clients, and records it in the
// action log. A tool's own failure is a result the model can read (IsError), not an activity
// error. Once the tool ran, nothing fails the activity: a failed activity is retried, and the
// retry would run the tool — a write — again.
func (a *Activities) ExecuteTool(ctx context.Context, in workflows.ToolCallInput) (workflows.ToolResult, error) {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return workflows.ToolResult{}, err
	}
	agent, err := a.loadAgent(ctx, agentID)
	if err != nil {
		return workflows.ToolResult{}, err
	}
	if res, refused, err := a.refuseRemovedRequester(ctx, agent, in); err != nil || refused {
		return res, err
	}
	// The workspace's four-eyes rule as it is now: a write runs only with a second person's yes.
	grant, refused, err := a.callApproval(ctx, agent, in)
	if err != nil {
		return workflows.ToolResult{}, err
	}
	topic := events.AgentTopic(in.AgentID)
	a.publish(ctx, topic, events.Event{ID: "tool:" + in.Call.ID + ":running",
		Frame: frames.ToolUpdate{ToolCallID: in.Call.ID, Tool: in.Call.Name, Status: "running", Arguments: &in.Call.Arguments}})

	start := time.Now()
	defer heartbeatEvery(ctx, toolHeartbeat)()
	content, toolErr := "", refused
	if refused == nil {
		content, toolErr = a.runTool(sap.WithIdempotencyKey(withApproval(ctx, grant), toolIdempotencyKey(in.AgentID, in.Call.ID)), agent, in.UserID, in.Call)
	}
	elapsed := time.Since(start)
	// Tool output is anyone's text (SAP data, a script's prints, an error echoing its input):
	// what Postgres cannot store becomes U+FFFD before it goes anywhere.
	content = store.CleanText(content)
	if toolErr != nil {
		toolErr = errors.New(store.CleanText(toolErr.Error()))
	}
	if toolErr != nil && attemptCutOff(ctx) {
		// Not the tool's failure: this attempt was cut off and Temporal runs (or already runs)
		// the call again, where its writes are answered from the connector's memory. Nothing is
		// recorded or announced for this attempt, so the user sees one result.
		return workflows.ToolResult{}, errors.New("the tool call's attempt was cut off: " + context.Cause(ctx).Error())
	}

	// From here on only bookkeeping: it is retried for a while and never fails the activity.
	book := context.WithoutCancel(ctx)
	res := workflows.ToolResult{ToolCallID: in.Call.ID, Name: in.Call.Name, Content: content}
	if toolErr == nil && len(content) > InlineToolOutput {
		// Claim check: the full output stays in Postgres; history and events carry a preview.
		res.Content = preview(content)
		err := a.bookkeep(book, "store tool output", func(ctx context.Context) error {
			return a.Store.SaveToolOutput(ctx, agentID, in.Call.ID, content)
		})
		if err == nil {
			res.Stored, res.Size = true, len(content)
		} else {
			res.Content += "\n[the full output could not be stored; only this preview is available]"
		}
	}
	if toolErr != nil {
		res.IsError, res.Content = true, toolErr.Error()
		a.publish(book, topic, events.Event{ID: "tool:" + in.Call.ID + ":error",
			Frame: frames.ToolError{ToolCallID: in.Call.ID, Tool: in.Call.Name, Error: res.Content}})
	} else {
		result := truncate(res.Content, 4096)
		// Stored: the result is a preview, clients offer the whole output (GET …/tool-outputs/:id).
		a.publish(book, topic, events.Event{ID: "tool:" + in.Call.ID + ":done", Frame: frames.ToolUpdate{
			ToolCallID: in.Call.ID, Tool: in.Call.Name, Status: "done", Result: &result, Stored: res.Stored, Size: res.Size}})
	}
	action := store.Action{
		AgentID: agentID, WorkspaceID: agent.WorkspaceID, UserID: in.UserID, DecidedBy: in.DecidedBy, ToolCallID: in.Call.ID, Tool: in.Call.Name,
		Input: truncate(in.Call.Arguments, maxLoggedInput), OutputSummary: truncate(res.Content, 500),
		DurationMS: int(elapsed.Milliseconds()), Success: toolErr == nil,
	}
	if toolErr != nil {
		action.Error = truncate(toolErr.Error(), 1000)
	}
	_ = a.bookkeep(book, "action log", func(ctx context.Context) error { return a.Store.LogAction(ctx, action) })
	return res, nil
}

// attemptCutOff reports whether ctx ended for a reason other than the user's stop: the worker
// stopped (its grace ended), Temporal refused a heartbeat (the attempt timed out and was given to
// another worker) or the attempt ran out of time. A stop is a cancellation Temporal delivers.
func attemptCutOff(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	// The cause is worker.ErrWorkerShutdown, a refused heartbeat's error or DeadlineExceeded
	// for a cut-off attempt, and a *temporal.CanceledError for a stop.
	return !temporal.IsCanceledError(context.Cause(ctx))
}

// toolIdempotencyKey is the key a tool call's writes carry, numbered per request
// (<agent>/<call>/<n>): a retry repeats the same keys, and the connector answers them from
// memory instead of writing again. Call IDs are unique only within a conversation, hence the
// agent. docs/connector-protocol.md documents this form.
func toolIdempotencyKey(agentID, callID string) string { return agentID + "/" + callID }

// bookkeepingPatience is how long bookkeeping after an effect keeps trying (a Postgres
// restart or failover fits in it); after that the record is given up, logged, never retried by
// running the effect again.
var bookkeepingPatience = 2 * time.Minute

// bookkeep retries an idempotent write with backoff until it succeeds or patience runs out.
func (a *Activities) bookkeep(ctx context.Context, what string, write func(context.Context) error) error {
	deadline := time.Now().Add(bookkeepingPatience)
	wait := 100 * time.Millisecond
	for {
		attempt, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := write(attempt)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().Add(wait).After(deadline) {
			a.Log.Error("bookkeeping given up after the effect", "what", what, "error", err)
			return err
		}
		time.Sleep(wait)
		wait = min(wait*2, 5*time.Second)
	}
}

// toolHeartbeat is how often a running tool tells Temporal it is alive (the workflow's
// heartbeat timeout for tools is workflows.ToolHeartbeatTimeout, 5 s): an ETL load or a long
// script is not mistaken for a crashed worker, a crashed worker's call is retried within
// seconds, and a stop reaches it through the heartbeat.
var toolHeartbeat = time.Second

// recordHeartbeat is activity.RecordHeartbeat (a variable so a test can count the beats; the
// SDK throttles what reaches the server).
var recordHeartbeat = activity.RecordHeartbeat

// heartbeatEvery records a heartbeat every interval until stop is called or ctx ends.
func heartbeatEvery(ctx context.Context, interval time.Duration) (stop func()) {
	return heartbeatWith(ctx, interval, func() any { return "running" })
}

// heartbeatWith records a heartbeat with details() every interval until stop or ctx ends.
func heartbeatWith(ctx context.Context, interval time.Duration, details func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				recordHeartbeat(ctx, details())
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// runTool runs a call through its definition. Arguments were validated when the call was
// classified; they are parsed again against this worker's definitions.
func (a *Activities) runTool(ctx context.Context, agent store.Agent, user string, call workflows.ToolCall) (string, error) {
	def, ok := a.registry().Get(call.Name)
	if !ok {
		return "", fmt.Errorf("unknown tool %s", call.Name)
	}
	args, err := def.ParseArguments(call.Arguments)
	if err != nil {
		return "", err
	}
	if !def.Direct(a.SAP.DirectCall) {
		return "", fmt.Errorf("%s is available inside execute_code: call it there as a helper function", def.Name)
	}
	out, err := def.Run(ctx, a.toolEnv(agent, user, call.ID), args)
	if err != nil {
		return "", err
	}
	return marshal(out)
}

// SaveToolResults stores a step's results as tool messages, in one batch.
func (a *Activities) SaveToolResults(ctx context.Context, in workflows.ToolResultsInput) error {
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return err
	}
	msgs := make([]store.Message, len(in.Results))
	for i, r := range in.Results {
		parts, _ := json.Marshal([]map[string]any{{"type": "tool_result", "tool_call_id": r.ToolCallID, "name": r.Name, "content": r.Content,
			"is_error": r.IsError, "stored": r.Stored, "size": r.Size}})
		status := "complete"
		if r.IsError {
			status = "error"
		}
		msgs[i] = store.Message{
			ID: uuid.NewSHA1(noteNamespace, []byte(in.AgentID+":result:"+r.ToolCallID)), AgentID: agentID, Seq: in.FirstSeq + int64(i),
			Role: "tool", Content: r.Content, Status: status, Parts: parts, ToolCallID: r.ToolCallID,
		}
	}
	if err := a.Store.SaveMessages(ctx, msgs); err != nil {
		return storeFailure("save tool results", err)
	}
	return nil
}

func marshal(v any) (string, error) {
	raw, err := json.Marshal(v)
	return string(raw), err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
