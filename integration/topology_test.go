package integration

// The split topology of the fault suite: private Postgres, Redis and Temporal servers the test
// can stop and start, and the product as separate OS processes (`sapagent api`, `sapagent
// worker`) the test can kill. The model and the SAP simulator run in the test process, so the
// test reads the simulator's change log directly.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/internal/app"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/payloadcodec"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/testenv"
	"github.com/sapagent/sapagent/workflows"
)

// --- child processes ---------------------------------------------------------------------

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnRequest
)

// spawn starts a child from one OS thread that never exits. Pdeathsig fires when the thread
// that started a child dies, so starting every child there means the children die with the
// test binary (a panic or -timeout kill skips t.Cleanup) and never with a Go thread.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawnCh {
				r.done <- r.cmd.Start()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	done := make(chan error, 1)
	spawnCh <- spawnRequest{cmd, done}
	return <-done
}

// proc is one child process that can be started again after it ended; its stdout and stderr
// go to a log file that is printed when the test fails.
type proc struct {
	name string
	path string
	args []string
	env  []string
	cred *syscall.Credential
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has ended
	starts int
}

func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.starts++
	fmt.Fprintf(f, "==== %s start #%d at %s\n", p.name, p.starts, time.Now().Format("15:04:05.000"))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = f, f
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	if err := spawn(cmd); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	return nil
}

func (p *proc) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.exited
}

func (p *proc) pid() int {
	cmd, _ := p.current()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

func (p *proc) running() bool {
	cmd, exited := p.current()
	if cmd == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// signal sends sig and waits up to wait for the process to end; it reports whether it did.
func (p *proc) signal(sig syscall.Signal, wait time.Duration) bool {
	cmd, exited := p.current()
	if cmd == nil {
		return true
	}
	select {
	case <-exited:
		return true
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
		return true
	case <-time.After(wait):
		return false
	}
}

// send delivers a signal without waiting.
func (p *proc) send(sig syscall.Signal) {
	if cmd, _ := p.current(); cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// kill ends the process at once (kill -9) and waits for it.
func (p *proc) kill() { p.signal(syscall.SIGKILL, time.Minute) }

// exitCode is the ended process's exit code (-1 when killed by a signal or still running).
func (p *proc) exitCode() int {
	cmd, exited := p.current()
	select {
	case <-exited:
		return cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

func (p *proc) output() string {
	raw, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	return string(raw)
}

// waitExit waits for the process to end by itself.
func (p *proc) waitExit(d time.Duration) bool {
	_, exited := p.current()
	select {
	case <-exited:
		return true
	case <-time.After(d):
		return false
	}
}

// servicePort picks a free port below Linux's ephemeral range (32768+) for a server that is
// restarted on the same port: while it is down, an outgoing connection could otherwise take
// the port as its local end, and the embedded Temporal server exits the process when it
// cannot bind.
func servicePort(t testing.TB) int {
	for i := 0; i < 200; i++ {
		port := 20000 + mrand.IntN(12000)
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			_ = l.Close()
			return port
		}
	}
	require.FailNow(t, "no free port in 20000-32000")
	return 0
}

// --- Postgres ------------------------------------------------------------------------------

// pgServer is a private Postgres cluster (initdb) on a free port. Postgres refuses to run as
// root, so as root the cluster belongs to the postgres OS user.
type pgServer struct {
	t    testing.TB
	dir  string
	port int
	p    *proc
}

func postgresBinDir() string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1])
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func startPostgres(t testing.TB, logDir string) *pgServer {
	bin := postgresBinDir()
	if bin == "" {
		testenv.Missing(t, "fault suite: Postgres server binaries (initdb, postgres) are not installed")
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			testenv.Missing(t, "fault suite: running as root needs the postgres OS user to own the private cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: its parents are private to root, and the cluster's owner must reach it.
	dir, err := os.MkdirTemp("", "sapagent-faults-pg-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		require.NoError(t, os.Chown(dir, int(cred.Uid), int(cred.Gid)))
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale")
	if cred != nil {
		initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := initdb.CombinedOutput()
	require.NoError(t, err, "initdb: %s", out)

	s := &pgServer{t: t, dir: dir, port: servicePort(t)}
	s.p = &proc{name: "postgres", path: filepath.Join(bin, "postgres"), cred: cred, log: filepath.Join(logDir, "postgres.log"),
		args: []string{"-D", data, "-p", strconv.Itoa(s.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"},
		env: []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}}
	s.start()
	t.Cleanup(func() {
		if !s.p.signal(syscall.SIGINT, 10*time.Second) {
			s.p.kill()
		}
	})
	return s
}

func (s *pgServer) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// start runs the server and waits until it accepts queries.
func (s *pgServer) start() {
	s.t.Helper()
	require.NoError(s.t, s.p.start())
	require.Eventually(s.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn, err := pgxpool.New(ctx, s.url("postgres"))
		if err != nil {
			return false
		}
		defer conn.Close()
		return conn.Ping(ctx) == nil
	}, 30*time.Second, 100*time.Millisecond, "postgres did not start: %s", s.p.output())
}

// stop shuts the server down (fast shutdown: sessions are cut, as in an outage).
func (s *pgServer) stop() {
	if !s.p.signal(syscall.SIGINT, 20*time.Second) {
		s.p.kill()
	}
}

// --- Redis ---------------------------------------------------------------------------------

// redisServer is a private redis-server without persistence: a restart comes back empty.
type redisServer struct {
	t    testing.TB
	port int
	p    *proc
}

func startRedis(t testing.TB, logDir string) *redisServer {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Missing(t, "fault suite: redis-server is not installed")
	}
	s := &redisServer{t: t, port: servicePort(t)}
	s.p = &proc{name: "redis", path: bin, log: filepath.Join(logDir, "redis.log"), env: []string{"PATH=" + os.Getenv("PATH")},
		args: []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", logDir}}
	s.start()
	t.Cleanup(s.p.kill)
	return s
}

func (s *redisServer) start() {
	s.t.Helper()
	require.NoError(s.t, s.p.start())
	require.Eventually(s.t, func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), 200*time.Millisecond)
		if err != nil {
			return false
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return false
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		return err == nil && strings.HasPrefix(line, "+PONG")
	}, 10*time.Second, 50*time.Millisecond, "redis did not start: %s", s.p.output())
}

// restartEmpty kills the server (no persistence) and starts it again with no data.
func (s *redisServer) restartEmpty() {
	s.p.kill()
	s.start()
}

// --- Temporal ------------------------------------------------------------------------------

// temporalServer is the embedded dev server on a fixed port and a SQLite file, so it can be
// stopped and started again with its state.
type temporalServer struct {
	t    testing.TB
	opts devstack.TemporalOptions
	srv  *devstack.Temporal
}

func startTemporal(t testing.TB, dir string) *temporalServer {
	s := &temporalServer{t: t, opts: devstack.TemporalOptions{
		DataDir: dir, Port: servicePort(t), Namespace: "default", SearchAttributes: workflows.SearchAttributeNames,
		LogLevel: "fatal", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *temporalServer) address() string { return fmt.Sprintf("127.0.0.1:%d", s.opts.Port) }

func (s *temporalServer) start() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := devstack.StartTemporal(ctx, s.opts)
	require.NoError(s.t, err)
	s.srv = srv
}

func (s *temporalServer) stop() {
	if s.srv != nil {
		s.srv.Stop()
		s.srv = nil
	}
}

// --- the SAP simulator ---------------------------------------------------------------------

// simServer serves the simulated landscape over the connector protocol. Calls of the write
// BAPI take `latency`, and like a real SAP system the simulator finishes a call whose caller
// has gone away: a worker that dies mid-call does not undo the write.
type simServer struct {
	land    *sapsim.Landscape
	inner   http.Handler
	latency time.Duration
	URL     string

	mu       sync.Mutex
	requests int           // write BAPI calls received
	arrived  chan struct{} // one value per write BAPI call received
	// The sync fault tests (sync_fault_test.go): index calls served that asked for a phase's
	// first page (empty cursor), by endpoint; and a share of all calls failed before the
	// simulator sees them.
	firstPages map[string]int
	errorRate  float64
	// faults is seeded, so the same calls fail in every run. With this seed the full sync of
	// TestFaultSyncConnectorErrorsHalfTheTime has a catalog page fail five times in a row,
	// which fails its activity: Temporal's retry, not only the in-page one, is exercised.
	faults *mrand.Rand
	failed int
}

const writeBAPI = "BAPI_MATERIAL_SAVEDATA"

func startSim(t testing.TB, latency time.Duration, opts sapsim.Options) *simServer {
	s := &simServer{land: sapsim.NewLandscape(opts), latency: latency, arrived: make(chan struct{}, 100), firstPages: map[string]int{},
		faults: mrand.New(mrand.NewPCG(5, 50))}
	s.inner = s.land.Handler()
	s.URL = serveHTTP(t, s)
	return s
}

func (s *simServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if s.injectFault(w) {
		return
	}
	s.countFirstPage(r.URL.Path, body)
	if strings.HasSuffix(r.URL.Path, "/"+sap.EndpointExecuteRFC) && bytes.Contains(body, []byte(writeBAPI)) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		select {
		case s.arrived <- struct{}{}:
		default:
		}
		time.Sleep(s.latency)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.inner.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
}

// injectFault fails the call (alternately 503 and 500, as a connector's outage or crash
// would) with the server's error rate; it reports whether it did.
func (s *simServer) injectFault(w http.ResponseWriter) bool {
	s.mu.Lock()
	fail := s.errorRate > 0 && s.faults.Float64() < s.errorRate
	if fail {
		s.failed++
	}
	n := s.failed
	s.mu.Unlock()
	if !fail {
		return false
	}
	status := http.StatusServiceUnavailable
	if n%2 == 0 {
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(sap.ErrorBody{Error: sap.ErrorDetail{Code: sap.ErrSystemUnavailable, Message: "injected fault"}})
	return true
}

// setErrorRate sets the share of calls injectFault fails.
func (s *simServer) setErrorRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errorRate = rate
}

func (s *simServer) injected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// countFirstPage counts an index call that asks for a phase's first page.
func (s *simServer) countFirstPage(path string, body []byte) {
	_, endpoint, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !strings.HasPrefix(endpoint, "index/") {
		return
	}
	var req sap.IndexRequest
	if json.Unmarshal(body, &req) != nil || req.Cursor != "" {
		return
	}
	s.mu.Lock()
	s.firstPages[endpoint]++
	s.mu.Unlock()
}

// firstPageRequests returns the first-page calls per index endpoint so far.
func (s *simServer) firstPageRequests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.firstPages))
	for k, v := range s.firstPages {
		out[k] = v
	}
	return out
}

func (s *simServer) writeRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// changes returns the system's change-log entries after seq.
func (s *simServer) changes(t testing.TB, sid string, after int64) sap.ProbeChangesResponse {
	sys, ok := s.land.System(sid)
	require.True(t, ok)
	body, _ := json.Marshal(sap.ProbeChangesRequest{AfterSeq: after})
	out, err := sys.Call(context.Background(), sap.EndpointProbeChanges, sapsim.Credentials{ConnectorKey: simKeys[sid]}, body)
	require.NoError(t, err)
	return out.(sap.ProbeChangesResponse)
}

func (s *simServer) readTable(t testing.TB, sid string, req sap.ReadTableRequest) sap.ReadTableResponse {
	sys, ok := s.land.System(sid)
	require.True(t, ok)
	body, _ := json.Marshal(req)
	out, err := sys.Call(context.Background(), sap.EndpointReadTable, sapsim.Credentials{ConnectorKey: simKeys[sid]}, body)
	require.NoError(t, err)
	return out.(sap.ReadTableResponse)
}

var simKeys = map[string]string{"ECC": sapsim.ECCConnectorKey, "S4H": sapsim.S4HConnectorKey}

// serveHTTP serves h on a free loopback port until the test ends and returns its base URL.
func serveHTTP(t testing.TB, h http.Handler) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}

// --- the product binary --------------------------------------------------------------------

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// sapagentBinary builds ./cmd/sapagent once per test binary run.
func sapagentBinary(t testing.TB) string {
	binaryOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			binaryErr = fmt.Errorf("the fault suite builds ./cmd/sapagent and needs the go tool on PATH: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "sapagent-faults-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "sapagent")
		var out bytes.Buffer
		cmd := exec.Command(goTool, "build", "-o", binaryPath, "github.com/sapagent/sapagent/cmd/sapagent")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err = spawn(cmd); err == nil {
			err = cmd.Wait()
		}
		if err != nil {
			binaryErr = fmt.Errorf("go build ./cmd/sapagent: %v\n%s", err, out.String())
		}
	})
	require.NoError(t, binaryErr)
	return binaryPath
}

// TestMain removes the built binary and the migrated template database after the run.
//
// Every test has a stack of its own (its database, Redis prefix, Temporal, free ports), so
// tests call t.Parallel and mostly wait side by side (make test: GO_TEST_PARALLEL). A test stays
// serial when it asserts how long something takes or races two things against each other; a
// "Serial:" line says why. Serial tests run first, the parallel ones after them.
func TestMain(m *testing.M) {
	code := m.Run()
	dropMigratedTemplate()
	if binaryPath != "" {
		_ = os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}

// --- the topology --------------------------------------------------------------------------

type topoOptions struct {
	apis, workers int
	// storyDelay is the offline model's pause between chunks of "tell me a long story"
	// (its reply is about 80 chunks).
	storyDelay time.Duration
	// bapiLatency is how long the simulated SAP takes for the write BAPI.
	bapiLatency time.Duration
	// sim configures the simulated landscape (its size: GeneratedObjects).
	sim sapsim.Options
	// tokenDelay is the offline model's pause between chunks of other replies (default 2 ms);
	// the sync tests shorten it, so the docs a sync writes take little time.
	tokenDelay time.Duration
	// rules are the test's own model rules, tried before the suite's.
	rules []offlinellm.Rule
}

// topology is one product deployment: private services, api and worker processes.
type topology struct {
	t        testing.TB
	dir      string
	pg       *pgServer
	redis    *redisServer
	temporal *temporalServer
	sim      *simServer
	llmURL   string
	env      []string
	apis     []*proc
	apiURLs  []string
	workers  []*proc
	secret   string
	token    string
	org, ws  string
	db       *pgxpool.Pool
	tc       client.Client
	http     *httpLog
	sockets  []*wsClient
	// sent are the messages POSTed (by ID) and whether they were accepted (202).
	sentMu sync.Mutex
	sent   map[string]*sentMessage
}

type sentMessage struct {
	agentID, content string
	status           int
}

// storyRule is the slow reply the stream faults happen in.
const storyPrompt = "tell me a long story"

func faultRules(storyDelay time.Duration) []offlinellm.Rule {
	return append([]offlinellm.Rule{
		{Name: "hello", Match: `^hello$`, Reply: "Hello, ready when you are."},
		{Name: "story", Match: `^` + storyPrompt + `$`, TokenDelay: &offlinellm.Duration{Duration: storyDelay}},
	}, devstack.DemoRules()...)
}

func startTopology(t testing.TB, o topoOptions) *topology {
	t.Helper()
	if o.storyDelay == 0 {
		o.storyDelay = 50 * time.Millisecond
	}
	bin := sapagentBinary(t)
	dir := t.TempDir()
	tp := &topology{t: t, dir: dir, http: &httpLog{}, sent: map[string]*sentMessage{}}
	tp.pg = startPostgres(t, dir)
	tp.redis = startRedis(t, dir)
	tp.temporal = startTemporal(t, filepath.Join(dir, "temporal"))
	// Cleanups run last-registered first: the processes end before the services they use.
	t.Cleanup(func() {
		for _, p := range append(append([]*proc{}, tp.apis...), tp.workers...) {
			if !p.signal(syscall.SIGKILL, 10*time.Second) {
				t.Logf("%s did not end after kill -9", p.name)
			}
		}
		if t.Failed() {
			tp.dumpLogs()
		}
	})
	if o.tokenDelay == 0 {
		o.tokenDelay = 2 * time.Millisecond
	}
	llm := offlinellm.New(offlinellm.Options{TokenDelay: o.tokenDelay, Rules: append(append([]offlinellm.Rule(nil), o.rules...), faultRules(o.storyDelay)...)})
	tp.llmURL = serveHTTP(t, llm.Handler()) + "/v1"
	tp.sim = startSim(t, o.bapiLatency, o.sim)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dbURL := tp.pg.url("sapagent")
	require.NoError(t, store.EnsureDatabase(ctx, dbURL))
	var err error
	tp.db, err = pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(tp.db.Close)
	// Every process of the product encrypts payloads with this key; the test's own client
	// decodes with it (state queries).
	payloadKey := secrets.NewKey()
	codec, err := payloadcodec.Parse(payloadKey, "")
	require.NoError(t, err)
	tp.tc, err = client.Dial(app.TemporalClientOptions(tp.temporal.address(), "default", codec, slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(tp.tc.Close)

	tp.secret = "fault-secret-" + randomSuffix() + randomSuffix()
	tp.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "ENVIRONMENT=development",
		"DATABASE_URL=" + dbURL,
		fmt.Sprintf("REDIS_URL=redis://127.0.0.1:%d/0", tp.redis.port), "REDIS_PREFIX=fault:",
		"TEMPORAL_ADDRESS=" + tp.temporal.address(), "TEMPORAL_NAMESPACE=default", "TEMPORAL_TASK_QUEUE=sapagent",
		"OFFLINE_LLM_URL=" + tp.llmURL, "PRIMARY_MODEL=offline:" + offlinellm.ModelName, "OPENAI_API_KEY=",
		"AUTH_JWT_SECRET=" + tp.secret, "SECRETS_KEY=" + secrets.NewKey(), "PAYLOAD_KEY=" + payloadKey,
		"DATA_DIR=" + dir, "BLOB_URL=file://" + filepath.Join(dir, "files"),
		"RATE_LIMIT_PER_MINUTE=10000",
		"TEMPORAL_CALL_TIMEOUT=3s", // the Temporal-down test expects a refusal well within 5 s
	}

	migrate := &proc{name: "migrate", path: bin, args: []string{"migrate"}, env: tp.env, log: filepath.Join(dir, "migrate.log")}
	require.NoError(t, migrate.start())
	require.True(t, migrate.waitExit(60*time.Second), "migrate did not finish")
	require.Zero(t, migrate.exitCode(), "migrate: %s", migrate.output())

	for i := 0; i < o.apis; i++ {
		port := freePort(t)
		p := &proc{name: fmt.Sprintf("api%d", i+1), path: bin, args: []string{"api"}, log: filepath.Join(dir, fmt.Sprintf("api%d.log", i+1)),
			env: append(append([]string{}, tp.env...), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port))}
		tp.apis = append(tp.apis, p)
		tp.apiURLs = append(tp.apiURLs, fmt.Sprintf("http://127.0.0.1:%d", port))
		require.NoError(t, p.start())
	}
	for i := 0; i < o.workers; i++ {
		tp.addWorker()
	}
	for i := range tp.apis {
		tp.waitAPI(i)
	}
	for _, w := range tp.workers {
		tp.waitWorker(w)
	}

	tok, err := auth.Mint([]byte(tp.secret), "alice", 2*time.Hour, "", "")
	require.NoError(t, err)
	tp.token = tok
	var org, ws struct {
		ID string `json:"id"`
	}
	tp.mustDo(0, "POST", "/api/orgs", map[string]any{"name": "Acme"}, &org, http.StatusCreated)
	tp.mustDo(0, "POST", "/api/workspaces", map[string]any{"org_id": org.ID, "name": "Finance"}, &ws, http.StatusCreated)
	tp.org, tp.ws = org.ID, ws.ID
	return tp
}

// addWorker starts one more worker process and waits until it polls.
func (tp *topology) addWorker() *proc {
	n := len(tp.workers) + 1
	p := &proc{name: fmt.Sprintf("worker%d", n), path: binaryPath, args: []string{"worker"}, env: tp.env,
		log: filepath.Join(tp.dir, fmt.Sprintf("worker%d.log", n))}
	tp.workers = append(tp.workers, p)
	require.NoError(tp.t, p.start())
	return p
}

// waitAPI waits until an api process answers its health check.
func (tp *topology) waitAPI(i int) {
	tp.t.Helper()
	require.Eventually(tp.t, func() bool {
		resp, err := http.Get(tp.apiURLs[i] + "/api/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 100*time.Millisecond, "%s did not become healthy: %s", tp.apis[i].name, tp.apis[i].output())
}

// waitWorker waits until the worker process polls both task queues.
func (tp *topology) waitWorker(p *proc) {
	tp.t.Helper()
	require.Eventually(tp.t, func() bool {
		if !p.running() {
			return false
		}
		id := strconv.Itoa(p.pid()) + "@"
		for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := tp.tc.DescribeTaskQueue(ctx, "sapagent", typ)
			cancel()
			if err != nil {
				return false
			}
			found := false
			for _, poller := range resp.Pollers {
				found = found || strings.HasPrefix(poller.Identity, id)
			}
			if !found {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "%s did not start polling: %s", p.name, p.output())
}

// restartWorker starts a killed (or stopped) worker process again; ready waits until it polls.
func (tp *topology) restartWorker(p *proc, ready bool) {
	require.NoError(tp.t, p.start())
	if ready {
		tp.waitWorker(p)
	}
}

// workerRunning returns the worker process that runs the agent's started activity of the
// given type (attempt minAttempt or later), from the activity's last worker identity
// ("<pid>@<host>@..."); an attempt whose worker is dead does not count.
func (tp *topology) workerRunning(agentID, activityType string, minAttempt int32) *proc {
	tp.t.Helper()
	var found *proc
	var last string
	ok := assertEventually(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		d, err := tp.tc.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID(agentID), "")
		if err != nil {
			last = err.Error()
			return false
		}
		for _, pa := range d.PendingActivities {
			last = fmt.Sprintf("%s attempt %d state %s identity %s", pa.ActivityType.GetName(), pa.Attempt, pa.State, pa.LastWorkerIdentity)
			if pa.ActivityType.GetName() != activityType || pa.State != enumspb.PENDING_ACTIVITY_STATE_STARTED || pa.Attempt < minAttempt {
				continue
			}
			pid, _, _ := strings.Cut(pa.LastWorkerIdentity, "@")
			for _, w := range tp.workers {
				if strconv.Itoa(w.pid()) == pid && w.running() {
					found = w
					return true
				}
			}
		}
		return false
	}, 20*time.Second)
	require.True(tp.t, ok, "no running worker runs %s attempt %d or later (last seen: %s)", activityType, minAttempt, last)
	return found
}

func assertEventually(cond func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (tp *topology) dumpLogs() {
	files, _ := filepath.Glob(filepath.Join(tp.dir, "*.log"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil || len(raw) == 0 {
			continue
		}
		const limit = 30000
		text := string(raw)
		if len(text) > limit {
			text = "…" + text[len(text)-limit:]
		}
		tp.t.Logf("---- %s ----\n%s", filepath.Base(f), text)
	}
}

// --- requests ------------------------------------------------------------------------------

// httpCall is one request the test made, for the "no 5xx but documented 503s" check.
type httpCall struct {
	method, path string
	status       int // 0: no answer
	code         string
	retryAfter   string
	took         time.Duration
	err          string
}

type httpLog struct {
	mu    sync.Mutex
	calls []httpCall
}

func (l *httpLog) add(c httpCall) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *httpLog) all() []httpCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]httpCall(nil), l.calls...)
}

// do sends a request as alice to api process i and records the answer (a minute at most).
func (tp *topology) do(i int, method, path string, body any, out any) httpCall {
	return tp.doWithin(time.Minute, i, method, path, body, out)
}

// doWithin is do with a bound on the wait for an answer.
func (tp *topology) doWithin(limit time.Duration, i int, method, path string, body any, out any) httpCall {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(tp.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, tp.apiURLs[i]+path, rd)
	require.NoError(tp.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+tp.token)
	call := httpCall{method: method, path: path}
	start := time.Now()
	resp, err := (&http.Client{Timeout: limit}).Do(req)
	call.took = time.Since(start)
	if err != nil {
		call.err = err.Error()
		tp.http.add(call)
		return call
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	call.status, call.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	var apiErr struct {
		Code string `json:"code"`
	}
	if resp.StatusCode >= 400 {
		_ = json.Unmarshal(raw, &apiErr)
		call.code = apiErr.Code
	} else if out != nil && len(raw) > 0 {
		require.NoError(tp.t, json.Unmarshal(raw, out), "body: %s", raw)
	}
	tp.http.add(call)
	return call
}

func (tp *topology) mustDo(i int, method, path string, body any, out any, want int) {
	tp.t.Helper()
	c := tp.do(i, method, path, body, out)
	require.Equal(tp.t, want, c.status, "%s %s: %+v", method, path, c)
}

func (tp *topology) newAgent() string {
	var a struct {
		ID string `json:"id"`
	}
	tp.mustDo(0, "POST", "/api/agents", map[string]any{"name": "faults", "workspace_id": tp.ws}, &a, http.StatusCreated)
	return a.ID
}

// connectECC adds the connection "ECC", reached over HTTP at the simulator with its key, and
// returns its ID.
func (tp *topology) connectECC() string {
	var c struct {
		ID string `json:"id"`
	}
	tp.mustDo(0, "POST", "/api/workspaces/"+tp.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC", "connector_url": tp.sim.URL + "/ECC"}, &c, http.StatusCreated)
	tp.mustDo(0, "PUT", "/api/workspaces/"+tp.ws+"/connections/"+c.ID+"/secrets/connector_key", map[string]any{"value": sapsim.ECCConnectorKey}, nil, http.StatusOK)
	return c.ID
}

// send POSTs a message through api process i with its own client message ID.
func (tp *topology) send(i int, agentID, content string) (httpCall, string) {
	return tp.sendWithin(time.Minute, i, agentID, content)
}

func (tp *topology) sendWithin(limit time.Duration, i int, agentID, content string) (httpCall, string) {
	id := newUUID()
	c := tp.doWithin(limit, i, "POST", "/api/agents/"+agentID+"/message", map[string]any{"content": content, "client_message_id": id}, nil)
	tp.sentMu.Lock()
	tp.sent[id] = &sentMessage{agentID: agentID, content: content, status: c.status}
	tp.sentMu.Unlock()
	return c, id
}

func (tp *topology) sendOK(agentID, content string) string {
	tp.t.Helper()
	c, id := tp.send(0, agentID, content)
	require.Equal(tp.t, http.StatusAccepted, c.status, "POST message %q: %+v", content, c)
	return id
}

func (tp *topology) approve(agentID, callID string) {
	tp.t.Helper()
	tp.mustDo(0, "POST", "/api/agents/"+agentID+"/approve",
		map[string]any{"decisions": []any{map[string]any{"tool_call_id": callID, "approved": true}}}, nil, http.StatusOK)
}

// accepted lists the agent's messages that were answered 202, by ID.
func (tp *topology) accepted(agentID string) map[string]string {
	tp.sentMu.Lock()
	defer tp.sentMu.Unlock()
	out := map[string]string{}
	for id, m := range tp.sent {
		if m.agentID == agentID && m.status == http.StatusAccepted {
			out[id] = m.content
		}
	}
	return out
}

func (tp *topology) sentIDs(agentID string) map[string]bool {
	tp.sentMu.Lock()
	defer tp.sentMu.Unlock()
	out := map[string]bool{}
	for id, m := range tp.sent {
		if m.agentID == agentID {
			out[id] = true
		}
	}
	return out
}

// settle waits until the agent's conversation has nothing left to do (the workflow is idle
// with an empty queue) and then, briefly, for the agent row to say so too; a row that stays
// behind is reported by checkInvariants. It reports whether the workflow went idle in time.
func (tp *topology) settle(agentID string, d time.Duration) bool {
	idle := assertEventually(func() bool {
		st, err := tp.state(agentID)
		return err == nil && st.Status == workflows.StatusIdle && st.Queued == 0
	}, d)
	if idle {
		assertEventually(func() bool {
			var status string
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := tp.db.QueryRow(ctx, `SELECT status FROM agents WHERE id = $1`, agentID).Scan(&status)
			return err == nil && status == workflows.StatusIdle
		}, 10*time.Second)
	}
	return idle
}

func (tp *topology) state(agentID string) (workflows.State, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return workflows.ConversationState.Ask(ctx, tp.tc, workflows.ConversationWorkflowID(agentID), "")
}

func newUUID() string { return uuid.NewString() }
