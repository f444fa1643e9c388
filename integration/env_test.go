// Package integration runs the whole product in-process (embedded Temporal on SQLite, real
// Postgres, real Redis, the offline model behind the real go-openai client) and checks what a
// user of the API would see. It is the one test package that links the Temporal server.
package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

// env is one isolated product: its own database, Redis key prefix and Temporal data folder,
// so packages and reruns never collide.
type env struct {
	t     testing.TB
	cfg   config.Config
	opts  devstack.Options
	stack *devstack.Stack
	token string // alice's token; alice owns org and admins workspace
	// fast skips schema validation of received frames (benchmarks measure the product, not the checker)
	fast bool
	org  string
	ws   string
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// testConfig derives an isolated configuration from TEST_DATABASE_URL / TEST_REDIS_URL.
func testConfig(t testing.TB) config.Config {
	cfg, err := config.Load()
	require.NoError(t, err)
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/sapagent_test_" + randomSuffix()
	cfg.DatabaseURL = u.String()
	if r := os.Getenv("TEST_REDIS_URL"); r != "" {
		cfg.RedisURL = r
	} else {
		cfg.RedisURL = "redis://127.0.0.1:6379/0"
	}
	cfg.RedisPrefix = "sapagent-test-" + randomSuffix() + ":"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.TemporalPort = 0
	cfg.TemporalUIPort = 0
	cfg.OfflineLLMAddr = "127.0.0.1:0"
	cfg.SAPSimAddr = "127.0.0.1:0"
	cfg.DevConnectorAddr = "127.0.0.1:0"
	cfg.OfflineLLMDelay = time.Millisecond
	cfg.WorkerStopGrace = 0 // RestartWorker stands for a crash: nothing is let finish
	cfg.PrimaryModel = "offline:" + offlinellm.ModelName
	cfg.OpenAIAPIKey = ""
	cfg.DataDir = t.TempDir()
	cfg.AuthJWTSecret = "test-secret-" + randomSuffix() + randomSuffix()
	cfg.SecretsKey = secrets.NewKey()
	cfg.PayloadKey = secrets.NewKey() // set here (not generated) so a production-mode test starts too
	cfg.BlobURL = "file://" + cfg.DataDir + "/files"
	cfg.TemporalLogLevel = "fatal"
	if testing.Verbose() {
		cfg.TemporalLogLevel = "error"
	}
	return cfg
}

func startEnv(t testing.TB, mutate func(*config.Config, *devstack.Options)) *env {
	t.Helper()
	e := &env{t: t, cfg: testConfig(t)}
	_, e.fast = t.(*testing.B) // benchmarks measure the product, not the schema checker
	e.opts = devstack.Options{Config: e.cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if testing.Verbose() {
		e.opts.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	testDB := e.cfg.DatabaseURL
	if mutate != nil {
		mutate(&e.cfg, &e.opts)
		e.opts.Config = e.cfg
	}
	if e.cfg.DatabaseURL == testDB { // not a test of another server
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		require.NoError(t, createMigratedDatabase(ctx, testDB))
		cancel()
	}
	e.start()
	e.token = e.tokenFor("alice")
	var org, ws struct {
		ID string `json:"id"`
	}
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/orgs", map[string]any{"name": "Acme"}, &org))
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces", map[string]any{"org_id": org.ID, "name": "Finance"}, &ws))
	e.org, e.ws = org.ID, ws.ID
	t.Cleanup(func() {
		e.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = store.DropDatabase(ctx, e.cfg.DatabaseURL)
	})
	return e
}

func (e *env) start() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := devstack.Start(ctx, e.opts)
	require.NoError(e.t, err)
	e.stack = s
}

func (e *env) stop() {
	if e.stack != nil {
		e.stack.Stop()
		e.stack = nil
	}
}

// restart stops the stack and starts it again on the same database and data folder, on new ports.
func (e *env) restart() {
	e.stop()
	e.start()
}

// tokenFor mints a valid token for user.
func (e *env) tokenFor(user string) string {
	tok, err := auth.Mint([]byte(e.cfg.AuthJWTSecret), user, time.Hour, "", "")
	require.NoError(e.t, err)
	return tok
}

// do sends a JSON request as alice and decodes a JSON response into out (when non-nil).
func (e *env) do(method, path string, body any, out any) int {
	e.t.Helper()
	return e.doAs(e.token, method, path, body, out)
}

// doAs sends a request with the given bearer token ("" for none).
func (e *env) doAs(token, method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.stack.APIURL+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	if out != nil && len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, out), "body: %s", raw)
	}
	return resp.StatusCode
}

type agentJSON struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Status      string `json:"status"`
}

func (e *env) createAgent(name string) agentJSON {
	e.t.Helper()
	var a agentJSON
	require.Equal(e.t, http.StatusCreated, e.do("POST", "/api/agents", map[string]any{"name": name, "workspace_id": e.ws}, &a))
	require.NotEmpty(e.t, a.ID)
	return a
}

type messageJSON struct {
	ID      string `json:"id"`
	Seq     int64  `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Status  string `json:"status"`
	Model   string `json:"model"`
}

type listJSON struct {
	Data       []messageJSON `json:"data"`
	NextCursor *string       `json:"next_cursor"`
	HasMore    bool          `json:"has_more"`
}

func (e *env) messages(agentID string) []messageJSON {
	e.t.Helper()
	var l listJSON
	require.Equal(e.t, http.StatusOK, e.do("GET", "/api/agents/"+agentID+"/messages", nil, &l))
	return l.Data
}

// event is a decoded wire event; Raw keeps every field for protocol checks.
type event struct {
	Seq       int64           `json:"seq"`
	Epoch     string          `json:"epoch"`
	Type      string          `json:"type"`
	Delta     string          `json:"delta"`
	MessageID string          `json:"message_id"`
	Status    string          `json:"status"`
	RunID     string          `json:"run_id"` // sync_* events
	Message   *messageJSON    `json:"message"`
	Messages  []messageJSON   `json:"messages"`
	Raw       json.RawMessage `json:"-"`
	At        time.Time       `json:"-"` // when the client read it
}

type socket struct {
	t    testing.TB
	conn *websocket.Conn
	fast bool
}

func (e *env) dial(agentID, query string) *socket {
	e.t.Helper()
	return e.dialPath("/api/agents/" + agentID + "/ws" + query)
}

// dialPath opens a WebSocket on an API path.
func (e *env) dialPath(path string) *socket {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + path
	conn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + e.token}})
	require.NoError(e.t, err)
	_ = resp.Body.Close()
	e.t.Cleanup(func() { _ = conn.Close() })
	return &socket{t: e.t, conn: conn, fast: e.fast}
}

func (s *socket) next(timeout time.Duration) event {
	s.t.Helper()
	require.NoError(s.t, s.conn.SetReadDeadline(time.Now().Add(timeout)))
	_, raw, err := s.conn.ReadMessage()
	at := time.Now()
	require.NoError(s.t, err)
	if !s.fast {
		validateEvent(s.t, raw)
	}
	var ev event
	require.NoError(s.t, json.Unmarshal(raw, &ev), "event: %s", raw)
	ev.Raw, ev.At = raw, at
	return ev
}

// until reads events until one satisfies done, returning all of them.
func (s *socket) until(timeout time.Duration, done func(event) bool) []event {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var out []event
	for {
		ev := s.next(time.Until(deadline))
		out = append(out, ev)
		if done(ev) {
			return out
		}
	}
}

func isAssistantMessage(ev event) bool {
	return ev.Type == "message" && ev.Message != nil && ev.Message.Role == "assistant"
}
