package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// modelHeartbeat is how often the model activity tells Temporal it is alive, from its first
// moment (a slow first token or a long transcript load must not look like a crash; the
// workflow's heartbeat timeout is 2.5 s) and how a stop reaches it.
var modelHeartbeat = time.Second

// GenerateReply streams one assistant reply: deltas go to the agent's topic as they arrive,
// the final text is stored in Postgres, then stream_end and message are published. A retry of
// an attempt that already stored the reply returns what is stored; tool calls get the
// product's own IDs and the mode this deploy's tools and the user's policy decide.
func (a *Activities) GenerateReply(ctx context.Context, in workflows.TurnInput) (workflows.TurnResult, error) {
	info := activity.GetInfo(ctx)
	defer heartbeatEvery(ctx, modelHeartbeat)()
	agentID, err := parseAgentID(in.AgentID)
	if err != nil {
		return workflows.TurnResult{}, err
	}
	msgID, err := uuid.Parse(in.MessageID)
	if err != nil {
		return workflows.TurnResult{}, badInput("bad message id", err)
	}
	agent, err := a.loadAgent(ctx, agentID)
	if err != nil {
		return workflows.TurnResult{}, err
	}
	modelRef := agent.Model
	if modelRef == "" {
		modelRef = a.PrimaryModel
	}
	topic := events.AgentTopic(in.AgentID)
	stored, err := a.Store.GetMessage(ctx, agentID, msgID)
	if err == nil {
		return a.storedReply(ctx, topic, stored, turnRule(in)), nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return workflows.TurnResult{}, fmt.Errorf("look up reply: %w", err)
	}
	client, model, err := a.Models.Client(modelRef)
	if err != nil {
		return workflows.TurnResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrTypeModelRejected, nil)
	}
	conns, err := a.Store.ListConnections(ctx, agent.WorkspaceID)
	if err != nil {
		return workflows.TurnResult{}, fmt.Errorf("load connections: %w", err)
	}
	offered := a.modelTools(len(conns))
	// The newest turns that fit the model's context, after the latest summary of older ones.
	win, err := a.contextWindow(ctx, agentID, agent.WorkspaceID, a.systemPrompt(ctx, agent.WorkspaceID, conns), offered, modelRef)
	if err != nil {
		return workflows.TurnResult{}, err
	}

	// run names this attempt in event IDs: Temporal's attempt within the workflow's try.
	try := max(in.Try, 1)
	run := fmt.Sprintf("%d", info.Attempt)
	if try > 1 {
		run = fmt.Sprintf("%d.%d", try, info.Attempt)
	}
	if info.Attempt > 1 || try > 1 {
		// Clients drop the partial text of the failed attempt.
		a.publish(ctx, topic, events.Event{ID: fmt.Sprintf("msg:%s:retry:%s", msgID, run),
			Frame: frames.Retry{MessageID: msgID.String(), Attempt: int(info.Attempt) + try - 1}})
	}

	stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:         model,
		Messages:      win.Messages,
		Tools:         offered,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		return workflows.TurnResult{}, modelError(err)
	}
	defer stream.Close()

	deltas := newDeltaPublisher(func(f streamFrame) (events.Cursor, error) {
		return a.tryPublish(context.WithoutCancel(ctx), topic, events.Event{
			ID:    fmt.Sprintf("msg:%s:a%s:d%d", msgID, run, f.N),
			Frame: f.stream(msgID.String()),
		})
	})
	var text strings.Builder
	var usage openai.Usage
	calls := &toolCallAssembler{}
	stopped := false
	think := newThinking(func(ev events.Event) (events.Cursor, error) {
		return a.tryPublish(context.WithoutCancel(ctx), topic, ev)
	}, msgID.String(), run)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Cancelled by the server (the user stopped the turn): keep what arrived. A worker
			// shutting down cancels with another cause; that attempt fails and is retried.
			if ctx.Err() != nil && temporal.IsCanceledError(context.Cause(ctx)) {
				stopped = true
				break
			}
			deltas.Close()
			if ctx.Err() != nil {
				// The worker is going away: Temporal retries this on another worker, and it does
				// not count against the model's budget.
				return workflows.TurnResult{}, fmt.Errorf("reply interrupted: %w", context.Cause(ctx))
			}
			return workflows.TurnResult{}, modelError(err)
		}
		if chunk.Usage != nil {
			usage = *chunk.Usage
		}
		for _, choice := range chunk.Choices {
			// Postgres stores no NUL: model text is cleaned as it arrives, so what streams is
			// what is stored (docs/events.md, "Text the database cannot store").
			if choice.Delta.ReasoningContent != "" {
				think.add(store.CleanText(choice.Delta.ReasoningContent))
			}
			if choice.Delta.Content != "" || len(choice.Delta.ToolCalls) > 0 {
				think.end() // reasoning always precedes the answer
			}
			if choice.Delta.Content != "" {
				content := store.CleanText(choice.Delta.Content)
				text.WriteString(content)
				deltas.Add(content)
			}
			calls.add(choice.Delta.ToolCalls)
		}
	}
	think.end()
	deltas.Close()

	status := "complete"
	assembled := calls.list()
	providerIDs := make([]string, len(assembled))
	for i, c := range assembled {
		providerIDs[i] = c.ID
	}
	toolCalls := decideCalls(a.registry(), msgID, assembled, turnRule(in))
	if stopped {
		status, toolCalls = "stopped", nil // half-streamed calls never run
		ctx = context.WithoutCancel(ctx)
	}
	saved, err := a.Store.SaveMessage(ctx, store.Message{
		ID: msgID, AgentID: agentID, Seq: in.Seq, Role: "assistant", Content: text.String(), Status: status,
		Model: modelRef, PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens,
		Parts: assistantParts(think.stored(), think.size, text.String(), toolCalls, providerIDs),
	})
	if err != nil {
		return workflows.TurnResult{}, storeFailure("save reply", err)
	}
	// Another attempt may have stored its reply first (a worker thought dead that was not):
	// what is stored is the answer.
	res := a.storedReply(ctx, topic, saved, turnRule(in))
	res.RequestTokens, res.Compact = win.Tokens, win.Omitted
	return res, nil
}

// storedReply announces a stored reply (event IDs make a repeat a no-op) and returns it as the
// activity's result: the tool calls the transcript holds, with modes decided now.
func (a *Activities) storedReply(ctx context.Context, topic string, m store.Message, rule tools.Rule) workflows.TurnResult {
	a.publish(ctx, topic, events.Event{ID: "msg:" + m.ID.String() + ":end", Frame: frames.StreamEnd{MessageID: m.ID.String()}})
	a.publish(ctx, topic, messageEvent(m))
	res := workflows.TurnResult{
		Stopped: m.Status == "stopped", MessageID: m.ID.String(), Model: m.Model, Chars: len(m.Content),
		PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens,
	}
	if res.Stopped {
		return res
	}
	var stored []workflows.ToolCall
	for _, p := range parseParts(m.Parts) {
		if p.Type == "tool_call" {
			stored = append(stored, workflows.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments})
		}
	}
	res.ToolCalls = classifyCalls(a.registry(), stored, rule)
	return res
}

// MaxToolCallsPerStep bounds the calls one model step may make; the rest get error results
// asking the model to make them in its next step.
const MaxToolCallsPerStep = 16

// callNamespace derives the product's tool-call IDs from the reply's message ID, so they are
// unique within the conversation and the same in every attempt of that reply.
var callNamespace = uuid.MustParse("3a9d6c4e-1f2b-4c7d-8e5a-9b0c1d2e3f4a")

// ProductCallID is the product's ID of the i-th tool call of a reply. Providers' IDs are
// neither unique (several local servers answer call_0 in every response) nor always present.
func ProductCallID(replyID uuid.UUID, i int) string {
	id := uuid.NewSHA1(callNamespace, []byte(fmt.Sprintf("%s:%d", replyID, i)))
	return "call_" + strings.ReplaceAll(id.String(), "-", "")[:24]
}

// turnRule is the rule the turn's calls are classified by: the sender's effective policy and
// the workspace's four eyes, as BeginTurn found them.
func turnRule(in workflows.TurnInput) tools.Rule {
	return tools.Rule{Policy: tools.Policy(in.Policy), FourEyes: in.FourEyes}
}

// decideCalls gives the model's calls the product's IDs and classifies them.
func decideCalls(reg *tools.Registry, replyID uuid.UUID, calls []workflows.ToolCall, rule tools.Rule) []workflows.ToolCall {
	for i := range calls {
		calls[i].ID = ProductCallID(replyID, i)
	}
	return classifyCalls(reg, calls, rule)
}

// classifyCalls decides each call's mode with this deploy's tool definitions, or why it
// cannot run. The workflow follows what this returns (it is recorded in history).
func classifyCalls(reg *tools.Registry, calls []workflows.ToolCall, rule tools.Rule) []workflows.ToolCall {
	out := make([]workflows.ToolCall, len(calls))
	for i, c := range calls {
		c.Mode, c.Invalid = "", ""
		if i >= MaxToolCallsPerStep {
			c.Invalid = fmt.Sprintf("not run: at most %d tool calls per step; make this call again in your next step", MaxToolCallsPerStep)
		} else {
			var mode tools.Mode
			mode, c.Invalid = reg.ClassifyUnder(c.Name, c.Arguments, rule)
			c.Mode = string(mode)
		}
		out[i] = c
	}
	return out
}

type part struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Size      int    `json:"size,omitempty"` // original size in bytes (reasoning before truncation, stored tool outputs)
	Stored    bool   `json:"stored,omitempty"`
	// ProviderID is the model provider's own ID of a tool call (not unique, maybe empty).
	ProviderID string `json:"provider_id,omitempty"`
}

// storedOutputs lists the tool calls whose full output is kept by reference.
func storedOutputs(history []store.Message) []string {
	var ids []string
	for _, m := range history {
		if m.Role != "tool" {
			continue
		}
		for _, p := range parseParts(m.Parts) {
			if p.Type == "tool_result" && p.Stored {
				ids = append(ids, m.ToolCallID)
			}
		}
	}
	return ids
}

func parseParts(raw json.RawMessage) []part {
	var ps []part
	_ = json.Unmarshal(raw, &ps)
	return ps
}

// assistantParts is the stored structure of a reply. Tool calls keep the provider's ID beside
// the product's, for operators tracing a call back to the provider's logs.
func assistantParts(reasoning string, reasoningSize int, text string, calls []workflows.ToolCall, providerIDs []string) json.RawMessage {
	ps := []part{}
	if reasoningSize > 0 {
		ps = append(ps, part{Type: "reasoning", Text: reasoning, Size: reasoningSize})
	}
	if text != "" {
		ps = append(ps, part{Type: "text", Text: text})
	}
	for i, c := range calls {
		p := part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if i < len(providerIDs) && providerIDs[i] != c.ID {
			p.ProviderID = providerIDs[i]
		}
		ps = append(ps, p)
	}
	raw, _ := json.Marshal(ps)
	return raw
}

// modelTools lists the tools offered to the model, as their definitions' offer rules decide
// for the workspace's connections and DIRECT_CALL_TOOLS.
func (a *Activities) modelTools(connections int) []openai.Tool {
	var out []openai.Tool
	for _, d := range a.registry().Offered(tools.Situation{Connections: connections, DirectCall: a.SAP.DirectCall}) {
		desc := d.Description + " Returns " + d.ReturnDescription
		if d.HelperDocs {
			desc = d.Description + "\n\n" + a.codeDocs()
		}
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: d.Name, Description: desc, Parameters: d.Schema(),
		}})
	}
	return out
}

// toolCallAssembler joins streamed tool-call fragments by index (OpenAI streams the id and
// name first, then the arguments in pieces). Servers that send no index continue the last
// call until a fragment brings a new ID or name.
type toolCallAssembler struct {
	calls []*workflows.ToolCall
}

func (t *toolCallAssembler) add(deltas []openai.ToolCall) {
	for _, d := range deltas {
		idx := len(t.calls) - 1
		switch {
		case d.Index != nil:
			idx = *d.Index
		case idx < 0, d.ID != "" && d.ID != t.calls[idx].ID, d.Function.Name != "" && t.calls[idx].Name != "":
			idx = len(t.calls)
		}
		if idx < 0 || idx > 1024 {
			continue // a malformed index must not allocate without bound
		}
		for len(t.calls) <= idx {
			t.calls = append(t.calls, &workflows.ToolCall{})
		}
		c := t.calls[idx]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Function.Name != "" {
			c.Name = d.Function.Name
		}
		c.Arguments += d.Function.Arguments
	}
}

// list returns the assembled calls; their IDs are the provider's until decideCalls replaces them.
func (t *toolCallAssembler) list() []workflows.ToolCall {
	var out []workflows.ToolCall
	for _, c := range t.calls {
		if c.ID != "" || c.Name != "" || c.Arguments != "" {
			out = append(out, *c)
		}
	}
	return out
}

// modelError classifies a provider failure: a request the model rejects (4xx other than
// 408/429) will fail the same way again, so it is not retried.
func modelError(err error) error {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.HTTPStatusCode == http.StatusUnauthorized, apiErr.HTTPStatusCode == http.StatusForbidden:
			// Providers echo part of the key in this message; it must not reach history or events.
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the model provider refused the configured credentials (HTTP %d)", apiErr.HTTPStatusCode),
				workflows.ErrTypeModelRejected, nil)
		case apiErr.HTTPStatusCode == http.StatusTooManyRequests, apiErr.HTTPStatusCode == http.StatusRequestTimeout,
			apiErr.HTTPStatusCode >= 500:
			return modelUnavailable(fmt.Sprintf("model error (HTTP %d): %s", apiErr.HTTPStatusCode, apiErr.Message), err)
		case apiErr.HTTPStatusCode >= 400:
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("model rejected the request (HTTP %d): %s", apiErr.HTTPStatusCode, apiErr.Message),
				workflows.ErrTypeModelRejected, nil)
		}
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) && reqErr.HTTPStatusCode >= 400 && reqErr.HTTPStatusCode < 500 &&
		reqErr.HTTPStatusCode != http.StatusTooManyRequests && reqErr.HTTPStatusCode != http.StatusRequestTimeout {
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("model rejected the request (HTTP %d)", reqErr.HTTPStatusCode), workflows.ErrTypeModelRejected, nil)
	}
	return modelUnavailable("model call: "+err.Error(), err)
}

// modelUnavailable is a provider failure that may pass: the workflow tries the step again a
// bounded number of times (its own budget, separate from crashes and outages).
func modelUnavailable(msg string, cause error) error {
	return temporal.NewApplicationErrorWithCause(msg, workflows.ErrTypeModelUnavailable, cause)
}

// deltaPublisher sends each delta as soon as no publish is in flight; deltas arriving while
// one is in flight are joined into the next publish. Latency stays minimal at low load and
// Redis round trips stay bounded at high load.
//
// A delta only makes sense on top of every delta before it. When a publish fails, or the topic's
// epoch changes under the stream (Redis lost its data: clients resynchronise with an init whose
// log holds none of the text so far), the next frame is a reset carrying the whole text so far,
// which clients put in place of what they hold (docs/events.md, "Resets").
type deltaPublisher struct {
	mu      sync.Mutex
	pending strings.Builder
	closed  bool
	wake    chan struct{}
	done    chan struct{}
}

// streamFrame is one publish of a streamed text: a delta, or a reset with the whole text.
type streamFrame struct {
	N     int    // 1, 2, … within the attempt: the frame's place in event IDs
	Delta string // text to append ("" in a reset)
	Reset bool   // Text replaces what clients hold
	Text  string // the whole text so far, in a reset
}

func newDeltaPublisher(send func(streamFrame) (events.Cursor, error)) *deltaPublisher {
	p := &deltaPublisher{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.run(send)
	return p
}

func (p *deltaPublisher) run(send func(streamFrame) (events.Cursor, error)) {
	defer close(p.done)
	var (
		n      int
		full   strings.Builder // everything handed to the publisher
		epoch  string          // the topic's numbering the last frame went into
		resync bool            // clients may lack text: the next frame is a reset
	)
	publish := func(delta string) {
		for {
			f := streamFrame{Delta: delta}
			if resync {
				f = streamFrame{Reset: true, Text: full.String()}
			}
			n++
			f.N = n
			pos, err := send(f)
			if err != nil {
				resync = true // this frame may be missing for someone: the next one carries all
				return
			}
			lost := epoch != "" && pos.Epoch != epoch
			epoch = pos.Epoch
			if !lost || f.Reset {
				resync = false
				return
			}
			// The first frame of a new numbering: whoever synchronised to it holds no text from
			// before, so the whole text follows at once.
			resync = true
		}
	}
	for range p.wake {
		for {
			p.mu.Lock()
			text := p.pending.String()
			p.pending.Reset()
			closed := p.closed
			p.mu.Unlock()
			if text != "" {
				full.WriteString(text)
				publish(text)
				continue
			}
			if closed {
				if resync {
					publish("") // the last frame failed: one more try with the whole text
				}
				return
			}
			break
		}
	}
}

// Add queues a delta for publishing.
func (p *deltaPublisher) Add(text string) {
	p.mu.Lock()
	p.pending.WriteString(text)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Close publishes what is pending and waits for it.
func (p *deltaPublisher) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	<-p.done
}

// frameFields are a stream or thinking frame's fields: a delta, or a reset's whole text. n
// orders them: a publish that timed out may still land after the reset that followed it, and
// clients ignore frames numbered below the last reset they applied.
// stream is the frame's wire form; a reset carries the whole text (even an empty one).
func (f streamFrame) stream(msgID string) frames.Stream {
	s := frames.Stream{MessageID: msgID, Delta: f.Delta, N: f.N}
	if f.Reset {
		s.Text = &f.Text
	}
	return s
}

// maxStoredReasoning bounds the reasoning kept in Postgres; clients get all of it live.
const maxStoredReasoning = 3 << 10

// thinking streams reasoning deltas between thinking_start and thinking_end and keeps the
// start of it for storage.
type thinking struct {
	publish func(events.Event) (events.Cursor, error)
	msgID   string
	run     string // the attempt, as in event IDs
	deltas  *deltaPublisher
	kept    strings.Builder
	size    int
	done    bool
}

func newThinking(publish func(events.Event) (events.Cursor, error), msgID string, run string) *thinking {
	return &thinking{publish: publish, msgID: msgID, run: run}
}

func (t *thinking) add(s string) {
	if t.done {
		return
	}
	if t.deltas == nil {
		_, _ = t.publish(events.Event{ID: fmt.Sprintf("msg:%s:a%s:think-start", t.msgID, t.run), Frame: frames.ThinkingStart{MessageID: t.msgID}})
		t.deltas = newDeltaPublisher(func(f streamFrame) (events.Cursor, error) {
			return t.publish(events.Event{ID: fmt.Sprintf("msg:%s:a%s:t%d", t.msgID, t.run, f.N), Frame: frames.Thinking(f.stream(t.msgID))})
		})
	}
	t.size += len(s)
	if room := maxStoredReasoning - t.kept.Len(); room > 0 {
		t.kept.WriteString(truncate(s, room))
	}
	t.deltas.Add(s)
}

// end flushes the reasoning and announces its end (once; no-op without reasoning).
func (t *thinking) end() {
	if t.done || t.deltas == nil {
		return
	}
	t.done = true
	t.deltas.Close()
	_, _ = t.publish(events.Event{ID: fmt.Sprintf("msg:%s:a%s:think-end", t.msgID, t.run), Frame: frames.ThinkingEnd{MessageID: t.msgID, Size: t.size}})
}

func (t *thinking) stored() string { return t.kept.String() }

// expandStoredOutputs puts the full text of stored tool outputs up to ModelToolOutput back into
// the transcript; larger ones stay as their preview (the model sees the size).
func (a *Activities) expandStoredOutputs(ctx context.Context, agentID uuid.UUID, history []store.Message) error {
	full, err := a.Store.ToolOutputs(ctx, agentID, storedOutputs(history), ModelToolOutput)
	if err != nil {
		return err
	}
	for i := range history {
		if content, ok := full[history[i].ToolCallID]; ok && history[i].Role == "tool" {
			history[i].Content = content
		}
	}
	return nil
}
