package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/sapagent/sapagent/api"
	"github.com/sapagent/sapagent/api/ops"
	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/payloadcodec"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/worker"
	"github.com/sapagent/sapagent/workflows"
)

// Options configure one dev stack.
type Options struct {
	Config config.Config
	Log    *slog.Logger
	// StartServices starts local Postgres/Redis when they are down (make dev); tests leave it off.
	StartServices bool
	// OfflineLLM tunes the in-process offline model (used when PRIMARY_MODEL is offline:*).
	OfflineLLM offlinellm.Options
	// SAPRoute is how connections without a connector URL reach the simulator: when empty or
	// config.DevSAPRouteConnector, platform → connector → simulator over HTTP (make dev and the
	// integration tests); config.DevSAPRouteInProcess, the simulator in process.
	SAPRoute string
}

// Stack is a running dev stack. Addresses are resolved (port 0 in the config becomes a real port).
type Stack struct {
	APIURL          string
	TemporalAddress string
	TemporalUIURL   string // "" when the UI is disabled
	OfflineLLMURL   string // "" when a real model is configured
	SAPSimURL       string // the simulated landscape over HTTP: <SAPSimURL>/ECC and <SAPSimURL>/S4H
	// ConnectorURL is the connector in front of the simulator (<ConnectorURL>/ECC, /S4H) when
	// SAPRoute is the connector route, else "".
	ConnectorURL string
	// Landscape is the simulator the stack serves (tests read its state and change log).
	Landscape *sapsim.Landscape
	Deps      *app.Deps
	API       *api.Server

	temporal     *Temporal // nil while stopped (StopTemporal)
	temporalOpts TemporalOptions
	worker       sdkworker.Worker
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	errs         chan error
}

// Start brings everything up in dependency order; on failure it stops what it started.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	// The keys are needed before app.Open: the embedded server's own client encrypts, and the
	// UI's operator cookie is a token signed with the JWT secret.
	cfg, err := o.Config.WithDevSecrets()
	if err != nil {
		return nil, err
	}
	codec, err := payloadcodec.Parse(cfg.PayloadKey, cfg.PayloadOldKeys)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Stack{cancel: cancel, errs: make(chan error, 4)}
	var apiListener net.Listener // closed here until the API serves on it
	defer func() {
		if err != nil {
			if apiListener != nil {
				_ = apiListener.Close()
			}
			s.Stop()
		}
	}()

	if o.StartServices {
		if err := EnsureServices(ctx, cfg.DatabaseURL, cfg.RedisURL, o.Log); err != nil {
			return nil, err
		}
	}
	if err := store.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx, cfg.DatabaseURL); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}

	if cfg.UsesOfflineModel() {
		l, err := net.Listen("tcp", cfg.OfflineLLMAddr)
		if err != nil {
			return nil, fmt.Errorf("offline model on %s: %w (set OFFLINE_LLM_ADDR)", cfg.OfflineLLMAddr, err)
		}
		opts := o.OfflineLLM
		if opts.TokenDelay == 0 {
			opts.TokenDelay = cfg.OfflineLLMDelay
		}
		s.OfflineLLMURL = "http://" + l.Addr().String() + "/v1"
		cfg.OfflineLLMURL = s.OfflineLLMURL
		s.serve(runCtx, "offline model", l, offlinellm.New(opts).Handler())
	}

	// The API listens before Temporal starts: the UI's configuration names its codec endpoint.
	if apiListener, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, fmt.Errorf("API on %s: %w (set HTTP_ADDR)", cfg.HTTPAddr, err)
	}
	s.APIURL = "http://" + hostPort(apiListener.Addr())
	s.temporalOpts = TemporalOptions{
		DataDir: cfg.DataDir, Port: cfg.TemporalPort, UIPort: cfg.TemporalUIPort,
		Namespace: cfg.TemporalNamespace, SearchAttributes: workflows.SearchAttributeNames, Log: o.Log,
		LogLevel: cfg.TemporalLogLevel, Codec: codec,
	}
	if cfg.TemporalUIPort != 0 {
		cfg = withUIOperator(cfg, &s.temporalOpts, s.APIURL, o.Log)
	}
	s.temporal, err = StartTemporal(ctx, s.temporalOpts)
	if err != nil {
		return nil, err
	}
	s.temporalOpts.Port = s.temporal.Port()
	s.TemporalAddress = s.temporal.Address
	if s.temporal.UIAddress != "" {
		s.TemporalUIURL = "http://" + s.temporal.UIAddress
	}
	cfg.TemporalAddress = s.temporal.Address

	if s.Deps, err = app.Open(ctx, cfg, o.Log); err != nil {
		return nil, err
	}
	if err := s.startSimulator(runCtx, cfg, o); err != nil {
		return nil, err
	}

	acts, err := s.Deps.Activities()
	if err != nil {
		return nil, err
	}
	s.worker = worker.New(s.Deps.Temporal, cfg.TaskQueue, acts, cfg.WorkerStopGrace)
	if err := s.worker.Start(); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}

	if s.API, err = s.Deps.APIServer(ctx); err != nil {
		return nil, err
	}
	s.serve(runCtx, "API", apiListener, s.API.Router())
	apiListener = nil
	return s, nil
}

// startSimulator serves the simulated landscape at SAPSIM_ADDR (SAP's SOAP RFC and ADT, and
// the connector protocol) and routes the platform's simulated connections to it: through a
// real connector at DEV_CONNECTOR_ADDR (platform → connector HTTP → sapbackend → SOAP/ADT HTTP
// → simulator), or in process.
func (s *Stack) startSimulator(ctx context.Context, cfg config.Config, o Options) error {
	s.Landscape = sapsim.NewLandscape(sapsim.Options{Latency: cfg.SAPSimLatency, ErrorRate: cfg.SAPSimErrorRate,
		GeneratedObjects: cfg.SAPSimLandscapeObjects})
	sl, err := net.Listen("tcp", cfg.SAPSimAddr)
	if err != nil {
		return fmt.Errorf("SAP simulator on %s: %w (set SAPSIM_ADDR)", cfg.SAPSimAddr, err)
	}
	s.SAPSimURL = "http://" + hostPort(sl.Addr())
	s.serve(ctx, "SAP simulator", sl, s.Landscape.Handler())
	switch o.SAPRoute {
	case config.DevSAPRouteInProcess:
		s.Deps.Simulated = s.Landscape
		return nil
	case "", config.DevSAPRouteConnector:
	default:
		return fmt.Errorf("unknown SAP route %q", o.SAPRoute)
	}
	h, key, err := NewDevConnector(s.SAPSimURL, o.Log)
	if err != nil {
		return err
	}
	cl, err := net.Listen("tcp", cfg.DevConnectorAddr)
	if err != nil {
		return fmt.Errorf("connector on %s: %w (set DEV_CONNECTOR_ADDR)", cfg.DevConnectorAddr, err)
	}
	s.ConnectorURL = "http://" + hostPort(cl.Addr())
	s.serve(ctx, "connector", cl, h)
	s.Deps.Simulated = sapconn.SimulatorConnector{Client: sap.NewClient(sap.Guard{Trusted: true}, cfg.ConnectorTimeout), URL: s.ConnectorURL, Key: key}
	return nil
}

// UIOperator is the user the dev stack's Temporal UI decodes payloads as. It is an operator in
// the dev stack only; production names its operators in OPERATORS.
const UIOperator = "dev-temporal-ui"

// withUIOperator lets the embedded UI decode payloads out of the box, still authenticated: the
// UI calls the API's codec with includeCredentials, and every response of the UI's own API
// sets a short-lived operator token as an HttpOnly cookie (host-only, so it is sent to the API
// on the same host, other port). Only a browser that loads this UI (bound to 127.0.0.1) gets it.
func withUIOperator(cfg config.Config, topts *TemporalOptions, apiURL string, log *slog.Logger) config.Config {
	topts.CodecEndpoint = apiURL + "/api/codec"
	cfg.CodecOrigins = append(slices.Clip(cfg.CodecOrigins), "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.TemporalUIPort)))
	if cfg.AuthJWTSecret == "" || cfg.Environment == "production" {
		log.Warn("the Temporal UI shows payloads encrypted: the dev stack signs its UI operator token with AUTH_JWT_SECRET in development only; use an operator token (docs/operations.md)")
		return cfg
	}
	cfg.Operators = append(slices.Clip(cfg.Operators), UIOperator)
	secret, audience, issuer := []byte(cfg.AuthJWTSecret), cfg.AuthAudience, cfg.AuthIssuer
	topts.CodecCookie = func() *http.Cookie {
		tok, err := auth.Mint(secret, UIOperator, time.Hour, audience, issuer)
		if err != nil {
			return nil
		}
		return &http.Cookie{Name: ops.CodecCookie, Value: tok, Path: "/api/codec", MaxAge: 3600,
			HttpOnly: true, SameSite: http.SameSiteStrictMode}
	}
	return cfg
}

func (s *Stack) serve(ctx context.Context, name string, l net.Listener, h http.Handler) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := app.Serve(ctx, l, h); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

// RestartWorker stops the worker and starts a fresh one, as a crashed and redeployed worker
// process would be (fault tests): running activities are cancelled, not given a grace period.
func (s *Stack) RestartWorker() error {
	s.worker.Stop()
	acts, err := s.Deps.Activities()
	if err != nil {
		return err
	}
	s.worker = worker.New(s.Deps.Temporal, s.Deps.Config.TaskQueue, acts, 0)
	return s.worker.Start()
}

// StopTemporal stops the embedded Temporal server alone, as an outage would (fault tests):
// the API, worker and their clients keep running against an unreachable address.
func (s *Stack) StopTemporal() {
	if s.temporal != nil {
		s.temporal.Stop()
		s.temporal = nil
	}
}

// StartTemporal starts the embedded Temporal server again after StopTemporal, on the same port
// and data file, so the running clients reconnect to it.
func (s *Stack) StartTemporal(ctx context.Context) error {
	if s.temporal != nil {
		return nil
	}
	t, err := StartTemporal(ctx, s.temporalOpts)
	if err != nil {
		return err
	}
	s.temporal = t
	return nil
}

// Errors reports a component that stopped on its own.
func (s *Stack) Errors() <-chan error { return s.errs }

// Stop shuts down in reverse order: HTTP servers, worker, connections, Temporal.
func (s *Stack) Stop() {
	s.cancel()
	s.wg.Wait()
	if s.worker != nil {
		s.worker.Stop()
	}
	if s.Deps != nil {
		s.Deps.Close()
	}
	if s.temporal != nil {
		s.temporal.Stop()
	}
}

// hostPort turns a wildcard listen address into one a local client can dial.
func hostPort(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return fmt.Sprintf("127.0.0.1:%d", tcp.Port)
	}
	return tcp.String()
}
