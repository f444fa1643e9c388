package workflows

import "time"

// Names of the conversation workflow's handlers, shared by the API and the workflow.
const (
	ConversationWorkflowName = "Conversation"
	UpdateSendMessage        = "send_message"
	QueryState               = "state"
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
}

// UserMessage is a message sent to the conversation. The API chooses ID (or takes the
// client's), which is also the Update ID, so a retried POST is delivered once.
type UserMessage struct {
	ID      string
	Content string
}

// SendMessageResult is the reply of the send_message update.
type SendMessageResult struct {
	MessageID string `json:"message_id"`
	// Queued is the number of messages ahead of this one that have not been answered yet.
	Queued int `json:"queued"`
}

// State is what the state query returns.
type State struct {
	Status  string `json:"status"`
	LastSeq int64  `json:"last_seq"`
	Queued  int    `json:"queued"`
}

// TurnInput asks the model activity for one reply.
type TurnInput struct {
	AgentID   string
	MessageID string // ID of the assistant message to write
	Seq       int64  // its seq in the transcript
}

// TurnResult summarises a finished reply (never its text: that is in Postgres).
type TurnResult struct {
	MessageID        string
	Model            string
	Chars            int
	PromptTokens     int
	CompletionTokens int
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
}
