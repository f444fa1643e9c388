package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/schemas"
	"github.com/sapagent/sapagent/workflows"
)

// The files in testdata/wire were written from the map-based publishers the typed frames
// replaced (and from the API's init, close and command frames): each frame must still put
// exactly those fields on the wire, with the same values, omitting the same ones. Key order
// is not compared (JSON objects have none; seq and epoch stay first, the script puts them).
func TestFramesKeepTheirWireShape(t *testing.T) {
	msgID := uuid.MustParse("0b6f2c1e-8d0a-4c55-9a51-3f1d2e4b5a60")
	agentID := uuid.MustParse("6a1c9e2f-0d3b-4e8a-b7c6-5d4f3e2a1b09")
	wsID := uuid.MustParse("9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a")
	mid := msgID.String()
	created := time.Date(2026, 11, 22, 10, 0, 0, 123000000, time.UTC)
	assistant := store.Message{ID: msgID, AgentID: agentID, Seq: 7, Role: "assistant", Content: "Hello", Status: "complete", Model: "offline:echo",
		PromptTokens: 12, CompletionTokens: 3, Parts: json.RawMessage(`[{"type":"text","text":"Hello"}]`), CreatedAt: created}
	user := store.Message{ID: msgID, AgentID: agentID, Seq: 1, Role: "user", Content: "hi", Status: "complete", Parts: json.RawMessage(`[]`), CreatedAt: created}
	agent := store.Agent{ID: agentID, WorkspaceID: wsID, Name: "Chat", Title: "Customers", Model: "offline:echo", Status: "waiting", CreatedBy: "alice", CreatedAt: created, UpdatedAt: created}
	ws := store.Workspace{ID: wsID, OrgID: agentID, Name: "Sales", Role: "admin", Settings: json.RawMessage(`{}`), FourEyes: true, MaxToolPolicy: "run_everything",
		CreatedBy: "alice", CreatedAt: created, UpdatedAt: created}
	pending := []workflows.PendingApproval{
		{ToolCallID: "c1", Tool: "save_note", Arguments: `{}`, Mode: "confirm_before_execution", RequestedBy: "alice"},
		{ToolCallID: "c2", Tool: "sap_write", Arguments: `{}`, Mode: "confirm_after_execution", FourEyes: true,
			Result: &workflows.ToolResult{ToolCallID: "c2", Name: "sap_write", Content: "written", Stored: true, Size: 9000}},
	}
	since := time.Date(2026, 11, 22, 10, 1, 2, 345678900, time.UTC)
	str := func(s string) *string { return &s }
	type (
		message   = frames.Message[store.Message]
		finished  = frames.SyncFinished[sapindex.Counts]
		agentInit = frames.AgentInit[store.Agent, store.Message, workflows.PendingApproval]
	)

	published := map[string]Event{
		"status":                     {"turn:m:active:3", frames.Status{Status: workflows.StatusActive}},
		"message_assistant":          {"msg:" + mid, message{Message: assistant}},
		"message_user":               {"msg:" + mid, message{Message: user}},
		"stream":                     {"msg:m:a1:d1", frames.Stream{MessageID: mid, Delta: "Hel", N: 1}},
		"stream_reset":               {"msg:m:a1:d4", frames.Stream{MessageID: mid, N: 4, Text: str("Hello wor")}},
		"stream_reset_empty":         {"msg:m:a1:d2", frames.Stream{MessageID: mid, N: 2, Text: str("")}},
		"stream_end":                 {"msg:m:end", frames.StreamEnd{MessageID: mid}},
		"thinking_start":             {"msg:m:a1:think-start", frames.ThinkingStart{MessageID: mid}},
		"thinking":                   {"msg:m:a1:t1", frames.Thinking{MessageID: mid, Delta: "hmm", N: 1}},
		"thinking_reset":             {"msg:m:a1:t3", frames.Thinking{MessageID: mid, N: 3, Text: str("hmm, so")}},
		"thinking_end":               {"msg:m:a1:think-end", frames.ThinkingEnd{MessageID: mid, Size: 42}},
		"retry":                      {"msg:m:retry:2", frames.Retry{MessageID: mid, Attempt: 2}},
		"approval_needed_before":     {"tool:c1:approval", frames.ApprovalNeeded{ToolCallID: "c1", Tool: "save_note", Arguments: `{"text":"x"}`, Mode: "confirm_before_execution", RequestedBy: "alice"}},
		"approval_needed_after":      {"tool:c1:approval", frames.ApprovalNeeded{ToolCallID: "c1", Tool: "sap_write", Arguments: `{}`, Mode: "confirm_after_execution", RequestedBy: "alice", FourEyes: true, Result: str("written")}},
		"approval_needed_legacy":     {"tool:c1:approval", frames.ApprovalNeeded{ToolCallID: "c1", Tool: "sap_write", Arguments: `{}`, Mode: "confirm_after_execution", Result: str("")}},
		"tool_update_running":        {"tool:c1:running", frames.ToolUpdate{ToolCallID: "c1", Tool: "sap_read_table", Status: "running", Arguments: str(`{"table":"T000"}`)}},
		"tool_update_running_noargs": {"tool:c1:running", frames.ToolUpdate{ToolCallID: "c1", Tool: "sap_read_table", Status: "running", Arguments: str("")}},
		"tool_update_queued":         {"tool:c1:queued", frames.ToolUpdate{ToolCallID: "c1", Tool: "execute_code", Status: "queued", Position: 3}},
		"tool_update_started":        {"tool:c1:started", frames.ToolUpdate{ToolCallID: "c1", Tool: "execute_code", Status: "running"}},
		"tool_update_done":           {"tool:c1:done", frames.ToolUpdate{ToolCallID: "c1", Tool: "sap_read_table", Status: "done", Result: str("MANDT|MTEXT")}},
		"tool_update_done_empty":     {"tool:c1:done", frames.ToolUpdate{ToolCallID: "c1", Tool: "sap_read_table", Status: "done", Result: str("")}},
		"tool_update_done_stored":    {"tool:c1:done", frames.ToolUpdate{ToolCallID: "c1", Tool: "sap_read_table", Status: "done", Result: str("preview"), Stored: true, Size: 90000}},
		"tool_error":                 {"tool:c1:error", frames.ToolError{ToolCallID: "c1", Tool: "sap_read_table", Error: "no such table"}},
		"tool_approved":              {"tool:c1:approved", frames.ToolApproved{ToolCallID: "c1", Tool: "save_note", Mode: "confirm_before_execution", DecidedBy: "bob"}},
		"tool_rejected":              {"tool:c1:rejected", frames.ToolRejected{ToolCallID: "c1", Tool: "save_note", Reason: "not now", DecidedBy: "bob"}},
		"tool_rejected_timeout":      {"tool:c1:rejected", frames.ToolRejected{ToolCallID: "c1", Tool: "save_note", Reason: "approval timed out"}},
		"tool_rejected_empty_reason": {"tool:c1:rejected", frames.ToolRejected{ToolCallID: "c1", Tool: "save_note", DecidedBy: "bob"}},
		"title_update":               {"title:a", frames.TitleUpdate{Title: "Customers in Germany"}},
		"stopped":                    {"turn:m:stopped", frames.Stopped{MessageID: mid}},
		"stopped_reason":             {"turn:m:stopped", frames.Stopped{MessageID: mid, Reason: "sender removed"}},
		"error":                      {"turn:m:error", frames.Error{Error: "the model failed"}},
		"error_message":              {"msg:m:dropped", frames.Error{Error: "message not answered: removed", MessageID: mid}},
		"sync_started":               {"sync_started:r1", frames.SyncStarted{RunID: "r1", ConnectionID: "c1", Mode: "full", Trigger: "manual"}},
		"sync_progress":              {"", frames.SyncProgress{RunID: "r1", ConnectionID: "c1", Mode: "full", Phase: "tables", Done: 10}},
		"sync_waiting":               {"", frames.SyncWaiting{RunID: "r1", ConnectionID: "c1", Mode: "delta", Phase: "tables", Reason: "connector unreachable", Attempt: 2, Since: since}},
		"sync_resumed":               {"", frames.SyncResumed{RunID: "r1", ConnectionID: "c1", Mode: "delta", Phase: "tables"}},
		"sync_finished":              {"sync_finished:r1", finished{RunID: "r1", ConnectionID: "c1", Mode: "full", Status: "succeeded", Counts: &sapindex.Counts{Entries: 10, Tables: 4, CleanCore: map[string]int64{"A": 2}}}},
		"sync_finished_failed":       {"sync_finished:r1", finished{RunID: "r1", ConnectionID: "c1", Mode: "full", Status: "failed", Counts: &sapindex.Counts{}, Error: "boom"}},
		"sync_finished_skipped":      {"sync_finished:r1", finished{RunID: "r1", ConnectionID: "c1", Mode: "delta", Status: workflows.SyncSkipped}},
	}
	// Written by the API itself, not published: no id or ts.
	written := map[string]frames.Frame{
		"init_agent": agentInit{Seq: 5, Epoch: "k3v9", Agent: agent, Status: "waiting", Messages: []store.Message{user}, PendingApprovals: pending,
			Partial: []frames.PartialText{{MessageID: "m2", Text: "Hel"}, {MessageID: "m3", Text: "lo", Reasoning: "hmm", Incomplete: true, Reset: 4}}},
		"init_agent_empty": agentInit{Epoch: "k3v9", Agent: agent, Status: "idle", Messages: []store.Message{}, PendingApprovals: []workflows.PendingApproval{},
			Partial: []frames.PartialText{}},
		"init_workspace": frames.WorkspaceInit[store.Workspace]{Epoch: "k3v9", Workspace: ws},
		"error_close":    frames.Error{Error: "too slow; reconnect with after=k3v9:41", CloseCode: 4008},
		"ack":            frames.Ack{RequestID: "r1", Command: "message", HTTPStatus: 202, Result: json.RawMessage(`{"queued":0}`)},
		"command_error":  frames.CommandError{RequestID: "r2", Command: "approve", HTTPStatus: 403, Result: json.RawMessage(`{"error":"not allowed","code":"not_allowed"}`)},
	}

	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	schema := eventsSchema(t)
	seen := map[string]bool{}
	for name, ev := range published {
		raw, err := ev.encode(at)
		require.NoError(t, err, name)
		assert.JSONEq(t, golden(t, name), string(raw), name)
		assert.True(t, strings.HasPrefix(string(raw), `{"type":"`+ev.Frame.FrameType()+`",`), "%s: %s", name, raw)
		onWire := `{"seq":3,"epoch":"k3v9",` + string(raw[1:]) // as the script writes it
		assert.NoError(t, validate(schema, onWire), "%s does not match schemas/events.schema.json", name)
		seen[name] = true
	}
	for name, f := range written {
		raw, err := frames.Marshal(f) // as the API writes it
		require.NoError(t, err, name)
		assert.JSONEq(t, golden(t, name), string(raw), name)
		assert.True(t, strings.HasPrefix(string(raw), `{"type":"`+f.FrameType()+`",`), "%s: %s", name, raw)
		assert.NoError(t, validate(schema, string(raw)), "%s does not match schemas/events.schema.json", name)
		seen[name] = true
	}
	files, _ := filepath.Glob("testdata/wire/*.json")
	for _, f := range files {
		assert.True(t, seen[strings.TrimSuffix(filepath.Base(f), ".json")], "%s is compared with no frame", f)
	}
}

// The generated schema refuses what no producer may send.
func TestEventsSchemaRejectsMalformedFrames(t *testing.T) {
	schema := eventsSchema(t)
	for _, bad := range []string{
		`{"type":"status","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","status":"sleeping"}`,
		`{"type":"status","seq":3,"id":"x","ts":"2026-11-22T10:00:00Z","status":"idle"}`,
		`{"type":"stream","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","delta":"hi","n":1}`,
		`{"type":"approval_needed","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","tool_call_id":"c","tool":"t","arguments":"{}","mode":"auto"}`,
		`{"type":"retry","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","message_id":"m","attempt":1}`,
		`{"type":"error","error":"x","close_code":1000}`,
		`{"type":"sync_finished","seq":3,"epoch":"k3v9","id":"x","ts":"2026-11-22T10:00:00Z","run_id":"r","connection_id":"c","mode":"full","status":"done"}`,
		`{"type":"init","seq":0,"workspace":{}}`,
		`{"type":"init","seq":0,"epoch":"k3v9","agent":{},"status":"idle","messages":[],"pending_approvals":[],"partial":[]}`,
		`{"type":"teleport"}`,
		`{"seq":1}`,
	} {
		assert.Error(t, validate(schema, bad), bad)
	}
}

func eventsSchema(t *testing.T) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.EventsSchema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("events.schema.json", doc))
	s, err := c.Compile("events.schema.json")
	require.NoError(t, err)
	return s
}

func validate(s *jsonschema.Schema, frame string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(frame))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func golden(t *testing.T, name string) string {
	raw, err := os.ReadFile(filepath.Join("testdata", "wire", name+".json"))
	require.NoError(t, err)
	return string(raw)
}

func TestEventWithoutFrameIsRefused(t *testing.T) {
	_, err := Event{ID: "x"}.encode(time.Now())
	require.Error(t, err)
}
