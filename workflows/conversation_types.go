package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sapagent/sapagent/internal/events/frames"
)

// ConversationWorkflowName is the conversation workflow's type; its updates and query are in handler.go.
const ConversationWorkflowName = "Conversation"

// Application error types the update validators return; the API maps them to statuses.
const (
	ErrTypeQueueFull       = "QueueFull"       // 429
	ErrTypeUnknownToolCall = "UnknownToolCall" // 404
	ErrTypeAlreadyDecided  = "AlreadyDecided"  // 409
	ErrTypeNotAllowed      = "NotAllowed"      // 403: this user may not decide this call
)

// Error types activities return for failures that retrying the same call cannot fix.
const (
	// ErrTypeBadInput: the input itself is invalid (a programming error, never an outage).
	ErrTypeBadInput = "BadInput"
	// ErrTypeModelRejected marks a model request the provider refused (e.g. context too long).
	ErrTypeModelRejected = "ModelRejected"
	// ErrTypeModelUnavailable marks a failed model call that may succeed later (HTTP 5xx, 429,
	// network). The workflow retries it a bounded number of times itself, so crashed workers and
	// heartbeat timeouts (which Temporal retries without limit) never use up this budget.
	ErrTypeModelUnavailable = "ModelUnavailable"
	// ErrTypeNotMember marks a turn whose sender may no longer use the agent's workspace: it is
	// refused, never retried.
	ErrTypeNotMember = "NotMember"
)

// Conversation statuses (seed 000 "Persistent state").
const (
	StatusIdle    = "idle"
	StatusActive  = "active"
	StatusWaiting = "waiting"
)

// ConversationWorkflowID is the workflow ID of an agent's conversation; operators find it by it.
func ConversationWorkflowID(agentID string) string { return "agent/" + agentID }

// ConversationInput starts (or continues as new) a conversation run. It carries IDs and
// counters only: the transcript lives in Postgres.
type ConversationInput struct {
	AgentID     string
	WorkspaceID string
	// IdleTimeout completes the run after this long without a message; the next message starts
	// a new run that restores from Postgres.
	IdleTimeout time.Duration
	// LastSeq is the last message seq of the previous run (continue-as-new); 0 means "load it".
	LastSeq int64
	// Pending carries messages queued but not yet answered across continue-as-new.
	Pending []UserMessage
	// MaxSteps bounds model steps per turn (0: DefaultMaxSteps).
	MaxSteps int
	// MaxQueued bounds messages waiting behind the running turn (0: DefaultMaxQueued).
	MaxQueued int
	// ApprovalTimeout rejects calls still undecided after it (0: DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// RunEvents continues the run as new at the first turn boundary past this many history
	// events (0: DefaultRunEvents).
	RunEvents int `json:",omitempty"`
}

// UserMessage is a message sent to the conversation. The API chooses ID (or takes the
// client's), which is also the Update ID, so a retried POST is delivered once.
type UserMessage struct {
	ID      string
	Content string
	UserID  string // the sender; tools run on their behalf and under their policy
	// Parked: the content was stored in Postgres before continue-as-new (Content is empty);
	// BeginTurn loads it. A run's input carries IDs, never a queue of large texts.
	Parked bool `json:",omitempty"`
	// Attachments are IDs of files of the agent's workspace sent with the message (the API
	// checked the sender may see them); BeginTurn stores them as the message's file parts.
	// Absent in histories recorded before attachments: no command depends on them.
	Attachments []string `json:",omitempty"`
}

// MaxAttachments bounds the files one message may carry.
const MaxAttachments = 10

// ParkInput stores a queued message's content before continue-as-new.
type ParkInput struct {
	AgentID string
	Message UserMessage
}

// SendMessageResult is the reply of the send_message update.
type SendMessageResult struct {
	MessageID string `json:"message_id"`
	// Queued is the number of messages ahead of this one that have not been answered yet.
	Queued int `json:"queued"`
}

// State is what the state query returns.
type State struct {
	Status           string            `json:"status"`
	LastSeq          int64             `json:"last_seq"`
	Queued           int               `json:"queued"`
	PendingApprovals []PendingApproval `json:"pending_approvals"`
}

// ToolCall is one call the model asked for. ID is the product's own (unique per
// conversation), never the provider's.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Mode is the execution mode the model activity decided (recorded in history, so a deploy
	// that changes tools or policies never changes a waiting conversation's commands). Empty in
	// histories recorded before modes were recorded.
	Mode string `json:"mode,omitempty"`
	// Invalid says why the call cannot run (unknown tool, arguments that fail the schema, too
	// many calls in one step); the model gets it as an error result.
	Invalid string `json:"invalid,omitempty"`
}

// ToolResult is what a call produced (or why it did not run). Content is what the model sees.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
	Rejected   bool   `json:"rejected,omitempty"`
	// Stored: Content is a preview; the full output (Size bytes) is in Postgres (claim check).
	Stored bool `json:"stored,omitempty"`
	Size   int  `json:"size,omitempty"`
}

// PendingApproval is a call waiting for the user's decision.
type PendingApproval struct {
	ToolCallID string      `json:"tool_call_id"`
	Tool       string      `json:"tool"`
	Arguments  string      `json:"arguments"`
	Mode       string      `json:"mode"`
	Result     *ToolResult `json:"result,omitempty"` // confirm_after_execution: what the user reviews
	// RequestedBy is the user whose message led to the call: the one who decides it.
	RequestedBy string `json:"requested_by,omitempty"`
	// FourEyes: the workspace required four eyes when the call was requested. A decision applies
	// the stricter of this and the rule when it is made, so switching four eyes off does not let
	// a requester approve their own write (false in histories recorded before it).
	FourEyes bool `json:"four_eyes,omitempty"`
}

// Decision approves or rejects one pending call.
type Decision struct {
	ToolCallID string `json:"tool_call_id"`
	Approved   bool   `json:"approved"`
	Reason     string `json:"reason,omitempty"`
}

// ApproveRequest carries one or many decisions. Everything but Decisions is set by the API
// (the token's user, their role, the workspace's approval rules), never taken from the request
// body; the validator cannot do I/O, so the API looks them up.
type ApproveRequest struct {
	Decisions []Decision `json:"decisions"`
	// DecidedBy is the deciding user; empty (histories recorded before it) is refused by the validator.
	DecidedBy string `json:"decided_by,omitempty"`
	// DeciderIsAdmin: DecidedBy administers the agent's workspace.
	DeciderIsAdmin bool `json:"decider_is_admin,omitempty"`
	// AdminsMayApprove and FourEyes are the workspace's approval rules when the decision was made.
	AdminsMayApprove bool `json:"admins_may_approve,omitempty"`
	FourEyes         bool `json:"four_eyes,omitempty"`
}

// ApproveResult says how many calls of the group still wait.
type ApproveResult struct {
	Remaining int `json:"remaining"`
}

// StopRequest asks to stop the running turn; it carries nothing (histories recorded before
// the typed updates hold stop updates without an argument, which decode to it).
type StopRequest struct{}

// StopResult says whether a running turn was stopped.
type StopResult struct {
	Stopped bool `json:"stopped"`
}

// TurnContext is what BeginTurn loads for the loop.
type TurnContext struct {
	// Policy is the sender's effective tool policy: their chosen one bounded by the workspace's
	// max_tool_policy (histories recorded before the bound hold the chosen one).
	Policy string
	// ChosenPolicy is the policy the sender chose (shown to operators; empty in old histories).
	ChosenPolicy string `json:",omitempty"`
	// FourEyes is the workspace's four-eyes rule at the turn's start: every write asks another
	// person, whatever the policy.
	FourEyes bool   `json:",omitempty"`
	Model    string // provider:model the turn uses (shown to operators)
	// Seq is where the message was stored (0 in old histories: the proposed seq).
	Seq int64
	// Duplicate: the message was already stored by an earlier run (a client re-sent its
	// client_message_id after continue-as-new or an idle completion); it was answered then.
	Duplicate bool
}

// ToolCallInput asks the tool activity to run one call.
type ToolCallInput struct {
	AgentID string
	UserID  string
	Call    ToolCall
	// DecidedBy is who approved a confirm-before call (recorded in the action log); empty for
	// calls that needed no approval.
	DecidedBy string `json:",omitempty"`
}

// ToolResultsInput stores a step's tool results as transcript rows.
type ToolResultsInput struct {
	AgentID  string
	FirstSeq int64
	Results  []ToolResult
}

// EventInput publishes one workflow-driven event.
type EventInput struct {
	AgentID string
	EventID string
	Frame   frames.Frame
}

// eventPayload is EventInput as histories hold it: the frame's type and fields side by side
// (recorded before frames were typed, so the shape stays).
type eventPayload struct {
	AgentID string
	EventID string
	Type    string
	Fields  json.RawMessage
}

func (in EventInput) MarshalJSON() ([]byte, error) {
	if in.Frame == nil {
		return nil, errors.New("event input without a frame")
	}
	fields, err := json.Marshal(in.Frame)
	if err != nil {
		return nil, err
	}
	return json.Marshal(eventPayload{AgentID: in.AgentID, EventID: in.EventID, Type: in.Frame.FrameType(), Fields: fields})
}

func (in *EventInput) UnmarshalJSON(raw []byte) error {
	var p eventPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	decode, ok := workflowFrames[p.Type]
	if !ok {
		return fmt.Errorf("the workflow publishes no %q event", p.Type)
	}
	f, err := decode(p.Fields)
	if err != nil {
		return fmt.Errorf("%s event: %w", p.Type, err)
	}
	*in = EventInput{AgentID: p.AgentID, EventID: p.EventID, Frame: f}
	return nil
}

// workflowFrames decode the frames the workflow publishes, by type.
var workflowFrames = map[string]func(json.RawMessage) (frames.Frame, error){
	frames.ApprovalNeeded{}.FrameType(): decodeFrame[frames.ApprovalNeeded],
	frames.ToolApproved{}.FrameType():   decodeFrame[frames.ToolApproved],
	frames.ToolRejected{}.FrameType():   decodeFrame[frames.ToolRejected],
	frames.Stopped{}.FrameType():        decodeFrame[frames.Stopped],
}

func decodeFrame[F frames.Frame](raw json.RawMessage) (frames.Frame, error) {
	var f F
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// TurnInput asks the model activity for one reply.
type TurnInput struct {
	AgentID   string
	MessageID string // ID of the assistant message to write
	Seq       int64  // its seq in the transcript
	Step      int    // model step within the turn (0 first)
	Policy    string // the sender's effective tool policy: the activity decides each call's mode with it
	Try       int    // the workflow's try after model errors (1 first); 0 in old histories
	// FourEyes: every write asks for approval, whatever Policy (TurnContext.FourEyes).
	FourEyes bool `json:",omitempty"`
}

// TurnResult summarises a finished reply (never its text: that is in Postgres).
type TurnResult struct {
	ToolCalls        []ToolCall
	Stopped          bool // the user stopped it; partial text was kept
	MessageID        string
	Model            string
	Chars            int
	PromptTokens     int
	CompletionTokens int
	// RequestTokens is the estimated size of the request sent; Compact says older turns were
	// left out of it, so a summary should be made.
	RequestTokens int
	Compact       bool
}

// BeginTurnInput records the user's message and marks the conversation active.
type BeginTurnInput struct {
	AgentID string
	Message UserMessage
	Seq     int64
	EventID string
}

// StatusInput records and announces a status change.
type StatusInput struct {
	AgentID string
	Status  string
	EventID string
}

// ErrorInput announces a failed turn to the conversation's clients.
type ErrorInput struct {
	AgentID string
	Message string
	EventID string
	// MessageID names the user message that was not answered, when the turn was refused before
	// it began (its sender was removed); clients stop showing it as queued.
	MessageID string `json:",omitempty"`
}

// RemovedRequesterReason is the reason given for the calls of a member who was removed while
// they waited for approval (tool_rejected, and what the model reads).
const RemovedRequesterReason = "the requester was removed from the workspace"

// RemovedSenderReason says why a removed member's queued messages are not answered and why
// her running turn stopped.
const RemovedSenderReason = "its sender was removed from the workspace"

// RemoveMemberRequest tells a running conversation that UserID may no longer use its workspace
// (removed from it or from its organization): her queued messages are dropped, her pending
// calls rejected and her running turn stopped. The API sends it after the removal committed.
type RemoveMemberRequest struct {
	UserID string `json:"user_id"`
	// Reason is what clients are told about the dropped messages (RemovedSenderReason when empty).
	Reason string `json:"reason,omitempty"`
}

// RemoveMemberResult says what the removal changed in this conversation.
type RemoveMemberResult struct {
	Dropped  int  `json:"dropped"`  // queued messages of hers that will not be answered
	Rejected int  `json:"rejected"` // her calls that were waiting for approval
	Stopped  bool `json:"stopped"`  // her running turn was stopped
}

// DropMessagesInput removes queued messages that will never be answered: parked contents are
// deleted from Postgres and clients are told (an error event per message).
type DropMessagesInput struct {
	AgentID    string
	MessageIDs []string
	Reason     string
}
