// Package chat answers agents and their conversations: messages, approvals, stops, actions and
// tool outputs (Conversations), and the WebSocket and SSE relay of their events (Streams).
package chat

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/ratelimit"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

// Conversations holds what the agent and conversation routes use.
type Conversations struct {
	httpx.Deps
	Store *store.Store // creating an agent writes its row in a transaction with its workflow's start

	MaxMessageBytes int
	IdleTimeout     time.Duration
	ValidateModel   func(ref string) error // checks provider:model against the configured providers
	MaxLoopSteps    int
	MaxQueued       int
	ApprovalTimeout time.Duration
	RunEvents       int // history events of a conversation run before it continues as new
}

// Mount adds the agent and conversation routes.
func (s *Conversations) Mount(a *gin.RouterGroup) {
	a.GET("/workspaces/:id/actions", s.Access.Member, s.listWorkspaceActions)

	a.GET("/agents", s.listAgents)
	a.POST("/agents", s.createAgent)
	a.GET("/agents/:id", s.getAgent)
	a.PATCH("/agents/:id", s.updateAgent)
	a.POST("/agents/:id/archive", s.archiveAgent)
	a.POST("/agents/:id/message", s.sendMessage)
	a.GET("/agents/:id/approvals", s.listApprovals)
	a.POST("/agents/:id/approve", s.approveCalls)
	a.POST("/agents/:id/stop", s.stopTurn)
	a.GET("/agents/:id/actions", s.listAgentActions)
	a.GET("/agents/:id/tool-outputs/:toolCallId", s.getToolOutput)
	a.GET("/agents/:id/messages", s.listMessages)
}

// Streams holds what the event streams use; their commands run through Conversations.
type Streams struct {
	httpx.Deps
	Store         *store.Store
	Bus           *events.Bus
	Hub           *events.Hub        // this process's shared subscriptions
	Limiter       *ratelimit.Limiter // WebSocket commands share the mutations' budget
	Conversations *Conversations

	AllowedOrigins  []string
	MaxMessageBytes int
	// MaxSocketsPerUser caps one user's open WebSockets and SSE streams on this process
	// (MAX_SOCKETS_PER_USER; 0: DefaultMaxSocketsPerUser).
	MaxSocketsPerUser int
	// AccessCheckEvery is how often open event streams re-check that their caller is still a
	// member (STREAM_ACCESS_CHECK_INTERVAL; DefaultAccessCheckEvery when zero).
	AccessCheckEvery time.Duration

	sockets socketCount
	access  accessWatch // open streams by (workspace, user), for that check
}

// Mount adds the stream routes.
func (s *Streams) Mount(a *gin.RouterGroup) {
	a.GET("/workspaces/:id/ws", s.workspaceSocket)
	a.GET("/agents/:id/ws", s.agentSocket)
	a.GET("/agents/:id/events", s.agentEvents)
}
