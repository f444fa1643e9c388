// Package app assembles the product's parts from configuration: the connections (Postgres,
// Redis, Temporal) and the API server and activities built on them. The production commands
// and the dev stack share it, so they run the same wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/sapagent/sapagent/activities"
	"github.com/sapagent/sapagent/api"
	"github.com/sapagent/sapagent/api/ops"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/payloadcodec"
	"github.com/sapagent/sapagent/internal/sandbox"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/script"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/web"
)

// Deps are the open connections of one process.
type Deps struct {
	Config config.Config
	Log    *slog.Logger
	Store  *store.Store
	Redis  *redis.Client
	// limiterRedis is the rate limiter's own client: same server, but short timeouts and no
	// retries, so a Redis outage costs a mutation at most RATE_LIMIT_TIMEOUT (fail open).
	limiterRedis *redis.Client
	Bus          *events.Bus
	Temporal     client.Client
	// Codec encrypts every payload the Temporal client sends (PAYLOAD_KEY); the API serves it
	// to operators as the Temporal UI's codec endpoint.
	Codec *payloadcodec.Codec
	hub   *events.Hub
	// Simulated answers for connections without a connector URL: the connector in front of the
	// simulator (SIMULATOR_CONNECTOR_URL), or what the dev stack sets before building the API
	// and activities. nil: such connections fail with a clear error. The production binary
	// never links the simulator itself.
	Simulated sapconn.SimulatedSystems
	sandbox   *sandbox.Pool
}

// Open connects to Postgres, Redis and Temporal; on failure it closes what it opened.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (*Deps, error) {
	cfg, err := cfg.WithDevSecrets()
	if err != nil {
		return nil, err
	}
	d := &Deps{Config: cfg, Log: log}
	if cfg.SimulatorConnectorURL != "" { // the operator's own address: the URL guard trusts it
		d.Simulated = sapconn.SimulatorConnector{Client: sap.NewClient(sap.Guard{Trusted: true}, cfg.ConnectorTimeout),
			URL: cfg.SimulatorConnectorURL, Key: cfg.SimulatorConnectorKey}
	}
	if d.Store, err = store.Open(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("REDIS_URL is not a valid Redis URL: %w", err)
	}
	d.limiterRedis = redis.NewClient(limiterOptions(*opts, cfg.RateLimitTimeout))
	d.Redis = redis.NewClient(opts)
	if err := d.Redis.Ping(ctx).Err(); err != nil {
		d.Close()
		return nil, fmt.Errorf("redis at %s: %w", store.Redact(cfg.RedisURL), err)
	}
	d.Bus = events.New(d.Redis, events.Options{Prefix: cfg.RedisPrefix})
	if d.Codec, err = payloadcodec.Parse(cfg.PayloadKey, cfg.PayloadOldKeys); err != nil {
		d.Close()
		return nil, err
	}
	d.Temporal, err = client.DialContext(ctx, TemporalClientOptions(cfg.TemporalAddress, cfg.TemporalNamespace, d.Codec, log))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return d, nil
}

// TemporalClientOptions are the options of every Temporal client the product opens: payloads
// and failure messages are encrypted by codec before they leave the process, so Temporal's
// history and the UI show ciphertext unless the UI decodes through the codec endpoint.
func TemporalClientOptions(hostPort, namespace string, codec *payloadcodec.Codec, log *slog.Logger) client.Options {
	return client.Options{
		HostPort: hostPort, Namespace: namespace, Logger: SDKLogger(log),
		DataConverter: codec.DataConverter(), FailureConverter: codec.FailureConverter(),
	}
}

// limiterOptions are the rate limiter's client options: every wait (dial, pool, read, write)
// bounded by timeout, the request context's deadline honoured, no retries.
func limiterOptions(o redis.Options, timeout time.Duration) *redis.Options {
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = timeout, timeout, timeout, timeout
	o.DialerRetries = 1
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	return &o
}

// Close closes every connection that was opened.
func (d *Deps) Close() {
	if d.hub != nil {
		_ = d.hub.Close()
	}
	if d.sandbox != nil {
		d.sandbox.Close()
	}
	if d.Temporal != nil {
		d.Temporal.Close()
	}
	if d.Bus != nil {
		d.Bus.Close()
	}
	if d.Redis != nil {
		_ = d.Redis.Close()
	}
	if d.limiterRedis != nil {
		_ = d.limiterRedis.Close()
	}
	if d.Store != nil {
		d.Store.Close()
	}
}

// APIServer builds the HTTP tier: token verifier, rate limiter, secrets keyring and blob store.
func (d *Deps) APIServer(ctx context.Context) (*api.Server, error) {
	c := d.Config
	verifier, err := auth.NewVerifier(ctx, auth.Options{Secret: []byte(c.AuthJWTSecret), JWKSURL: c.AuthJWKSURL, Audience: c.AuthAudience, Issuer: c.AuthIssuer})
	if err != nil {
		return nil, err
	}
	keys, err := d.Keyring()
	if err != nil {
		return nil, err
	}
	blobs, err := blob.Open(ctx, c.BlobURL)
	if err != nil {
		return nil, err
	}
	resolver, err := d.SAPResolver()
	if err != nil {
		return nil, err
	}
	return &api.Server{
		Web:       web.Embedded(webOptions(c)),
		DevTokens: devTokens(c),
		OIDC:      oidcConfig(c),
		Models:    modelInfos(c),
		Store:     d.Store, Bus: d.Bus, Hub: d.Hub(), Temporal: d.Temporal, TaskQueue: c.TaskQueue,
		MaxMessageBytes: c.MaxMessageBytes, IdleTimeout: c.IdleTimeout, Log: d.Log,
		Auth: verifier, Limiter: redis_rate.NewLimiter(limiterKeys{d.limiterRedis}), RedisPrefix: c.RedisPrefix, RateLimitPerMinute: c.RateLimitPerMinute,
		IndexReadsPerMinute: c.IndexReadsPerMinute, IndexReadsPerWorkspaceMinute: c.IndexReadsPerWorkspaceMinute,
		LandscapeCacheBytes: c.LandscapeCacheBytes, LandscapeCacheWorkspaceBytes: c.LandscapeCacheWorkspaceBytes,
		RateLimitTimeout: c.RateLimitTimeout, TemporalTimeout: c.TemporalCallTimeout, AccessCheckEvery: c.StreamAccessCheck,
		AllowedOrigins: c.AllowedOrigins, Secrets: keys, Blobs: blobs, MaxFileBytes: c.MaxFileBytes,
		WorkspaceStorageBytes: c.WorkspaceStorageBytes, MaxSocketsPerUser: c.MaxSocketsPerUser,
		ValidateModel: c.ValidateModel, MaxLoopSteps: c.MaxLoopSteps, MaxQueued: c.MaxQueued, ApprovalTimeout: c.ApprovalTimeout,
		Production: c.Environment == "production", SAP: resolver, RunEvents: c.RunEvents,
		Codec: ops.CodecOptions{Codec: d.Codec, Namespace: c.TemporalNamespace, Operators: c.Operators, Origins: c.CodecOrigins},
	}, nil
}

// Hub returns the process's shared event subscriptions (created on first use, closed with Deps).
func (d *Deps) Hub() *events.Hub {
	if d.hub == nil {
		d.hub = d.Bus.NewHub()
	}
	return d.hub
}

// Keyring opens SECRETS_KEY (and SECRETS_OLD_KEYS).
func (d *Deps) Keyring() (*secrets.Keyring, error) {
	return secrets.ParseKeys(d.Config.SecretsKey, d.Config.SecretsOldKeys)
}

// Activities builds the worker's activities.
func (d *Deps) Activities() (*activities.Activities, error) {
	resolver, err := d.SAPResolver()
	if err != nil {
		return nil, err
	}
	scripts, err := d.Sandbox()
	if err != nil {
		return nil, err
	}
	direct := map[string]bool{}
	for _, name := range d.Config.DirectCallTools {
		if def, ok := tools.Default().Get(name); !ok || !def.ExecuteCodeAllowed {
			return nil, fmt.Errorf("DIRECT_CALL_TOOLS: %q is not an SAP tool", name)
		}
		direct[name] = true
	}
	blobs, err := blob.Open(context.Background(), d.Config.BlobURL)
	if err != nil {
		return nil, err
	}
	classifier, err := cleanCoreClassifier(d.Config)
	if err != nil {
		return nil, err
	}
	return &activities.Activities{
		Store: d.Store, Bus: d.Bus, Models: Models(d.Config), PrimaryModel: d.Config.PrimaryModel, Log: d.Log,
		Temporal: d.Temporal, Blobs: blobs,
		Sync: activities.Sync{EmbeddingsModel: d.Config.EmbeddingsModel, Classifier: classifier, MaxItemsPerPhase: d.Config.SyncMaxItemsPerPhase},
		SAP: activities.SAP{Resolver: resolver, DirectCall: direct, Scripts: scripts,
			ScriptLimit: script.Limits{MaxSteps: uint64(d.Config.CodeMaxSteps), Timeout: d.Config.CodeTimeout}},
	}, nil
}

// Sandbox returns the process's pool of script sandboxes (started on first use, so only
// workers start them; closed with Deps).
func (d *Deps) Sandbox() (*sandbox.Pool, error) {
	if d.sandbox == nil {
		p, err := sandbox.New(sandbox.Options{Size: d.Config.SandboxPoolSize, MemoryMB: d.Config.SandboxMemoryMB,
			MaxPerOrg: d.Config.SandboxMaxPerOrg, MaxPerUser: d.Config.SandboxMaxPerUser,
			UID: d.Config.SandboxUID, GID: d.Config.SandboxGID, Log: d.Log})
		if err != nil {
			return nil, err
		}
		d.sandbox = p
	}
	return d.sandbox, nil
}

// SAPResolver reaches the workspaces' SAP connections: remote connectors through the URL
// guard, d.Simulated for simulated connections (in development, for every connection without
// a URL).
func (d *Deps) SAPResolver() (*sapconn.Resolver, error) {
	keys, err := d.Keyring()
	if err != nil {
		return nil, err
	}
	guard := sap.Guard{Production: d.Config.Environment == "production"}
	return &sapconn.Resolver{Store: d.Store, Keyring: keys, Client: sap.NewClient(guard, d.Config.ConnectorTimeout), Simulated: d.Simulated,
		Production: guard.Production}, nil
}

// Models lists the configured model providers.
func Models(cfg config.Config) *llm.Registry {
	var ps []llm.Provider
	for _, p := range cfg.Providers {
		base := p.BaseURL
		if p.Name == "offline" {
			base = cfg.OfflineLLMURL // the dev stack resolves its address after listening
		}
		ps = append(ps, llm.Provider{Name: p.Name, BaseURL: base, APIKey: p.APIKey,
			ContextTokens: p.ContextTokens, ModelContextTokens: p.ModelContextTokens})
	}
	return llm.NewRegistry(ps...)
}

// SDKLogger adapts slog for the Temporal SDK, keeping its per-task info lines out.
func SDKLogger(log *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(levelFloor{log.Handler(), slog.LevelWarn}))
}

type levelFloor struct {
	slog.Handler
	min slog.Level
}

func (h levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// Serve runs handler on l until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, l net.Listener, handler http.Handler) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// WebSockets are hijacked connections Shutdown does not wait for; they end with the process.
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func (h levelFloor) WithAttrs(attrs []slog.Attr) slog.Handler {
	return levelFloor{h.Handler.WithAttrs(attrs), h.min}
}

func (h levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h.Handler.WithGroup(name), h.min}
}

// cleanCoreClassifier grades custom code against the configured Cloudification Repository
// (CLOUDIFICATION_REPOSITORY; the shipped copy by default) and customer namespaces.
func cleanCoreClassifier(c config.Config) (*cleancore.Classifier, error) {
	var repo *cleancore.Repository
	var err error
	if c.CloudificationRepository == "" {
		repo, err = cleancore.Default()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		repo, err = cleancore.Load(ctx, c.CloudificationRepository)
	}
	if err != nil {
		return nil, fmt.Errorf("CLOUDIFICATION_REPOSITORY: %w", err)
	}
	return cleancore.New(repo, cleancore.Options{CustomerNamespaces: c.CustomerNamespaces})
}

// webOptions lets the page reach the OpenID Connect issuer (discovery, token endpoint).
func webOptions(c config.Config) web.Options {
	var o web.Options
	if origin := c.OIDCOrigin(); origin != "" {
		o.ConnectSrc = []string{origin}
	}
	return o
}

// oidcConfig is the web chat's sign-in client; nil without OIDC_ISSUER.
func oidcConfig(c config.Config) *ops.OIDCConfig {
	if c.OIDCIssuer == "" {
		return nil
	}
	return &ops.OIDCConfig{Issuer: c.OIDCIssuer, ClientID: c.OIDCClientID, Scopes: c.OIDCScopes, Audience: c.OIDCAudience}
}

// modelInfos lists the models agents may pick (GET /api/models).
func modelInfos(c config.Config) []ops.ModelInfo {
	choices := c.ModelChoices()
	out := make([]ops.ModelInfo, len(choices))
	for i, m := range choices {
		out[i] = ops.ModelInfo{ID: m.Provider + ":" + m.Model, Provider: m.Provider, Model: m.Model, Default: m.Default, ContextTokens: m.ContextTokens}
	}
	return out
}

// devTokens is the development sign-in's token minter: only off production, and only with an
// HS256 secret (a JWKS setup signs in through its identity provider).
func devTokens(c config.Config) func(string) (string, time.Time, error) {
	if c.Environment == "production" || c.AuthJWTSecret == "" {
		return nil
	}
	const ttl = 12 * time.Hour
	return func(user string) (string, time.Time, error) {
		tok, err := auth.Mint([]byte(c.AuthJWTSecret), user, ttl, c.AuthAudience, c.AuthIssuer)
		return tok, time.Now().Add(ttl).UTC(), err
	}
}
