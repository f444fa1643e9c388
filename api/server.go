// Package api is the HTTP tier: it mounts the domains' handlers (chat, tenancy, connections,
// index, files, ops) on one gin router behind authentication and the per-user rate limit, and
// describes every route in /api/openapi.json. It is stateless: state lives in Postgres, Redis
// and Temporal.
package api

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/chat"
	"github.com/sapagent/sapagent/api/connections"
	"github.com/sapagent/sapagent/api/files"
	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/index"
	"github.com/sapagent/sapagent/api/liveconn"
	"github.com/sapagent/sapagent/api/ops"
	"github.com/sapagent/sapagent/api/ratelimit"
	"github.com/sapagent/sapagent/api/tenancy"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/sapconn"
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
	SAP             *sapconn.Resolver
	Codec           ops.CodecOptions // the Temporal UI's codec endpoint (ops/codec.go)

	// MaxSocketsPerUser caps one user's open WebSockets and SSE streams on this process
	// (MAX_SOCKETS_PER_USER; 0: chat.DefaultMaxSocketsPerUser).
	MaxSocketsPerUser int

	RunEvents int // history events of a conversation run before it continues as new
	// TemporalTimeout bounds each call to Temporal made while answering a request; past it
	// the request gets 503 with Retry-After.
	TemporalTimeout time.Duration
	// AccessCheckEvery is how often open event streams re-check that their caller is still a
	// member (STREAM_ACCESS_CHECK_INTERVAL; chat.DefaultAccessCheckEvery when zero).
	AccessCheckEvery time.Duration

	// DevTokens mints a bearer token for a user name: the development sign-in. Nil (always
	// in production) leaves POST /api/dev/token unrouted: 404.
	DevTokens func(user string) (token string, expires time.Time, err error)
	// OIDC is the web chat's OpenID Connect sign-in (GET /api/auth/config); nil: not configured.
	OIDC *ops.OIDCConfig
	// Models are the models agents may use, the default first (GET /api/models).
	Models []ops.ModelInfo
	// Web serves the web chat at / (package web); nil: only the API answers.
	Web http.Handler

	landscapeCache landscape.Cache // figures over whole SAP indexes, per index version (index/landscape.go)

	// IndexReadsPerMinute and IndexReadsPerWorkspaceMinute budget the GETs that read over whole
	// SAP indexes, per user and per workspace (index/landscape.go; 0: the defaults there).
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
	api.GET("/openapi.json", s.openAPI)
	op := &ops.Handler{Store: s.Store, Bus: s.Bus, Temporal: s.Temporal, Log: s.Log, Auth: s.Auth, Codec: s.Codec,
		DevTokens: s.DevTokens, OIDC: s.OIDC, Models: s.Models, ValidateModel: s.ValidateModel}
	op.MountPublic(api)

	// Everything else: authenticated, then mutations rate-limited per user.
	a := api.Group("", s.authenticate, s.rateLimit)
	st := s.Store
	if st == nil {
		st = &store.Store{} // routers built without a database (tests of the public routes)
	}
	deps := httpx.Deps{Access: httpx.Access{Store: st, Log: s.Log}, Log: s.Log,
		Temporal: s.Temporal, TaskQueue: s.TaskQueue, TemporalTimeout: s.TemporalTimeout}
	live := liveconn.Live{Access: deps.Access, SAP: s.SAP}
	syncs := &index.Syncs{Deps: deps, Store: st}
	conversations := &chat.Conversations{Deps: deps, Store: st, MaxMessageBytes: s.MaxMessageBytes, IdleTimeout: s.IdleTimeout,
		ValidateModel: s.ValidateModel, MaxLoopSteps: s.MaxLoopSteps, MaxQueued: s.MaxQueued, ApprovalTimeout: s.ApprovalTimeout, RunEvents: s.RunEvents}
	op.Mount(a)
	(&tenancy.Handler{Deps: deps, Tenancy: st.Tenancy, Deletions: st.Deletions, Policies: st.Actions, Agents: st.Conversations}).Mount(a)
	(&index.Reads{Deps: deps, Store: st, Limiter: s.limiter, Cache: &s.landscapeCache, Live: live,
		IndexReadsPerMinute: s.IndexReadsPerMinute, IndexReadsPerWorkspaceMinute: s.IndexReadsPerWorkspaceMinute}).Mount(a)
	syncs.Mount(a)
	(&connections.Handler{Deps: deps, Connections: st.Connections, Secrets: s.Secrets, Production: s.Production, SAP: s.SAP, Live: live, Syncs: syncs}).Mount(a)
	(&files.Handler{Deps: deps, Files: st.Files, Blobs: s.Blobs, MaxFileBytes: s.MaxFileBytes, WorkspaceStorageBytes: s.WorkspaceStorageBytes}).Mount(a)
	conversations.Mount(a)
	(&chat.Streams{Deps: deps, Store: st, Bus: s.Bus, Hub: s.Hub, Limiter: s.limiter,
		Conversations: conversations, AllowedOrigins: s.AllowedOrigins, MaxMessageBytes: s.MaxMessageBytes,
		MaxSocketsPerUser: s.MaxSocketsPerUser, AccessCheckEvery: s.AccessCheckEvery}).Mount(a)
	return r
}

// recovery turns a panic into a 500 in the API's error shape (and logs it) instead of a
// dropped connection.
func (s *Server) recovery() gin.HandlerFunc {
	return gin.CustomRecovery(func(c *gin.Context, recovered any) {
		s.Log.Error("handler panic", "path", c.FullPath(), "panic", recovered)
		httpx.Fail(c, http.StatusInternalServerError, "internal", "internal error")
	})
}
