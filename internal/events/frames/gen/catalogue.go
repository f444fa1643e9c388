package main

import (
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// envelope is what a frame carries besides its own fields.
type envelope int

const (
	published envelope = iota // seq, epoch, id, ts: everything the bus carries
	written                   // written by the API itself: its fields only
	either                    // published by a turn, or written by the API (error)
)

// entry is one frame of the protocol, with the records of other packages it carries named.
type entry struct {
	frame    frames.Frame
	topics   []string // agent, workspace: which streams carry it
	envelope envelope
	// selectedBy: several frames share a type (init); this one is the one with that field.
	selectedBy string
}

var (
	agentTopic     = []string{"agent"}
	workspaceTopic = []string{"workspace"}
)

// catalogue lists every frame, in the order the generated files show them. A frame type that
// package frames declares but this list lacks fails the generator.
var catalogue = []entry{
	{frame: frames.AgentInit[store.Agent, store.Message, workflows.PendingApproval]{}, topics: agentTopic, envelope: written},
	{frame: frames.WorkspaceInit[store.Workspace]{}, topics: workspaceTopic, envelope: written, selectedBy: "workspace"},
	{frame: frames.Message[store.Message]{}, topics: agentTopic},
	{frame: frames.Status{}, topics: agentTopic},
	{frame: frames.Stream{}, topics: agentTopic},
	{frame: frames.StreamEnd{}, topics: agentTopic},
	{frame: frames.ThinkingStart{}, topics: agentTopic},
	{frame: frames.Thinking{}, topics: agentTopic},
	{frame: frames.ThinkingEnd{}, topics: agentTopic},
	{frame: frames.Retry{}, topics: agentTopic},
	{frame: frames.ApprovalNeeded{}, topics: agentTopic},
	{frame: frames.ToolUpdate{}, topics: agentTopic},
	{frame: frames.ToolError{}, topics: agentTopic},
	{frame: frames.ToolApproved{}, topics: agentTopic},
	{frame: frames.ToolRejected{}, topics: agentTopic},
	{frame: frames.TitleUpdate{}, topics: agentTopic},
	{frame: frames.Stopped{}, topics: agentTopic},
	{frame: frames.Error{}, topics: agentTopic, envelope: either},
	{frame: frames.Ack{}, topics: agentTopic, envelope: written},
	{frame: frames.CommandError{}, topics: agentTopic, envelope: written},
	{frame: frames.SyncStarted{}, topics: workspaceTopic},
	{frame: frames.SyncProgress{}, topics: workspaceTopic},
	{frame: frames.SyncWaiting{}, topics: workspaceTopic},
	{frame: frames.SyncResumed{}, topics: workspaceTopic},
	{frame: frames.SyncFinished[sapindex.Counts]{}, topics: workspaceTopic},
}

// fieldOverride says what Go cannot: the values a field of another package's record takes, or
// the shape of JSON it holds as raw bytes.
type fieldOverride struct {
	schema map[string]any
	ts     string
}

// overrides by "<package>.<Type>.<json name>".
var overrides = map[string]fieldOverride{
	"store.Message.role":   enumOverride("user", "assistant", "tool", "system", "summary"),
	"store.Message.status": enumOverride("complete", "stopped", "error"),
	"store.Message.parts":  {schema: map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/Part"}}, ts: "Part[]"},
}

func enumOverride(values ...string) fieldOverride {
	schema := map[string]any{"enum": values}
	return fieldOverride{schema: schema, ts: tsUnion(values)}
}

// The parts of a transcript message are written as maps by several packages (activities, store)
// and have no Go type yet, so their shape is kept here, by hand (docs/events.md, "parts").
var partSchema = map[string]any{
	"type":        "object",
	"description": "One piece of a message's structured content (docs/events.md).",
	"required":    []string{"type"},
	"properties": map[string]any{
		"type": map[string]any{"enum": []string{"text", "reasoning", "tool_call", "tool_result", "summary", "file"}},
	},
	"if": map[string]any{"properties": map[string]any{"type": map[string]any{"const": "file"}}},
	"then": map[string]any{
		"required": []string{"file_id", "size"},
		"properties": map[string]any{
			"file_id": map[string]any{"type": "string", "format": "uuid"}, "name": map[string]any{"type": "string"},
			"content_type": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer", "minimum": 0},
			"deleted": map[string]any{"type": "boolean"},
		},
	},
}

const partTS = `/** One piece of a message's structured content (docs/events.md); which fields it has depends on its type. */
export interface Part {
  type: 'text' | 'reasoning' | 'tool_call' | 'tool_result' | 'summary' | 'file'
  /** text, reasoning */
  text?: string
  /** reasoning: bytes of reasoning in all; tool_result: bytes of the stored output; file: bytes */
  size?: number
  /** tool_call */
  id?: string
  /** tool_call, tool_result, file */
  name?: string
  /** tool_call: JSON text */
  arguments?: string
  /** tool_result */
  tool_call_id?: string
  content?: string
  is_error?: boolean
  stored?: boolean
  rejected?: boolean
  /** file */
  file_id?: string
  content_type?: string
  deleted?: boolean
  /** summary: the seqs it stands for */
  from_seq?: number
  through_seq?: number
  turns?: number
}
`
