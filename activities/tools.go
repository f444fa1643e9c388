package activities

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/saptools"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
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

// noteNamespace derives a note's ID from its tool call, so a retried call saves it once.
var noteNamespace = uuid.MustParse("0b7d2c1e-3f4a-4e5b-8c6d-7e8f9a0b1c2d")

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
	topic := events.AgentTopic(in.AgentID)
	a.publish(ctx, topic, events.Event{ID: "tool:" + in.Call.ID + ":running", Type: "tool_update",
		Fields: map[string]any{"tool_call_id": in.Call.ID, "tool": in.Call.Name, "status": "running", "arguments": in.Call.Arguments}})

	start := time.Now()
	defer heartbeatEvery(ctx, toolHeartbeat)()
	// Every write the call sends carries <agent>/<call>/<n>: a retry repeats the same keys, and
	// the connector answers them from memory instead of writing again. Call IDs are unique only
	// within a conversation, hence the agent.
	content, toolErr := a.runTool(sap.WithIdempotencyKey(ctx, in.AgentID+"/"+in.Call.ID), agent, in.UserID, in.Call)
	elapsed := time.Since(start)

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
		a.publish(book, topic, events.Event{ID: "tool:" + in.Call.ID + ":error", Type: "tool_error",
			Fields: map[string]any{"tool_call_id": in.Call.ID, "tool": in.Call.Name, "error": res.Content}})
	} else {
		a.publish(book, topic, events.Event{ID: "tool:" + in.Call.ID + ":done", Type: "tool_update",
			Fields: map[string]any{"tool_call_id": in.Call.ID, "tool": in.Call.Name, "status": "done", "result": truncate(res.Content, 4096)}})
	}
	action := store.Action{
		AgentID: agentID, WorkspaceID: agent.WorkspaceID, UserID: in.UserID, ToolCallID: in.Call.ID, Tool: in.Call.Name,
		Input: truncate(in.Call.Arguments, maxLoggedInput), OutputSummary: truncate(res.Content, 500),
		DurationMS: int(elapsed.Milliseconds()), Success: toolErr == nil,
	}
	if toolErr != nil {
		action.Error = truncate(toolErr.Error(), 1000)
	}
	_ = a.bookkeep(book, "action log", func(ctx context.Context) error { return a.Store.LogAction(ctx, action) })
	return res, nil
}

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
// heartbeat timeout for tools is 30 s): an ETL load or a long script is not mistaken for a
// crashed worker and run a second time, and a stop reaches it through the heartbeat.
var toolHeartbeat = 5 * time.Second

// recordHeartbeat is activity.RecordHeartbeat (a variable so a test can count the beats; the
// SDK throttles what reaches the server).
var recordHeartbeat = activity.RecordHeartbeat

// heartbeatEvery records a heartbeat every interval until stop is called or ctx ends.
func heartbeatEvery(ctx context.Context, interval time.Duration) (stop func()) {
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
				recordHeartbeat(ctx, "running")
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// runTool dispatches a call to its implementation. Arguments were validated by the workflow.
func (a *Activities) runTool(ctx context.Context, agent store.Agent, user string, call workflows.ToolCall) (string, error) {
	agentID := agent.ID
	def, ok := tools.Default().Get(call.Name)
	if !ok {
		return "", fmt.Errorf("unknown tool %s", call.Name)
	}
	args, err := def.ParseArguments(call.Arguments)
	if err != nil {
		return "", err
	}
	if saptools.Handles(call.Name) {
		return a.runSAPTool(ctx, agent, user, def, args)
	}
	if saptools.CrossConnection(call.Name) {
		return a.runCrossTool(ctx, agent, user, call.Name, args)
	}
	switch call.Name {
	case tools.ExecuteCode:
		return a.runCode(ctx, agent, user, args)
	case tools.ListNotes:
		limit := 20
		if l, ok := args["limit"].(json.Number); ok {
			if n, err := l.Int64(); err == nil {
				limit = int(n)
			}
		}
		notes, err := a.Store.ListNotes(ctx, agentID, limit)
		if err != nil {
			return "", err
		}
		return marshal(map[string]any{"notes": notes})
	case tools.SaveNote:
		draft, _ := args["draft"].(bool)
		n := store.Note{ID: uuid.NewSHA1(noteNamespace, []byte(agentID.String()+call.ID)), Title: args["title"].(string), Body: args["body"].(string), Draft: draft}
		if err := a.Store.SaveNote(ctx, agentID, n); err != nil {
			return "", err
		}
		return marshal(map[string]any{"id": n.ID, "title": n.Title, "draft": n.Draft})
	case tools.ExportNote:
		notes, err := a.Store.ListNotes(ctx, agentID, 1000)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		w := csv.NewWriter(&b)
		_ = w.Write([]string{"title", "body", "draft", "created_at"})
		for _, n := range notes {
			_ = w.Write([]string{n.Title, n.Body, fmt.Sprint(n.Draft), n.CreatedAt.Format(time.RFC3339)})
		}
		w.Flush()
		return marshal(map[string]any{"csv": b.String(), "rows": len(notes)})
	}
	return "", fmt.Errorf("tool %s has no implementation", call.Name)
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
	return a.Store.SaveMessages(ctx, msgs)
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
