// Package frames declares every frame of the event protocol (docs/events.md) as one Go type:
// what the activities and workflows publish on a conversation's or a workspace's topic, and
// what the API writes itself (init, the SSE close error, command answers). The JSON schema
// (schemas/events.schema.json) and the page's TypeScript types (web/src/chat/events.gen.ts)
// are generated from these declarations: `go generate ./internal/events/frames`.
//
// The package imports nothing of the product, so the workflows can build their frames without
// linking Redis or the database. Frames that carry a record of another package (a transcript
// message, an agent, sync counts) take it as a type parameter; the generator names the record.
//
// Struct tags the generator reads besides `json`: `enum:"a,b"`, `format:"uuid|date-time"`,
// `minimum:"n"`, `minLength:"n"`, `maxLength:"n"`. A field without omitempty is always sent.
package frames

import (
	"encoding/json"
	"time"
)

//go:generate go run ./gen

// Frame is one frame of the protocol. Type is the wire's "type"; publishers never write it.
type Frame interface {
	FrameType() string
}

// Status: the conversation's state changed (waiting: approvals are pending).
type Status struct {
	Status string `json:"status" enum:"idle,active,waiting"`
}

// Message: a complete message was stored (the user's at turn start, the assistant's after each
// model step, a summary when older turns were compacted). M is the transcript row.
type Message[M any] struct {
	Message M `json:"message"`
}

// Stream: the next piece of the assistant's text; all deltas of a message concatenated give its
// content. With Text it is a reset: Delta is "" and Text replaces what the client holds.
type Stream struct {
	MessageID string `json:"message_id" minLength:"1"`
	Delta     string `json:"delta"`
	// N numbers the message's frames (1, 2, … per attempt); clients ignore frames numbered below
	// the last reset they applied.
	N int `json:"n" minimum:"1"`
	// Text is the whole text so far, in a reset only (where it may be empty).
	Text *string `json:"text,omitempty"`
}

// Thinking: a piece of the model's reasoning; with Text, a reset of the reasoning so far.
type Thinking Stream

// StreamEnd: the streamed message is complete (its message frame follows).
type StreamEnd struct {
	MessageID string `json:"message_id" minLength:"1"`
}

// ThinkingStart: the model starts reasoning, before its answer.
type ThinkingStart struct {
	MessageID string `json:"message_id" minLength:"1"`
}

// ThinkingEnd: the reasoning finished.
type ThinkingEnd struct {
	MessageID string `json:"message_id" minLength:"1"`
	Size      int    `json:"size" minimum:"0"` // bytes of reasoning
}

// Retry: the model call is retried; clients drop the partial text of MessageID.
type Retry struct {
	MessageID string `json:"message_id" minLength:"1"`
	Attempt   int    `json:"attempt" minimum:"2"` // grows with each new attempt
}

// ApprovalNeeded: a tool call waits for POST /api/agents/:id/approve.
type ApprovalNeeded struct {
	ToolCallID string `json:"tool_call_id" minLength:"1"`
	Tool       string `json:"tool" minLength:"1"`
	Arguments  string `json:"arguments"` // JSON text
	Mode       string `json:"mode" enum:"confirm_before_execution,confirm_after_execution"`
	// Result is what the user reviews (confirm_after_execution only).
	Result *string `json:"result,omitempty"`
	// RequestedBy is the user whose message led to the call: who decides it.
	RequestedBy string `json:"requested_by,omitempty"`
	// FourEyes: the workspace required four eyes as the call was requested; its requester
	// cannot approve it.
	FourEyes bool `json:"four_eyes,omitempty"`
}

// ToolUpdate: a tool call was queued for a sandbox, started or finished. Clients treat a
// status they do not know as running.
type ToolUpdate struct {
	ToolCallID string `json:"tool_call_id" minLength:"1"`
	Tool       string `json:"tool" minLength:"1"`
	Status     string `json:"status" enum:"queued,running,done"`
	// Position is about the call's place in line for a sandbox (1: next), with queued.
	Position  int     `json:"position,omitempty" minimum:"1"`
	Arguments *string `json:"arguments,omitempty"` // with running, as the call started
	// Result is the output (at most 4 KB of it), with done.
	Result *string `json:"result,omitempty"`
	// Stored: the output was stored by reference, Size bytes (GET …/tool-outputs/:id); Result
	// is a preview.
	Stored bool `json:"stored,omitempty"`
	Size   int  `json:"size,omitempty" minimum:"0"`
}

// ToolError: a tool call failed; the model sees the error and may correct itself.
type ToolError struct {
	ToolCallID string `json:"tool_call_id" minLength:"1"`
	Tool       string `json:"tool" minLength:"1"`
	Error      string `json:"error"`
}

// ToolApproved: DecidedBy approved a call (a write then runs: tool_update).
type ToolApproved struct {
	ToolCallID string `json:"tool_call_id" minLength:"1"`
	Tool       string `json:"tool" minLength:"1"`
	Mode       string `json:"mode" enum:"confirm_before_execution,confirm_after_execution"`
	DecidedBy  string `json:"decided_by"`
}

// ToolRejected: a call was rejected; the model sees "User rejected this tool call".
type ToolRejected struct {
	ToolCallID string `json:"tool_call_id" minLength:"1"`
	Tool       string `json:"tool" minLength:"1"`
	Reason     string `json:"reason"`
	// DecidedBy is absent when the approval timed out or its requester was removed (Reason
	// says which).
	DecidedBy string `json:"decided_by,omitempty"`
}

// TitleUpdate: the conversation was named after its first message.
type TitleUpdate struct {
	Title string `json:"title"`
}

// Stopped: the turn of the user message MessageID was stopped; its partial text is kept as a
// stopped message.
type Stopped struct {
	MessageID string `json:"message_id" minLength:"1"`
	// Reason: the turn was stopped for another cause than the user (its sender was removed).
	Reason string `json:"reason,omitempty"`
}

// Error: a turn failed and the conversation stays usable; or, from the API, the end of an SSE
// stream (CloseCode, the WebSocket close code it stands for).
type Error struct {
	Error string `json:"error"`
	// MessageID: that user message will never be answered (its sender was removed while it
	// was queued).
	MessageID string `json:"message_id,omitempty" minLength:"1"`
	CloseCode int    `json:"close_code,omitempty" enum:"1011,4001,4003,4008,4009"`
}

// SyncStarted: a sync run of a connection started (workspace topic).
type SyncStarted struct {
	RunID        string `json:"run_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode" enum:"full,delta,enrich-only"`
	Trigger      string `json:"trigger" enum:"manual,schedule"`
}

// SyncProgress: a phase moved (at most once a second).
type SyncProgress struct {
	RunID        string `json:"run_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`
	Phase        string `json:"phase"`
	Done         int64  `json:"done" minimum:"0"`
	Total        int64  `json:"total" minimum:"0"` // 0: not known
}

// SyncWaiting: the connector failed and the phase will be retried; one per failed attempt.
type SyncWaiting struct {
	RunID        string `json:"run_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`
	Phase        string `json:"phase"`
	// Reason is safe to show: no key or password, at most 200 bytes and "…".
	Reason  string    `json:"reason" minLength:"1" maxLength:"210"`
	Attempt int       `json:"attempt" minimum:"1"`
	Since   time.Time `json:"since"` // stays while the same wait goes on
}

// SyncResumed: pages arrive again, the wait is over.
type SyncResumed struct {
	RunID        string `json:"run_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`
	Phase        string `json:"phase"`
}

// SyncFinished: a run ended. C is the index's counts after the run.
type SyncFinished[C any] struct {
	RunID        string `json:"run_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`
	Status       string `json:"status" enum:"succeeded,failed,cancelled,skipped"`
	Counts       *C     `json:"counts,omitempty"` // absent for a skipped run
	Error        string `json:"error,omitempty"`
}

// AgentInit is the first frame of a conversation's stream without a usable cursor: the
// snapshot and the position (Epoch, Seq) it reflects. A is the agent, M a transcript message,
// P a pending approval.
type AgentInit[A, M, P any] struct {
	Seq              int64         `json:"seq" minimum:"0"`
	Epoch            string        `json:"epoch"`
	Agent            A             `json:"agent"`
	Status           string        `json:"status" enum:"idle,active,waiting"`
	Messages         []M           `json:"messages"` // the newest 500, in seq order
	PendingApprovals []P           `json:"pending_approvals"`
	Partial          []PartialText `json:"partial"` // text streamed so far for a turn in progress
}

// PartialText is the text (and reasoning) streamed so far for a message not finished yet.
type PartialText struct {
	MessageID string `json:"message_id" minLength:"1"`
	Text      string `json:"text"`
	Reasoning string `json:"reasoning,omitempty"`
	// Incomplete: the log no longer holds the beginning, so Text and Reasoning are only their
	// ends; the stored message replaces them.
	Incomplete bool `json:"incomplete,omitempty"`
	// Reset is the n of the stream reset Text starts from (0: none).
	Reset int `json:"reset,omitempty"`
}

// WorkspaceInit is the first frame of a workspace's stream without a usable cursor.
type WorkspaceInit[W any] struct {
	Seq       int64  `json:"seq" minimum:"0"`
	Epoch     string `json:"epoch"`
	Workspace W      `json:"workspace"`
}

// Ack answers a WebSocket command the REST route would have accepted.
type Ack struct {
	RequestID string `json:"request_id"`
	Command   string `json:"command"`
	// HTTPStatus and Result are what the REST route would have answered.
	HTTPStatus int             `json:"http_status"`
	Result     json.RawMessage `json:"result"`
}

// CommandError answers a WebSocket command the REST route would have refused.
type CommandError Ack

func (Status) FrameType() string             { return "status" }
func (Message[M]) FrameType() string         { return "message" }
func (Stream) FrameType() string             { return "stream" }
func (Thinking) FrameType() string           { return "thinking" }
func (StreamEnd) FrameType() string          { return "stream_end" }
func (ThinkingStart) FrameType() string      { return "thinking_start" }
func (ThinkingEnd) FrameType() string        { return "thinking_end" }
func (Retry) FrameType() string              { return "retry" }
func (ApprovalNeeded) FrameType() string     { return "approval_needed" }
func (ToolUpdate) FrameType() string         { return "tool_update" }
func (ToolError) FrameType() string          { return "tool_error" }
func (ToolApproved) FrameType() string       { return "tool_approved" }
func (ToolRejected) FrameType() string       { return "tool_rejected" }
func (TitleUpdate) FrameType() string        { return "title_update" }
func (Stopped) FrameType() string            { return "stopped" }
func (Error) FrameType() string              { return "error" }
func (SyncStarted) FrameType() string        { return "sync_started" }
func (SyncProgress) FrameType() string       { return "sync_progress" }
func (SyncWaiting) FrameType() string        { return "sync_waiting" }
func (SyncResumed) FrameType() string        { return "sync_resumed" }
func (SyncFinished[C]) FrameType() string    { return "sync_finished" }
func (AgentInit[A, M, P]) FrameType() string { return "init" }
func (WorkspaceInit[W]) FrameType() string   { return "init" }
func (Ack) FrameType() string                { return "ack" }
func (CommandError) FrameType() string       { return "command_error" }

// Marshal encodes a frame the API writes itself (init, a stream's closing error, a command's
// answer) as it goes on the wire: "type" first, then the frame's fields.
func Marshal(f Frame) ([]byte, error) {
	fields, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		Type string `json:"type"`
	}{f.FrameType()})
	if err != nil {
		return nil, err
	}
	if string(fields) == "{}" {
		return head, nil
	}
	// {"type":…} + {fields} → {"type":…,fields}
	return append(append(head[:len(head)-1], ','), fields[1:]...), nil
}
