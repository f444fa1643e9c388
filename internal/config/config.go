// Package config reads the product's configuration from environment variables. Every
// variable has a documented default (README "Configuration"); a malformed value is an error
// that names the variable.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is the whole configuration of every command; each command uses what it needs.
type Config struct {
	Environment       string // ENVIRONMENT: development | production
	HTTPAddr          string // HTTP_ADDR
	DatabaseURL       string // DATABASE_URL
	RedisURL          string // REDIS_URL
	RedisPrefix       string // REDIS_PREFIX: namespaces every key (tests use a random one)
	TemporalAddress   string // TEMPORAL_ADDRESS
	TemporalNamespace string // TEMPORAL_NAMESPACE
	TaskQueue         string // TEMPORAL_TASK_QUEUE
	OpenAIBaseURL     string // OPENAI_BASE_URL
	OpenAIAPIKey      string // OPENAI_API_KEY
	OfflineLLMURL     string // OFFLINE_LLM_URL: base URL of the offline model (provider "offline")
	OfflineLLMAddr    string // OFFLINE_LLM_ADDR: where `sapagent offline-llm` and the dev stack serve it
	OfflineLLMDelay   time.Duration
	PrimaryModel      string // PRIMARY_MODEL: provider:model
	EmbeddingsModel   string // EMBEDDINGS_MODEL: provider:model of the SAP index's embeddings
	// SyncMaxItemsPerPhase caps the items one index phase of a sync may bring
	// (SYNC_MAX_ITEMS_PER_PHASE); past it the run fails with the reason.
	SyncMaxItemsPerPhase int64
	// CLOUDIFICATION_REPOSITORY: a directory or http(s) base URL of SAP's Cloudification
	// Repository files; empty: the copy shipped in the binary.
	CloudificationRepository string
	// CUSTOMER_NAMESPACES: the customer's own namespaces (e.g. /ACME/), custom like Z* and Y*.
	CustomerNamespaces []string
	MaxMessageBytes    int // MAX_MESSAGE_BYTES
	IdleTimeout        time.Duration
	DataDir            string // DATA_DIR (dev stack only)
	TemporalPort       int    // TEMPORAL_PORT (dev stack only)
	TemporalUIPort     int    // TEMPORAL_UI_PORT (dev stack only; 0 disables the UI)
	TemporalLogLevel   string // TEMPORAL_LOG_LEVEL (dev stack only): the embedded server's log level

	AuthJWTSecret  string   // AUTH_JWT_SECRET: HS256 secret
	AuthJWKSURL    string   // AUTH_JWKS_URL: asymmetric keys
	AuthAudience   string   // AUTH_AUDIENCE
	AuthIssuer     string   // AUTH_ISSUER
	AllowedOrigins []string // ALLOWED_ORIGINS: browser origins allowed on WebSocket/SSE
	// The web chat's OpenID Connect sign-in (authorization code with PKCE, a public client):
	// OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_SCOPES and OIDC_AUDIENCE (Auth0-style audience parameter).
	OIDCIssuer     string
	OIDCClientID   string
	OIDCScopes     string
	OIDCAudience   string
	SecretsKey     string   // SECRETS_KEY: base64 AES-256 key
	SecretsOldKeys string   // SECRETS_OLD_KEYS: comma-separated older keys
	PayloadKey     string   // PAYLOAD_KEY: base64 AES-256 key of Temporal payloads
	PayloadOldKeys string   // PAYLOAD_OLD_KEYS: comma-separated older payload keys, decrypt only
	Operators      []string // OPERATORS: user IDs (token sub) allowed to decode payloads (codec endpoint)
	CodecOrigins   []string // CODEC_ALLOWED_ORIGINS: Temporal UI origins allowed to call the codec endpoint
	BlobURL        string   // BLOB_URL: file:///path or s3://bucket?...
	MaxFileBytes   int64    // FILE_MAX_BYTES
	// WorkspaceStorageBytes caps the bytes of all files of one workspace (WORKSPACE_STORAGE_BYTES).
	WorkspaceStorageBytes int64
	// MaxSocketsPerUser caps one user's open WebSockets and SSE streams per API process
	// (MAX_SOCKETS_PER_USER).
	MaxSocketsPerUser  int
	RateLimitPerMinute int // RATE_LIMIT_PER_MINUTE: mutating requests per user
	// IndexReadsPerMinute and IndexReadsPerWorkspaceMinute budget the GETs that read over whole
	// SAP indexes (dashboard, diff, inventory, Clean Core) per user and per workspace
	// (INDEX_READS_PER_MINUTE, INDEX_READS_PER_WORKSPACE_PER_MINUTE).
	IndexReadsPerMinute          int
	IndexReadsPerWorkspaceMinute int
	// LandscapeCacheBytes and LandscapeCacheWorkspaceBytes size the API's cache of whole-index
	// figures and the share one workspace may hold (LANDSCAPE_CACHE_BYTES,
	// LANDSCAPE_CACHE_WORKSPACE_BYTES).
	LandscapeCacheBytes          int64
	LandscapeCacheWorkspaceBytes int64
	// RateLimitTimeout bounds one rate-limit check in Redis (RATE_LIMIT_TIMEOUT); past it the
	// request is allowed (fail open), so a Redis outage costs each mutation at most this.
	RateLimitTimeout time.Duration
	// TemporalCallTimeout bounds one API call to Temporal (TEMPORAL_CALL_TIMEOUT): past it the
	// API answers 503 with Retry-After instead of hanging while Temporal is unreachable.
	TemporalCallTimeout time.Duration
	// StreamAccessCheck is how often open event streams re-check that their caller is still a
	// member of the workspace (STREAM_ACCESS_CHECK_INTERVAL).
	StreamAccessCheck time.Duration

	// Providers are the model endpoints: "openai" (OPENAI_*), "offline" (OFFLINE_LLM_URL) and
	// any PROVIDER_<NAME>_BASE_URL / _API_KEY / _MODELS.
	Providers       []Provider
	MaxLoopSteps    int           // MAX_LOOP_STEPS
	ApprovalTimeout time.Duration // APPROVAL_TIMEOUT
	MaxQueued       int           // MAX_QUEUED_MESSAGES
	// DefaultContextTokens is the context size of models without a setting of their own
	// (MODEL_CONTEXT_TOKENS); each Provider carries its resolved sizes.
	DefaultContextTokens int

	ConnectorTimeout time.Duration // CONNECTOR_TIMEOUT: one connector call
	DirectCallTools  []string      // DIRECT_CALL_TOOLS: SAP tools offered directly, not only inside execute_code
	CodeTimeout      time.Duration // EXECUTE_CODE_TIMEOUT: wall clock of one script
	CodeMaxSteps     int           // EXECUTE_CODE_MAX_STEPS: Starlark execution steps of one script
	SandboxPoolSize  int           // SANDBOX_POOL_SIZE: sandbox processes per worker (scripts running at once)
	SandboxMemoryMB  int           // SANDBOX_MEMORY_MB: memory a script may use in its sandbox
	SAPSimAddr       string        // SAPSIM_ADDR: where sapagent-sapsim and the dev stack serve the simulator
	SAPSimLatency    time.Duration // SAPSIM_LATENCY: added to every simulated call
	SAPSimErrorRate  float64       // SAPSIM_ERROR_RATE: share of simulated calls failing with 503
	// SAPSIM_LANDSCAPE_OBJECTS: standard objects the simulator generates per system (and a
	// twentieth as many custom objects); 0 keeps the built-in landscape only.
	SAPSimLandscapeObjects int
	// SIMULATOR_CONNECTOR_URL and SIMULATOR_CONNECTOR_KEY: the connector in front of
	// sapagent-sapsim that answers for connections without a connector URL (<URL>/ECC and
	// <URL>/S4H). Unset: such connections fail with a clear error (the dev stack sets its own).
	SimulatorConnectorURL string
	SimulatorConnectorKey string
	// DEV_SAP_ROUTE: how the dev stack (make dev) reaches its simulator: "connector" (platform →
	// connector → simulator over HTTP, the default) or "in-process" (no HTTP, development only).
	DevSAPRoute string
	// DEV_CONNECTOR_ADDR: where the dev stack's connector in front of the simulator listens.
	DevConnectorAddr string

	// SANDBOX_MAX_PER_ORG and SANDBOX_MAX_PER_USER: scripts of one organization / one user
	// running at once on a worker (0: derived from SANDBOX_POOL_SIZE, see internal/sandbox);
	// more wait in the sandboxes' fair queue.
	SandboxMaxPerOrg  int
	SandboxMaxPerUser int
	// SANDBOX_UID and SANDBOX_GID: the user and group a sandbox switches to when the worker
	// runs as root (default nobody, 65534).
	SandboxUID, SandboxGID int

	// WorkerStopGrace: on SIGTERM the worker stops polling and lets running activities finish
	// for this long (WORKER_STOP_GRACE), so a deploy is not a crash.
	WorkerStopGrace time.Duration
	// RunEvents: a conversation run continues as new at the first turn boundary after this many
	// history events (CONVERSATION_RUN_EVENTS; Temporal suggests it at 4,096).
	RunEvents int
}

// Provider is one OpenAI-compatible model endpoint.
type Provider struct {
	Name    string
	BaseURL string
	APIKey  string
	Models  []string // allowed models; empty allows any
	// ContextTokens is the context size of the provider's models (PROVIDER_<NAME>_CONTEXT_TOKENS,
	// else MODEL_CONTEXT_TOKENS); ModelContextTokens overrides it per model (MODEL_CONTEXT_LIMITS).
	ContextTokens      int
	ModelContextTokens map[string]int
}

// minContextTokens is the smallest context accepted: below it not even the system prompt and
// one question fit.
const minContextTokens = 4096

// ContextTokens is the context size of a "provider:model" reference (MODEL_CONTEXT_TOKENS when
// nothing more specific is configured).
func (c Config) ContextTokens(ref string) int {
	name, model, _ := strings.Cut(ref, ":")
	for _, p := range c.Providers {
		if p.Name != name {
			continue
		}
		if n, ok := p.ModelContextTokens[model]; ok {
			return n
		}
		if p.ContextTokens > 0 {
			return p.ContextTokens
		}
	}
	return c.DefaultContextTokens
}

// ValidateModel checks a "provider:model" reference against the configured providers.
func (c Config) ValidateModel(ref string) error {
	name, model, ok := strings.Cut(ref, ":")
	if !ok || name == "" || model == "" {
		return fmt.Errorf("model %q must be provider:model", ref)
	}
	for _, p := range c.Providers {
		if p.Name != name {
			continue
		}
		if len(p.Models) == 0 {
			return nil
		}
		for _, m := range p.Models {
			if m == model {
				return nil
			}
		}
		return fmt.Errorf("model %q is not offered by provider %q (configured: %s)", model, name, strings.Join(p.Models, ", "))
	}
	return fmt.Errorf("unknown model provider %q", name)
}

// validateProvider checks that a "provider:model" reference names a configured provider.
func (c Config) validateProvider(ref string) error {
	name, model, ok := strings.Cut(ref, ":")
	if !ok || name == "" || model == "" {
		return fmt.Errorf("model %q must be provider:model", ref)
	}
	for _, p := range c.Providers {
		if p.Name == name {
			return nil
		}
	}
	return fmt.Errorf("unknown model provider %q", name)
}

// Routes of the dev stack to its simulator (DEV_SAP_ROUTE).
const (
	DevSAPRouteConnector = "connector"
	DevSAPRouteInProcess = "in-process"
)

// Load reads the environment.
func Load() (Config, error) {
	return loadWith(os.Getenv, os.Environ)
}

func load(getenv func(string) string) (Config, error) { return loadWith(getenv, nil) }

func loadWith(getenv func(string) string, environ func() []string) (Config, error) {
	r := reader{getenv: getenv, environ: environ}
	c := Config{
		Environment:       r.str("ENVIRONMENT", "development"),
		HTTPAddr:          r.str("HTTP_ADDR", ":8080"),
		DatabaseURL:       r.str("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sapagent?sslmode=disable"),
		RedisURL:          r.str("REDIS_URL", "redis://127.0.0.1:6379/0"),
		RedisPrefix:       r.str("REDIS_PREFIX", "sapagent:"),
		TemporalAddress:   r.str("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		TemporalNamespace: r.str("TEMPORAL_NAMESPACE", "default"),
		TaskQueue:         r.str("TEMPORAL_TASK_QUEUE", "sapagent"),
		OpenAIBaseURL:     r.str("OPENAI_BASE_URL", "https://api.openai.com/v1"),
		OpenAIAPIKey:      r.str("OPENAI_API_KEY", ""),
		OfflineLLMAddr:    r.str("OFFLINE_LLM_ADDR", "127.0.0.1:8089"),
		OfflineLLMDelay:   r.duration("OFFLINE_LLM_TOKEN_DELAY", 15*time.Millisecond),
		MaxMessageBytes:   r.integer("MAX_MESSAGE_BYTES", 100*1024),
		IdleTimeout:       r.duration("AGENT_IDLE_TIMEOUT", 7*24*time.Hour),
		DataDir:           r.str("DATA_DIR", "./.data"),
		TemporalPort:      r.integer("TEMPORAL_PORT", 7233),
		TemporalUIPort:    r.integer("TEMPORAL_UI_PORT", 8233),
		TemporalLogLevel:  r.str("TEMPORAL_LOG_LEVEL", "error"),
	}
	c.OfflineLLMURL = r.str("OFFLINE_LLM_URL", "http://"+c.OfflineLLMAddr+"/v1")
	c.AuthJWTSecret = r.str("AUTH_JWT_SECRET", "")
	c.AuthJWKSURL = r.str("AUTH_JWKS_URL", "")
	c.AuthAudience = r.str("AUTH_AUDIENCE", "")
	c.AuthIssuer = r.str("AUTH_ISSUER", "")
	for _, o := range strings.Split(r.str("ALLOWED_ORIGINS", "http://localhost:8080,http://127.0.0.1:8080"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.AllowedOrigins = append(c.AllowedOrigins, o)
		}
	}
	c.OIDCIssuer = strings.TrimRight(r.str("OIDC_ISSUER", ""), "/")
	c.OIDCClientID = r.str("OIDC_CLIENT_ID", "")
	c.OIDCScopes = strings.Join(strings.Fields(r.str("OIDC_SCOPES", "openid profile email")), " ")
	c.OIDCAudience = r.str("OIDC_AUDIENCE", "")
	c.SecretsKey = r.str("SECRETS_KEY", "")
	c.SecretsOldKeys = r.str("SECRETS_OLD_KEYS", "")
	c.PayloadKey = r.str("PAYLOAD_KEY", "")
	c.PayloadOldKeys = r.str("PAYLOAD_OLD_KEYS", "")
	c.Operators = splitList(r.str("OPERATORS", ""))
	c.CodecOrigins = splitList(r.str("CODEC_ALLOWED_ORIGINS", ""))
	c.BlobURL = r.str("BLOB_URL", "file://"+absPath(c.DataDir)+"/files")
	c.MaxFileBytes = int64(r.integer("FILE_MAX_BYTES", 20<<20))
	c.WorkspaceStorageBytes = r.int64("WORKSPACE_STORAGE_BYTES", 1<<30)
	c.MaxSocketsPerUser = r.integer("MAX_SOCKETS_PER_USER", 20)
	c.RateLimitPerMinute = r.integer("RATE_LIMIT_PER_MINUTE", 60)
	c.RateLimitTimeout = r.duration("RATE_LIMIT_TIMEOUT", 250*time.Millisecond)
	c.IndexReadsPerMinute = r.integer("INDEX_READS_PER_MINUTE", 60)
	c.IndexReadsPerWorkspaceMinute = r.integer("INDEX_READS_PER_WORKSPACE_PER_MINUTE", 300)
	c.LandscapeCacheBytes = r.int64("LANDSCAPE_CACHE_BYTES", 256<<20)
	c.LandscapeCacheWorkspaceBytes = r.int64("LANDSCAPE_CACHE_WORKSPACE_BYTES", 64<<20)
	c.TemporalCallTimeout = r.duration("TEMPORAL_CALL_TIMEOUT", 5*time.Second)
	c.StreamAccessCheck = r.duration("STREAM_ACCESS_CHECK_INTERVAL", 15*time.Second)
	c.MaxLoopSteps = r.integer("MAX_LOOP_STEPS", 25)
	c.ApprovalTimeout = r.duration("APPROVAL_TIMEOUT", 24*time.Hour)
	c.MaxQueued = r.integer("MAX_QUEUED_MESSAGES", 20)
	c.ConnectorTimeout = r.duration("CONNECTOR_TIMEOUT", 60*time.Second)
	c.DirectCallTools = splitList(r.str("DIRECT_CALL_TOOLS", ""))
	c.CodeTimeout = r.duration("EXECUTE_CODE_TIMEOUT", 60*time.Second)
	c.WorkerStopGrace = r.duration("WORKER_STOP_GRACE", 30*time.Second)
	c.RunEvents = r.integer("CONVERSATION_RUN_EVENTS", 3800)
	c.CodeMaxSteps = r.integer("EXECUTE_CODE_MAX_STEPS", 5_000_000)
	c.SandboxPoolSize = r.integer("SANDBOX_POOL_SIZE", 4)
	c.SandboxMemoryMB = r.integer("SANDBOX_MEMORY_MB", 256)
	c.SandboxMaxPerOrg = r.integer("SANDBOX_MAX_PER_ORG", 0)
	c.SandboxMaxPerUser = r.integer("SANDBOX_MAX_PER_USER", 0)
	c.SandboxUID = r.integer("SANDBOX_UID", 65534)
	c.SandboxGID = r.integer("SANDBOX_GID", 65534)
	c.SAPSimAddr = r.str("SAPSIM_ADDR", "127.0.0.1:8090")
	c.SAPSimLatency = r.duration("SAPSIM_LATENCY", 0)
	if c.SAPSimLandscapeObjects = r.integer("SAPSIM_LANDSCAPE_OBJECTS", 0); c.SAPSimLandscapeObjects < 0 || c.SAPSimLandscapeObjects > 100_000_000 {
		return Config{}, fmt.Errorf("SAPSIM_LANDSCAPE_OBJECTS must be between 0 and 100000000, got %d", c.SAPSimLandscapeObjects)
	}
	c.SimulatorConnectorURL = strings.TrimSuffix(r.str("SIMULATOR_CONNECTOR_URL", ""), "/")
	c.SimulatorConnectorKey = r.str("SIMULATOR_CONNECTOR_KEY", "")
	if (c.SimulatorConnectorURL == "") != (c.SimulatorConnectorKey == "") {
		return Config{}, errors.New("SIMULATOR_CONNECTOR_URL and SIMULATOR_CONNECTOR_KEY are set together (or neither)")
	}
	if c.DevSAPRoute = r.str("DEV_SAP_ROUTE", DevSAPRouteConnector); c.DevSAPRoute != DevSAPRouteConnector && c.DevSAPRoute != DevSAPRouteInProcess {
		return Config{}, fmt.Errorf("DEV_SAP_ROUTE must be %q or %q, got %q", DevSAPRouteConnector, DevSAPRouteInProcess, c.DevSAPRoute)
	}
	c.DevConnectorAddr = r.str("DEV_CONNECTOR_ADDR", "127.0.0.1:8071")
	if v := r.str("SAPSIM_ERROR_RATE", "0"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return Config{}, fmt.Errorf("SAPSIM_ERROR_RATE must be a number between 0 and 1, got %q", v)
		}
		c.SAPSimErrorRate = f
	}
	c.Providers = []Provider{
		{Name: "openai", BaseURL: c.OpenAIBaseURL, APIKey: c.OpenAIAPIKey, Models: splitList(r.str("OPENAI_MODELS", ""))},
		{Name: "offline", BaseURL: c.OfflineLLMURL, APIKey: "offline", Models: []string{"sapagent-offline"}},
	}
	c.Providers = append(c.Providers, extraProviders(r)...)
	c.DefaultContextTokens = r.integer("MODEL_CONTEXT_TOKENS", 32000)
	if err := c.contextSizes(r); err != nil {
		return Config{}, err
	}
	// Without a real key the product talks to the offline model, so a fresh clone works offline.
	defaultModel := "offline:sapagent-offline"
	if c.OpenAIAPIKey != "" {
		defaultModel = "openai:gpt-4o-mini"
	}
	c.PrimaryModel = r.str("PRIMARY_MODEL", defaultModel)
	defaultEmbeddings := "offline:sapagent-offline"
	if c.OpenAIAPIKey != "" {
		defaultEmbeddings = "openai:text-embedding-3-small"
	}
	c.EmbeddingsModel = r.str("EMBEDDINGS_MODEL", defaultEmbeddings)
	if c.SyncMaxItemsPerPhase = r.int64("SYNC_MAX_ITEMS_PER_PHASE", 5_000_000); c.SyncMaxItemsPerPhase <= 0 {
		return Config{}, fmt.Errorf("SYNC_MAX_ITEMS_PER_PHASE must be positive, got %d", c.SyncMaxItemsPerPhase)
	}
	c.CloudificationRepository = r.str("CLOUDIFICATION_REPOSITORY", "")
	c.CustomerNamespaces = splitList(r.str("CUSTOMER_NAMESPACES", ""))
	for _, ns := range c.CustomerNamespaces {
		if len(ns) < 3 || !strings.HasPrefix(ns, "/") || !strings.HasSuffix(ns, "/") {
			return Config{}, fmt.Errorf("CUSTOMER_NAMESPACES: %q is not a namespace like /ACME/", ns)
		}
	}
	if r.err != nil {
		return Config{}, r.err
	}
	if c.Environment != "development" && c.Environment != "production" {
		return Config{}, fmt.Errorf("ENVIRONMENT must be development or production, got %q", c.Environment)
	}
	if err := c.validateOIDC(); err != nil {
		return Config{}, err
	}
	if err := c.ValidateModel(c.PrimaryModel); err != nil {
		return Config{}, fmt.Errorf("PRIMARY_MODEL: %w", err)
	}
	// Only the provider is checked: OPENAI_MODELS lists chat models, not embeddings models.
	if err := c.validateProvider(c.EmbeddingsModel); err != nil {
		return Config{}, fmt.Errorf("EMBEDDINGS_MODEL: %w", err)
	}
	if c.MaxLoopSteps <= 0 || c.MaxQueued <= 0 || c.ApprovalTimeout <= 0 {
		return Config{}, fmt.Errorf("MAX_LOOP_STEPS, MAX_QUEUED_MESSAGES and APPROVAL_TIMEOUT must be positive")
	}
	if c.MaxFileBytes <= 0 || c.RateLimitPerMinute <= 0 {
		return Config{}, fmt.Errorf("FILE_MAX_BYTES and RATE_LIMIT_PER_MINUTE must be positive")
	}
	if c.IndexReadsPerMinute <= 0 || c.IndexReadsPerWorkspaceMinute <= 0 {
		return Config{}, fmt.Errorf("INDEX_READS_PER_MINUTE and INDEX_READS_PER_WORKSPACE_PER_MINUTE must be positive")
	}
	if c.LandscapeCacheBytes <= 0 || c.LandscapeCacheWorkspaceBytes <= 0 || c.LandscapeCacheWorkspaceBytes > c.LandscapeCacheBytes {
		return Config{}, fmt.Errorf("LANDSCAPE_CACHE_BYTES and LANDSCAPE_CACHE_WORKSPACE_BYTES must be positive, the share at most the whole")
	}
	if c.WorkspaceStorageBytes <= 0 || c.MaxSocketsPerUser <= 0 {
		return Config{}, fmt.Errorf("WORKSPACE_STORAGE_BYTES and MAX_SOCKETS_PER_USER must be positive")
	}
	if c.WorkerStopGrace < 0 {
		return c, fmt.Errorf("WORKER_STOP_GRACE must not be negative")
	}
	if c.RunEvents < 100 || c.RunEvents > 40000 {
		return c, fmt.Errorf("CONVERSATION_RUN_EVENTS must be between 100 and 40000 (Temporal ends a run at 51,200 events)")
	}
	if c.RateLimitTimeout <= 0 || c.TemporalCallTimeout <= 0 || c.StreamAccessCheck <= 0 {
		return Config{}, fmt.Errorf("RATE_LIMIT_TIMEOUT, TEMPORAL_CALL_TIMEOUT and STREAM_ACCESS_CHECK_INTERVAL must be positive")
	}
	if c.ConnectorTimeout <= 0 || c.CodeTimeout <= 0 || c.CodeMaxSteps <= 0 {
		return Config{}, fmt.Errorf("CONNECTOR_TIMEOUT, EXECUTE_CODE_TIMEOUT and EXECUTE_CODE_MAX_STEPS must be positive")
	}
	if c.SandboxPoolSize <= 0 || c.SandboxMemoryMB < 16 {
		return Config{}, fmt.Errorf("SANDBOX_POOL_SIZE must be positive and SANDBOX_MEMORY_MB at least 16, got %d and %d", c.SandboxPoolSize, c.SandboxMemoryMB)
	}
	if c.SandboxMaxPerOrg < 0 || c.SandboxMaxPerUser < 0 {
		return Config{}, fmt.Errorf("SANDBOX_MAX_PER_ORG and SANDBOX_MAX_PER_USER must not be negative (0: derived from SANDBOX_POOL_SIZE), got %d and %d", c.SandboxMaxPerOrg, c.SandboxMaxPerUser)
	}
	if c.SandboxUID <= 0 || c.SandboxGID <= 0 {
		return Config{}, fmt.Errorf("SANDBOX_UID and SANDBOX_GID must be positive (not root), got %d and %d", c.SandboxUID, c.SandboxGID)
	}
	if c.MaxMessageBytes <= 0 {
		return Config{}, fmt.Errorf("MAX_MESSAGE_BYTES must be positive, got %d", c.MaxMessageBytes)
	}
	return c, nil
}

// validateOIDC checks the web chat's sign-in settings: issuer and client ID come together, the
// issuer is an absolute URL, https in production (tokens travel to it).
func (c Config) validateOIDC() error {
	if c.OIDCIssuer == "" && c.OIDCClientID == "" {
		return nil
	}
	if c.OIDCIssuer == "" || c.OIDCClientID == "" {
		return fmt.Errorf("OIDC_ISSUER and OIDC_CLIENT_ID must be set together")
	}
	u, err := url.Parse(c.OIDCIssuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("OIDC_ISSUER must be an http(s) URL without query or fragment, got %q", c.OIDCIssuer)
	}
	if c.Environment == "production" && u.Scheme != "https" {
		return fmt.Errorf("OIDC_ISSUER must be an https URL in production, got %q", c.OIDCIssuer)
	}
	if !strings.Contains(" "+c.OIDCScopes+" ", " openid ") {
		return fmt.Errorf("OIDC_SCOPES must include openid, got %q", c.OIDCScopes)
	}
	return nil
}

// OIDCOrigin is the issuer's origin (scheme://host[:port]); "" without OIDC.
func (c Config) OIDCOrigin() string {
	u, err := url.Parse(c.OIDCIssuer)
	if c.OIDCIssuer == "" || err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// ModelChoice is one model a user may pick for an agent.
type ModelChoice struct {
	Provider      string
	Model         string
	Default       bool // PRIMARY_MODEL: what an agent without a model of its own uses
	ContextTokens int
}

// ModelChoices lists the models offered for agents: PRIMARY_MODEL first, then each provider's
// configured models (OPENAI_MODELS, PROVIDER_<NAME>_MODELS) and the models MODEL_CONTEXT_LIMITS
// names. ValidateModel accepts every one. A provider without a model list accepts any model
// name, which no list can show. The offline model is listed off production, or when it is
// the primary model.
func (c Config) ModelChoices() []ModelChoice {
	var out []ModelChoice
	seen := map[string]bool{}
	add := func(provider, model string) {
		ref := provider + ":" + model
		if seen[ref] || c.ValidateModel(ref) != nil {
			return
		}
		seen[ref] = true
		out = append(out, ModelChoice{Provider: provider, Model: model, Default: ref == c.PrimaryModel, ContextTokens: c.ContextTokens(ref)})
	}
	if p, m, ok := strings.Cut(c.PrimaryModel, ":"); ok {
		add(p, m)
	}
	for _, p := range c.Providers {
		if p.Name == "offline" && c.Environment == "production" {
			continue
		}
		for _, m := range p.Models {
			add(p.Name, m)
		}
		named := make([]string, 0, len(p.ModelContextTokens))
		for m := range p.ModelContextTokens {
			named = append(named, m)
		}
		sort.Strings(named)
		for _, m := range named {
			add(p.Name, m)
		}
	}
	return out
}

// UsesOfflineModel reports whether the primary model is served by the offline model server.
func (c Config) UsesOfflineModel() bool {
	return strings.HasPrefix(c.PrimaryModel, "offline:")
}

type reader struct {
	getenv  func(string) string
	environ func() []string
	err     error
}

// contextSizes resolves each provider's context size (PROVIDER_<NAME>_CONTEXT_TOKENS, else
// MODEL_CONTEXT_TOKENS) and the per-model list MODEL_CONTEXT_LIMITS ("provider:model=tokens,…").
func (c *Config) contextSizes(r reader) error {
	if r.err != nil {
		return r.err
	}
	if c.DefaultContextTokens < minContextTokens {
		return fmt.Errorf("MODEL_CONTEXT_TOKENS must be at least %d, got %d", minContextTokens, c.DefaultContextTokens)
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		name := "PROVIDER_" + strings.ToUpper(p.Name) + "_CONTEXT_TOKENS"
		p.ContextTokens = r.integer(name, c.DefaultContextTokens)
		if r.err != nil {
			return r.err
		}
		if p.ContextTokens < minContextTokens {
			return fmt.Errorf("%s must be at least %d, got %d", name, minContextTokens, p.ContextTokens)
		}
	}
	for _, entry := range splitList(r.str("MODEL_CONTEXT_LIMITS", "")) {
		ref, size, ok := strings.Cut(entry, "=")
		n, err := strconv.Atoi(strings.TrimSpace(size))
		ref = strings.TrimSpace(ref)
		if !ok || err != nil {
			return fmt.Errorf("MODEL_CONTEXT_LIMITS: %q is not provider:model=tokens", entry)
		}
		if n < minContextTokens {
			return fmt.Errorf("MODEL_CONTEXT_LIMITS: %s must be at least %d tokens, got %d", ref, minContextTokens, n)
		}
		if err := c.ValidateModel(ref); err != nil {
			return fmt.Errorf("MODEL_CONTEXT_LIMITS: %w", err)
		}
		name, model, _ := strings.Cut(ref, ":")
		for i := range c.Providers {
			if p := &c.Providers[i]; p.Name == name {
				if p.ModelContextTokens == nil {
					p.ModelContextTokens = map[string]int{}
				}
				p.ModelContextTokens[model] = n
			}
		}
	}
	return nil
}

// extraProviders reads PROVIDER_<NAME>_BASE_URL (+ _API_KEY, _MODELS) for any name.
func extraProviders(r reader) []Provider {
	if r.environ == nil {
		return nil
	}
	var out []Provider
	for _, kv := range r.environ() {
		key, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(key, "PROVIDER_") || !strings.HasSuffix(key, "_BASE_URL") {
			continue
		}
		up := strings.TrimSuffix(strings.TrimPrefix(key, "PROVIDER_"), "_BASE_URL")
		if up == "" {
			continue
		}
		out = append(out, Provider{
			Name:    strings.ToLower(up),
			BaseURL: r.str(key, ""),
			APIKey:  r.str("PROVIDER_"+up+"_API_KEY", ""),
			Models:  splitList(r.str("PROVIDER_"+up+"_MODELS", "")),
		})
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) integer(name string, def int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s must be an integer, got %q", name, v)
	}
	return n
}

func (r *reader) int64(name string, def int64) int64 {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s must be an integer, got %q", name, v)
	}
	return n
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s must be a duration such as 500ms or 24h, got %q", name, v)
	}
	return d
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
