package devstack

import (
	"context"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/labstack/echo/v4"
	uiserver "github.com/temporalio/ui-server/v2/server"
	uiapi "github.com/temporalio/ui-server/v2/server/api"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/payloadcodec"
)

// TemporalOptions configures the embedded Temporal server.
type TemporalOptions struct {
	DataDir          string   // the SQLite file lives here; it survives restarts
	Port             int      // frontend gRPC port; 0 picks a free one
	UIPort           int      // Temporal Web UI port; 0 disables the UI
	Namespace        string   // registered with SearchAttributes
	LogLevel         string   // the server's own log level: debug, info, warn, error (default), fatal
	SearchAttributes []string // custom keyword search attributes
	Log              *slog.Logger
	// Codec encrypts what the dev stack's own Temporal client sends, like every product client.
	Codec *payloadcodec.Codec
	// CodecEndpoint is the API's codec (<api>/api/codec) the UI decodes payloads through;
	// "" leaves payloads encrypted in the UI.
	CodecEndpoint string
	// CodecCookie, when set, is called on each of the UI's API requests: its cookie lets the
	// browser call CodecEndpoint as an operator (the UI sends cookies with includeCredentials).
	CodecCookie func() *http.Cookie
}

// Temporal is a running embedded server (and its UI).
type Temporal struct {
	Address   string // frontend host:port
	UIAddress string // "" when the UI is disabled
	server    temporal.Server
	ui        *uiserver.Server
	level     zap.AtomicLevel
}

const clusterName = "active"

// StartTemporal runs a single-process Temporal server on a SQLite file, the way
// `temporal server start-dev --db-filename` does, and registers the namespace and search attributes.
func StartTemporal(ctx context.Context, o TemporalOptions) (*Temporal, error) {
	if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", o.DataDir, err)
	}
	ports := func() int {
		p, err := freePort()
		if err != nil {
			panic(err)
		}
		return p
	}
	if o.Port == 0 {
		o.Port = ports()
	}
	if err := checkPortFree(o.Port); err != nil {
		return nil, fmt.Errorf("temporal port: %w (set TEMPORAL_PORT)", err)
	}
	if o.UIPort != 0 {
		// The UI server exits the process when it cannot bind, so check first.
		if err := checkPortFree(o.UIPort); err != nil {
			return nil, fmt.Errorf("temporal UI port: %w (set TEMPORAL_UI_PORT)", err)
		}
	}

	sqlConf := &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: filepath.Join(o.DataDir, "temporal.db"),
		ConnectAttributes: map[string]string{
			"mode": "rwc", "_journal_mode": "wal", "_synchronous": "1", // WAL + NORMAL: fast and crash-safe enough for dev
		},
	}
	if _, err := os.Stat(sqlConf.DatabaseName); os.IsNotExist(err) {
		if err := sqliteschema.SetupSchema(sqlConf); err != nil {
			return nil, fmt.Errorf("temporal schema: %w", err)
		}
	}
	attrs := map[string]enumspb.IndexedValueType{}
	for _, name := range o.SearchAttributes {
		attrs[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, attrs)
	if err != nil {
		return nil, err
	}
	if err := sqliteschema.CreateNamespaces(sqlConf, ns); err != nil { // no-op when it exists
		return nil, fmt.Errorf("temporal namespace: %w", err)
	}

	host := "127.0.0.1"
	grpcPorts := map[primitives.ServiceName]int{
		primitives.FrontendService: o.Port, primitives.HistoryService: ports(),
		primitives.MatchingService: ports(), primitives.WorkerService: ports(),
	}
	services := map[string]config.Service{}
	// Static membership: one process hosts every service, so there is no ringpop to bootstrap
	// (ringpop would first try the stale members a previous run left in the SQLite file).
	staticHosts := map[primitives.ServiceName]static.Hosts{}
	for name, port := range grpcPorts {
		services[string(name)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
		staticHosts[name] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(port)))
	}
	conf := &config.Config{
		Global: config.Global{Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: host}},
		Persistence: config.Persistence{
			DefaultStore: "sqlite", VisibilityStore: "sqlite", NumHistoryShards: 1,
			DataStores: map[string]config.DataStore{"sqlite": {SQL: sqlConf}},
		},
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
				Enabled: true, InitialFailoverVersion: 1,
				RPCAddress: net.JoinHostPort(host, strconv.Itoa(o.Port)),
				ClusterID:  "6a1c9b52-8f7e-4c3d-9b1a-2e5f0d7c4a11",
			}},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            services,
		Archival:            config.Archival{History: config.HistoryArchival{State: "disabled"}, Visibility: config.VisibilityArchival{State: "disabled"}},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History: config.HistoryArchivalNamespaceDefaults{State: "disabled"}, Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: net.JoinHostPort(host, strconv.Itoa(o.Port))},
	}

	level := zapcore.ErrorLevel
	if o.LogLevel != "" {
		if err := level.Set(o.LogLevel); err != nil {
			return nil, fmt.Errorf("temporal log level %q: %w", o.LogLevel, err)
		}
	}
	t := &Temporal{Address: conf.PublicClient.HostPort, level: zap.NewAtomicLevelAt(level)}
	logger := tlog.NewZapLogger(zap.New(zapcore.NewCore(
		zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.Lock(os.Stderr), t.level)))
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, err
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, err
	}
	t.server, err = temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(staticHosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// Search attributes added at runtime are visible at once.
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := t.server.Start(); err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := t.ensureSearchAttributes(ctx, o.Namespace, o.SearchAttributes, o.Codec, o.Log); err != nil {
		t.Stop()
		return nil, err
	}
	if o.UIPort != 0 {
		t.UIAddress = net.JoinHostPort(host, strconv.Itoa(o.UIPort))
		uiOpts := []uioptions.ServerOption{uioptions.WithConfigProvider(&uiconfig.Config{
			Host: host, Port: o.UIPort, TemporalGRPCAddress: t.Address, EnableUI: true, HideLogs: true,
			DefaultNamespace: o.Namespace,
			CORS:             uiconfig.CORS{CookieInsecure: true},
			Codec:            uiconfig.Codec{Endpoint: o.CodecEndpoint, IncludeCredentials: o.CodecEndpoint != ""},
		})}
		if o.CodecCookie != nil {
			// ui-server has no hook to add a route or header; its API middleware sees each
			// request's echo context (ui-server sets its own version header the same way).
			uiOpts = append(uiOpts, uioptions.WithAPIMiddleware([]uiapi.Middleware{func(c echo.Context) runtime.ServeMuxOption {
				if ck := o.CodecCookie(); ck != nil {
					c.SetCookie(ck)
				}
				return func(*runtime.ServeMux) {}
			}}))
		}
		t.ui = uiserver.NewServer(uiOpts...)
		go func() {
			if err := t.ui.Start(); err != nil {
				o.Log.Error("temporal UI stopped", "error", err)
			}
		}()
	}
	return t, nil
}

// Port is the frontend's port.
func (t *Temporal) Port() int {
	_, port, _ := net.SplitHostPort(t.Address)
	n, _ := strconv.Atoi(port)
	return n
}

// ensureSearchAttributes adds missing ones: a data file created by an older version has the
// namespace already, so the namespace config above does not add new attributes to it.
func (t *Temporal) ensureSearchAttributes(ctx context.Context, namespace string, names []string, codec *payloadcodec.Codec, log *slog.Logger) error {
	c, err := client.Dial(app.TemporalClientOptions(t.Address, namespace, codec, log))
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range names {
		if _, ok := have.CustomAttributes[name]; !ok {
			missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// Stop shuts the UI and the server down; the server's shutdown warnings are silenced.
func (t *Temporal) Stop() {
	t.level.SetLevel(zapcore.FatalLevel)
	if t.ui != nil {
		t.ui.Stop()
	}
	_ = t.server.Stop()
}

// freePort picks a free port below Linux's ephemeral range (32768+), where outgoing
// connections take their ports: a port picked there can be grabbed between the check and the
// server's bind, and the Temporal server exits the process when a bind fails.
// A port is handed out once per process: a server stopped and another started (tests) must not
// race for the same port while the first one's listener is still closing.
func freePort() (int, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for i := 0; i < 200; i++ {
		port := 20000 + mrand.IntN(12000)
		if !handedOut[port] && checkPortFree(port) == nil {
			handedOut[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port found in 20000-32000")
}

var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

func checkPortFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is in use", port)
	}
	return l.Close()
}
