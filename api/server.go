// Package api is the HTTP tier: gin router, handlers, and the WebSocket relay of conversation
// events. It is stateless: state lives in Postgres, Redis and Temporal.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/ratelimit"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/saptools"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

// Server holds the API's dependencies.
type Server struct {
	Store           *store.Store
	Bus             *events.Bus
	Hub             *events.Hub // this process's shared subscriptions
	Temporal        client.Client
	TaskQueue       string
	MaxMessageBytes int
	IdleTimeout     time.Duration
	Log             *slog.Logger

	Auth               *auth.Verifier
	Limiter            *redis_rate.Limiter
	RedisPrefix        string
	RateLimitPerMinute int
	RateLimitTimeout   time.Duration      // longest wait for the limiter's Redis before failing open
	limiter            *ratelimit.Limiter // built by Router from the fields above
	acc                httpx.Access       // built by Router from Store and Log
	AllowedOrigins     []string
	Secrets            *secrets.Keyring
	Blobs              blob.Store
	MaxFileBytes       int64
	// WorkspaceStorageBytes caps the bytes of all files of one workspace (0: no cap).
	WorkspaceStorageBytes int64

	ValidateModel   func(ref string) error // checks provider:model against the configured providers
	MaxLoopSteps    int
	MaxQueued       int
	ApprovalTimeout time.Duration
	Production      bool // ENVIRONMENT=production: connector URLs must be https and not loopback
	SAP             *saptools.Resolver
	Codec           CodecOptions // the Temporal UI's codec endpoint (codec.go)

	// MaxSocketsPerUser caps one user's open WebSockets and SSE streams on this process
	// (MAX_SOCKETS_PER_USER; 0: DefaultMaxSocketsPerUser).
	MaxSocketsPerUser int
	sockets           socketCount

	RunEvents int // history events of a conversation run before it continues as new
	// TemporalTimeout bounds each call to Temporal made while answering a request; past it
	// the request gets 503 with Retry-After.
	TemporalTimeout time.Duration
	// AccessCheckEvery is how often open event streams re-check that their caller is still a
	// member (STREAM_ACCESS_CHECK_INTERVAL; DefaultAccessCheckEvery when zero).
	AccessCheckEvery time.Duration
	access           accessWatch // open streams by (workspace, user), for that check

	// DevTokens mints a bearer token for a user name: the development sign-in. Nil (always
	// in production) leaves POST /api/dev/token unrouted: 404.
	DevTokens func(user string) (token string, expires time.Time, err error)
	// OIDC is the web chat's OpenID Connect sign-in (GET /api/auth/config); nil: not configured.
	OIDC *OIDCConfig
	// Models are the models agents may use, the default first (GET /api/models).
	Models []ModelInfo
	// Web serves the web chat at / (package web); nil: only the API answers.
	Web http.Handler

	landscapeCache landscape.Cache // figures over whole SAP indexes, per index version (landscape.go)

	// IndexReadsPerMinute and IndexReadsPerWorkspaceMinute budget the GETs that read over whole
	// SAP indexes, per user and per workspace (landscape.go; 0: the defaults there).
	IndexReadsPerMinute          int
	IndexReadsPerWorkspaceMinute int
	// LandscapeCacheBytes and LandscapeCacheWorkspaceBytes size landscapeCache and one
	// workspace's share of it (0: landscape.DefaultCacheBudget, DefaultCacheShare).
	LandscapeCacheBytes, LandscapeCacheWorkspaceBytes int64
}

// Router builds the gin engine with every route.
func (s *Server) Router() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	s.landscapeCache.Budget, s.landscapeCache.Share = s.LandscapeCacheBytes, s.LandscapeCacheWorkspaceBytes
	r := gin.New()
	s.limiter = &ratelimit.Limiter{Redis: s.Limiter, Prefix: s.RedisPrefix, PerMinute: s.RateLimitPerMinute, Timeout: s.RateLimitTimeout, Log: s.Log}
	s.acc = httpx.Access{Store: s.Store, Log: s.Log}
	r.Use(s.recovery(), httpx.ValidText)
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) {
		// The web chat answers every path outside /api (its own routes included); an unknown
		// API route stays a JSON 404.
		if p := c.Request.URL.Path; s.Web != nil && p != "/api" && !strings.HasPrefix(p, "/api/") {
			s.Web.ServeHTTP(c.Writer, c.Request)
			return
		}
		httpx.NotFound(c, "route")
	})
	r.NoMethod(func(c *gin.Context) {
		httpx.Fail(c, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
	})

	api := r.Group("/api")
	api.GET("/health", s.health)
	api.GET("/openapi.json", s.openAPI)
	api.GET("/auth/config", s.authConfig) // how the web page signs in (public)
	if s.DevTokens != nil {
		api.POST("/dev/token", s.devToken) // development sign-in (web chat); absent in production
	}
	// Authenticated by the codec itself (header or cookie, operators only); not rate-limited:
	// the UI decodes every event of a history it shows.
	s.codecRoutes(api)

	// Everything else: authenticated, then mutations rate-limited per user.
	a := api.Group("", s.authenticate, s.rateLimit)
	a.GET("/models", s.listModels)
	a.GET("/orgs", s.listOrgs)
	a.POST("/orgs", s.createOrg)
	a.GET("/orgs/:id", s.getOrg)
	a.PATCH("/orgs/:id", s.updateOrg)
	a.DELETE("/orgs/:id", s.deleteOrg)
	a.GET("/orgs/:id/members", s.listOrgMembers)
	a.POST("/orgs/:id/members", s.addOrgMember)
	a.PATCH("/orgs/:id/members/:userId", s.updateOrgMember)
	a.DELETE("/orgs/:id/members/:userId", s.removeOrgMember)

	a.GET("/deletions/:kind/:id", s.getDeletion)

	a.GET("/workspaces", s.listWorkspaces)
	a.POST("/workspaces", s.createWorkspace)
	a.GET("/workspaces/:id", s.getWorkspace)
	a.PATCH("/workspaces/:id", s.updateWorkspace)
	a.DELETE("/workspaces/:id", s.deleteWorkspace)
	a.GET("/workspaces/:id/members", s.listWorkspaceMembers)
	a.POST("/workspaces/:id/members", s.addWorkspaceMember)
	a.DELETE("/workspaces/:id/members/:userId", s.removeWorkspaceMember)
	a.GET("/workspaces/:id/settings", s.getWorkspaceSettings)
	a.PUT("/workspaces/:id/settings", s.putWorkspaceSettings)

	a.GET("/workspaces/:id/tool-policy", s.getToolPolicy)
	a.PUT("/workspaces/:id/tool-policy", s.putToolPolicy)
	a.GET("/workspaces/:id/actions", s.listWorkspaceActions)
	a.GET("/workspaces/:id/audit-log", s.listAuditLog)
	a.GET("/workspaces/:id/ws", s.workspaceSocket)

	a.GET("/workspaces/:id/source", s.getSource)
	// Syncs of the SAP index (sync.go).
	a.GET("/workspaces/:id/index", s.indexStatus)
	a.POST("/workspaces/:id/index", s.startSync)
	a.GET("/workspaces/:id/sync-runs", s.listSyncRuns)
	a.GET("/workspaces/:id/sync-runs/:runId", s.getSyncRun)
	a.POST("/workspaces/:id/sync-runs/:runId/cancel", s.cancelSyncRun)
	a.GET("/workspaces/:id/sync-schedules", s.listSyncSchedules)
	a.POST("/workspaces/:id/sync-schedules/:connId/:mode/:action", s.scheduleAction)
	// The landscape's index, read (landscape.go).
	a.GET("/workspaces/:id/dashboard", s.getDashboard)
	a.GET("/workspaces/:id/dashboard/diff", s.getDashboardDiff)
	a.GET("/workspaces/:id/dashboard/objects", s.getDashboardObjects)
	a.GET("/workspaces/:id/clean-core", s.getCleanCore)
	a.GET("/workspaces/:id/clean-core/objects/:type/*name", s.getCleanCoreObject)
	a.GET("/workspaces/:id/docs", s.getDocs)
	a.GET("/workspaces/:id/docs/:kind/*subject", s.getDoc)
	a.GET("/workspaces/:id/connector-health", s.connectorHealth)
	a.POST("/workspaces/:id/test-connection", s.testConnection)
	a.POST("/workspaces/:id/test-connection-preview", s.testConnectionPreview)
	a.GET("/workspaces/:id/connections", s.listConnections)
	a.POST("/workspaces/:id/connections", s.createConnection)
	a.GET("/workspaces/:id/connections/:connId", s.getConnection)
	a.PATCH("/workspaces/:id/connections/:connId", s.updateConnection)
	a.DELETE("/workspaces/:id/connections/:connId", s.deleteConnection)
	a.GET("/workspaces/:id/connections/:connId/secrets", s.listSecrets)
	a.PUT("/workspaces/:id/connections/:connId/secrets/:name", s.setSecret)
	a.DELETE("/workspaces/:id/connections/:connId/secrets/:name", s.deleteSecret)

	a.GET("/user/sap-credentials", s.listCredentials)
	a.PUT("/user/sap-credentials/:connId", s.setCredential)
	a.DELETE("/user/sap-credentials/:connId", s.deleteCredential)

	a.POST("/files", s.uploadFile)
	a.GET("/files/:id", s.getFile)
	a.GET("/files/:id/content", s.downloadFile)
	a.DELETE("/files/:id", s.deleteFile)

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
	a.GET("/agents/:id/ws", s.agentSocket)
	a.GET("/agents/:id/events", s.agentEvents)
	return r
}

// healthCheckTimeout bounds each dependency's check on its own: a hung one is named, and the
// others still report what they are.
const healthCheckTimeout = 2 * time.Second

// health reports whether every dependency answers; load balancers take 503 as "not ready".
// Postgres, Redis and Temporal are checked in parallel, each under its own deadline, so a
// dependency that hangs cannot use up another's time and be blamed on it; "failed" names the
// dependencies that did not answer.
func (s *Server) health(c *gin.Context) {
	probes := []struct {
		name string
		ping func(context.Context) error
	}{
		{"postgres", func(ctx context.Context) error { return s.Store.Pool.Ping(ctx) }},
		{"redis", func(ctx context.Context) error { return s.Bus.Ping(ctx) }},
		{"temporal", func(ctx context.Context) error {
			_, err := s.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
	}
	// Each probe gets its deadline; the answer does not wait for a probe that ignores it.
	type result struct {
		i   int
		err error
	}
	answers := make(chan result, len(probes))
	for i, p := range probes {
		go func() {
			ctx, cancel := context.WithTimeout(c.Request.Context(), healthCheckTimeout)
			defer cancel()
			answers <- result{i, p.ping(ctx)}
		}()
	}
	ok := make([]bool, len(probes))
	deadline := time.NewTimer(healthCheckTimeout + 100*time.Millisecond)
	defer deadline.Stop()
collect:
	for range probes {
		select {
		case r := <-answers:
			ok[r.i] = r.err == nil
		case <-deadline.C:
			break collect
		}
	}
	checks := map[string]string{}
	failed := []string{}
	for i, p := range probes {
		checks[p.name] = "ok"
		if !ok[i] {
			checks[p.name] = "unavailable"
			failed = append(failed, p.name)
		}
	}
	status, word := http.StatusOK, "ok"
	if len(failed) > 0 {
		status, word = http.StatusServiceUnavailable, "degraded"
		c.Header("Retry-After", httpx.RetryAfterOutage)
	}
	c.JSON(status, gin.H{"status": word, "checks": checks, "failed": failed})
}

// recovery turns a panic into a 500 in the API's error shape (and logs it) instead of a
// dropped connection.
func (s *Server) recovery() gin.HandlerFunc {
	return gin.CustomRecovery(func(c *gin.Context, recovered any) {
		s.Log.Error("handler panic", "path", c.FullPath(), "panic", recovered)
		httpx.Fail(c, http.StatusInternalServerError, "internal", "internal error")
	})
}
