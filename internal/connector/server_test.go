package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

const testKey = "test-connector-key-1"

// countingBackend answers execute_rfc and write_table, counting the calls that reached it.
type countingBackend struct {
	Unsupported
	calls    atomic.Int64
	release  chan struct{} // when set, execute_rfc waits for it
	started  chan struct{}
	lastCred Credentials
	mu       sync.Mutex
	fail     error
}

func (b *countingBackend) ExecuteRFC(ctx context.Context, cred Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error) {
	n := b.calls.Add(1)
	b.mu.Lock()
	b.lastCred = cred
	b.mu.Unlock()
	if b.started != nil {
		b.started <- struct{}{}
	}
	if b.release != nil {
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if b.fail != nil {
		return nil, b.fail
	}
	return &sap.ExecuteRFCResponse{Exports: map[string]any{"CALL": n, "FUNCTION": req.Function}, Return: []sap.BAPIReturn{}, Committed: req.Commit}, nil
}

// SearchObjects for "PANIC" stands for a backend bug.
func (b *countingBackend) SearchObjects(ctx context.Context, cred Credentials, req sap.SearchObjectsRequest) (*sap.SearchObjectsResponse, error) {
	if req.Query == "PANIC" {
		panic("backend bug")
	}
	return b.Unsupported.SearchObjects(ctx, cred, req)
}

func (b *countingBackend) WriteTable(_ context.Context, _ Credentials, req sap.WriteTableRequest) (*sap.WriteTableResponse, error) {
	b.calls.Add(1)
	return &sap.WriteTableResponse{Inserted: len(req.Rows), Return: []sap.BAPIReturn{}}, nil
}

func testConfig(t *testing.T, edit func(*System)) *Config {
	t.Helper()
	sys := System{ID: "ECC", URL: "http://127.0.0.1:1", Client: "100", User: "SAPAGENT", PasswordEnv: "ECC_PW"}
	if edit != nil {
		edit(&sys)
	}
	cfg := &Config{ConnectorKeys: []string{testKey}, Systems: []System{sys}}
	if err := cfg.validate(func(string) string { return "tech-secret-pw" }); err != nil {
		t.Fatal(err)
	}
	return cfg
}

type harness struct {
	srv     *httptest.Server
	backend *countingBackend
	logs    *bytes.Buffer
}

func start(t *testing.T, cfg *Config, b *countingBackend, storePath string) *harness {
	t.Helper()
	if b == nil {
		b = &countingBackend{Unsupported: Unsupported{SystemID: "ECC"}}
	}
	store, err := OpenIdempotencyStore(storePath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	s, err := NewServer(cfg, map[string]Backend{"ECC": b}, store, slog.New(slog.NewJSONHandler(&lockedWriter{w: logs}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() { hs.Close(); _ = store.Close() })
	return &harness{srv: hs, backend: b, logs: logs}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type reply struct {
	status int
	body   map[string]any
	raw    string
}

func (r reply) code() string {
	if e, ok := r.body["error"].(map[string]any); ok {
		c, _ := e["code"].(string)
		return c
	}
	return ""
}

func post(t *testing.T, h *harness, path string, body []byte, headers map[string]string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sap.HeaderConnectorKey, testKey)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		t.Fatalf("%s: answer is not JSON: %q", path, raw)
	}
	return r
}

// Every refusal comes back in the protocol's error shape with its status and code.
func TestBadRequestsGetProtocolErrors(t *testing.T) {
	h := start(t, testConfig(t, nil), nil, "")
	cases := []struct {
		name, path string
		body       []byte
		headers    map[string]string
		status     int
		code       string
	}{
		{"unknown system", "/PRD/system_info", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"unknown endpoint", "/ECC/drop_database", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"no path", "/", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"missing key", "/ECC/system_info", []byte(`{}`), map[string]string{sap.HeaderConnectorKey: ""}, 401, sap.ErrConnectorKey},
		{"wrong key", "/ECC/system_info", []byte(`{}`), map[string]string{sap.HeaderConnectorKey: "test-connector-key-2"}, 401, sap.ErrConnectorKey},
		{"unknown system without key", "/PRD/system_info", []byte(`{}`), map[string]string{sap.HeaderConnectorKey: ""}, 401, sap.ErrConnectorKey},
		{"malformed JSON", "/ECC/read_table", []byte(`{"table": "MARA",`), nil, 400, sap.ErrBadRequest},
		{"not an object", "/ECC/read_table", []byte(`["MARA"]`), nil, 400, sap.ErrBadRequest},
		{"empty body", "/ECC/system_info", nil, nil, 400, sap.ErrBadRequest},
		{"wrong field type", "/ECC/read_table", []byte(`{"table": 42}`), nil, 400, sap.ErrBadRequest},
		{"trailing data", "/ECC/read_table", []byte(`{"table":"MARA"} {"x":1}`), nil, 400, sap.ErrBadRequest},
		{"invalid UTF-8", "/ECC/search_objects", []byte("{\"query\":\"Z\xff\xfe\"}"), nil, 400, sap.ErrBadRequest},
		{"oversized", "/ECC/write_table", append(append([]byte(`{"table":"ZT","rows":[{"A":"`), bytes.Repeat([]byte("x"), maxBody)...), []byte(`"}]}`)...), nil, 413, sap.ErrBadRequest},
		{"double slash", "//ECC/system_info", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"dot segments", "/ECC/../ECC/system_info", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"trailing slash", "/ECC/", []byte(`{}`), nil, 404, sap.ErrNotFound},
		{"key too long", "/ECC/execute_rfc", []byte(`{"function":"Z_X"}`), map[string]string{sap.HeaderIdempotencyKey: strings.Repeat("k", 256)}, 400, sap.ErrBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, h, tc.path, tc.body, tc.headers)
			if r.status != tc.status || r.code() != tc.code {
				t.Fatalf("got %d %s (%s), want %d %s", r.status, r.code(), r.raw, tc.status, tc.code)
			}
			if msg := r.body["error"].(map[string]any)["message"].(string); msg == "" {
				t.Fatal("no message")
			}
		})
	}
	if n := h.backend.calls.Load(); n != 0 {
		t.Fatalf("refused requests reached the backend %d times", n)
	}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/ECC/system_info", nil)
	req.Header.Set(sap.HeaderConnectorKey, testKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", res.StatusCode)
	}
}

// Endpoints nobody mapped yet answer NOT_SUPPORTED with the reason, through the platform's client.
func TestUnmappedEndpointsAnswerNotSupported(t *testing.T) {
	h := start(t, testConfig(t, nil), nil, "")
	client := sap.NewClient(sap.Guard{}, 5*time.Second)
	target := sap.Target{URL: h.srv.URL + "/ECC", ConnectorKey: testKey}
	for _, endpoint := range Endpoints {
		if endpoint == sap.EndpointExecuteRFC || endpoint == sap.EndpointWriteTable {
			continue
		}
		var out map[string]any
		err := client.Call(context.Background(), target, endpoint, map[string]any{}, &out)
		var se *sap.Error
		if !errors.As(err, &se) || se.Status != 422 || se.Code != sap.ErrNotSupported || !strings.Contains(se.Message, endpoint) {
			t.Fatalf("%s: %v", endpoint, err)
		}
	}
	var info sap.ExecuteRFCResponse
	if err := client.Call(context.Background(), target, sap.EndpointExecuteRFC, sap.ExecuteRFCRequest{Function: "RFC_PING"}, &info); err != nil {
		t.Fatalf("execute_rfc through the platform client: %v", err)
	}
	if info.Exports["FUNCTION"] != "RFC_PING" {
		t.Fatalf("exports: %v", info.Exports)
	}
}

// A call without X-SAP-User runs as the technical user; the caller's login goes through as sent;
// neither password appears in an error or the log.
func TestCredentialsAndPasswordsNeverEchoed(t *testing.T) {
	b := &countingBackend{Unsupported: Unsupported{SystemID: "ECC"}}
	h := start(t, testConfig(t, nil), b, "")
	b.fail = errors.New("logon as DEVELOPER with password user-secret-pw and tech-secret-pw failed")
	r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"RFC_PING"}`), map[string]string{sap.HeaderSAPUser: "DEVELOPER", sap.HeaderSAPPassword: "user-secret-pw"})
	if r.status != 503 || r.code() != sap.ErrSystemUnavailable {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	if b.lastCred.User != "DEVELOPER" || b.lastCred.Password != "user-secret-pw" || b.lastCred.Technical {
		t.Fatalf("caller's credentials: %+v", b.lastCred.String())
	}
	b.fail = nil
	post(t, h, "/ECC/execute_rfc", []byte(`{"function":"RFC_PING"}`), nil)
	if b.lastCred.User != "SAPAGENT" || b.lastCred.Password != "tech-secret-pw" || !b.lastCred.Technical {
		t.Fatalf("technical user: %s", b.lastCred.String())
	}
	for _, secret := range []string{"user-secret-pw", "tech-secret-pw", testKey} {
		if strings.Contains(r.raw, secret) || strings.Contains(h.logs.String(), secret) {
			t.Fatalf("%q leaked: answer %s, log %s", secret, r.raw, h.logs.String())
		}
	}
	if !strings.Contains(h.logs.String(), `"endpoint":"execute_rfc"`) {
		t.Fatalf("no structured log line: %s", h.logs.String())
	}
	// A system without a technical user needs the caller's login.
	h2 := start(t, testConfig(t, func(s *System) { s.User, s.PasswordEnv = "", "" }), nil, "")
	if r := post(t, h2, "/ECC/execute_rfc", []byte(`{"function":"RFC_PING"}`), nil); r.status != 401 || r.code() != sap.ErrLogonFailed {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
}

// A retried write after the connector restarted on the same store file runs once and gets the
// first answer; the same key with another body is refused.
func TestIdempotentWriteSurvivesRestart(t *testing.T) {
	store := filepath.Join(t.TempDir(), "idempotency.jsonl")
	cfg := testConfig(t, nil)
	body := []byte(`{"function":"BAPI_MATERIAL_SAVEDATA","imports":{"MATERIAL":"M-1"},"commit":true}`)
	keyed := map[string]string{sap.HeaderIdempotencyKey: "agent-1/call-7/1"}

	first := start(t, cfg, nil, store)
	r1 := post(t, first, "/ECC/execute_rfc", body, keyed)
	if r1.status != 200 {
		t.Fatalf("first: %d %s", r1.status, r1.raw)
	}
	first.srv.Close()

	second := start(t, cfg, nil, store)
	r2 := post(t, second, "/ECC/execute_rfc", body, keyed)
	if r2.raw != r1.raw {
		t.Fatalf("retry after restart answered %s, first %s", r2.raw, r1.raw)
	}
	if n := first.backend.calls.Load() + second.backend.calls.Load(); n != 1 {
		t.Fatalf("the write ran %d times", n)
	}
	r3 := post(t, second, "/ECC/execute_rfc", []byte(`{"function":"BAPI_MATERIAL_SAVEDATA","imports":{"MATERIAL":"M-2"},"commit":true}`), keyed)
	if r3.status != 422 || r3.code() != sap.ErrIdempotencyKeyReused {
		t.Fatalf("other body: %d %s", r3.status, r3.raw)
	}
	// Another SAP user's same key is its own write.
	r4 := post(t, second, "/ECC/execute_rfc", body, map[string]string{sap.HeaderIdempotencyKey: "agent-1/call-7/1", sap.HeaderSAPUser: "DEVELOPER", sap.HeaderSAPPassword: "pw"})
	if r4.status != 200 || second.backend.calls.Load() != 1 {
		t.Fatalf("other user's key: %d %s, calls %d", r4.status, r4.raw, second.backend.calls.Load())
	}
}

// A failure before SAP ran (unavailable) is not remembered: the retry runs.
func TestIdempotencyForgetsCallsThatDidNotRun(t *testing.T) {
	b := &countingBackend{Unsupported: Unsupported{SystemID: "ECC"}, fail: errors.New("connection refused")}
	h := start(t, testConfig(t, nil), b, "")
	keyed := map[string]string{sap.HeaderIdempotencyKey: "a/b/1"}
	if r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_X"}`), keyed); r.status != 503 {
		t.Fatalf("got %d", r.status)
	}
	b.fail = nil
	if r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_X"}`), keyed); r.status != 200 || b.calls.Load() != 2 {
		t.Fatalf("retry: %d, calls %d", r.status, b.calls.Load())
	}
}

// A repeat sent while the first is still running waits for it and gets its answer.
func TestConcurrentRepeatWaitsForFirst(t *testing.T) {
	b := &countingBackend{Unsupported: Unsupported{SystemID: "ECC"}, release: make(chan struct{}), started: make(chan struct{}, 4)}
	h := start(t, testConfig(t, nil), b, filepath.Join(t.TempDir(), "s.jsonl"))
	body := []byte(`{"function":"Z_WRITE"}`)
	keyed := map[string]string{sap.HeaderIdempotencyKey: "a/b/1"}
	answers := make(chan reply, 2)
	go func() { answers <- post(t, h, "/ECC/execute_rfc", body, keyed) }()
	<-b.started
	go func() { answers <- post(t, h, "/ECC/execute_rfc", body, keyed) }()
	time.Sleep(100 * time.Millisecond)
	close(b.release)
	a, c := <-answers, <-answers
	if a.status != 200 || a.raw != c.raw || b.calls.Load() != 1 {
		t.Fatalf("answers %s / %s, calls %d", a.raw, c.raw, b.calls.Load())
	}
}

// Calls beyond max_concurrent_calls wait for a slot; past the queue timeout they get 503, and a
// call past its call timeout gets 504.
func TestConcurrencyLimitAndTimeouts(t *testing.T) {
	cfg := testConfig(t, func(s *System) {
		s.MaxConcurrentCalls = 1
		s.Timeouts = Timeouts{Call: Duration(300 * time.Millisecond), Queue: Duration(100 * time.Millisecond)}
	})
	b := &countingBackend{Unsupported: Unsupported{SystemID: "ECC"}, release: make(chan struct{}), started: make(chan struct{}, 4)}
	h := start(t, cfg, b, "")
	first := make(chan reply, 1)
	go func() { first <- post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_SLOW"}`), nil) }()
	<-b.started
	if r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_X"}`), nil); r.status != 503 || r.code() != sap.ErrSystemUnavailable || !strings.Contains(r.raw, "max_concurrent_calls") {
		t.Fatalf("second call while the only slot is busy: %d %s", r.status, r.raw)
	}
	if r := <-first; r.status != 504 || r.code() != sap.ErrTimeout {
		t.Fatalf("slow call: %d %s", r.status, r.raw)
	}
	// The slot is free again.
	close(b.release)
	if r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_X"}`), nil); r.status != 200 {
		t.Fatalf("after the slow call: %d %s", r.status, r.raw)
	}
}

// read_only and write_function_modules refuse writes before anything runs.
func TestWritePolicy(t *testing.T) {
	ro := start(t, testConfig(t, func(s *System) { s.ReadOnly = true }), nil, "")
	for _, body := range []string{`{"function":"BAPI_MATERIAL_SAVEDATA","commit":true}`, `{"function":"BAPI_TRANSACTION_COMMIT"}`} {
		if r := post(t, ro, "/ECC/execute_rfc", []byte(body), nil); r.status != 403 || r.code() != sap.ErrAuthorization || !strings.Contains(r.raw, "read_only") {
			t.Fatalf("%s: %d %s", body, r.status, r.raw)
		}
	}
	if r := post(t, ro, "/ECC/write_table", []byte(`{"table":"ZT","mode":"insert","rows":[]}`), nil); r.status != 403 {
		t.Fatalf("write_table: %d %s", r.status, r.raw)
	}
	if r := post(t, ro, "/ECC/write_table", []byte(`{"table":"ZT","mode":"insert","rows":[],"test_run":true}`), nil); r.status != 200 {
		t.Fatalf("test run: %d %s", r.status, r.raw)
	}
	allow := start(t, testConfig(t, func(s *System) { s.WriteFunctionModules = []string{"bapi_material_savedata"} }), nil, "")
	if r := post(t, allow, "/ECC/execute_rfc", []byte(`{"function":"BAPI_PO_CREATE1","commit":true}`), nil); r.status != 403 || !strings.Contains(r.raw, "write_function_modules") {
		t.Fatalf("not allowed: %d %s", r.status, r.raw)
	}
	if r := post(t, allow, "/ECC/execute_rfc", []byte(`{"function":"BAPI_MATERIAL_SAVEDATA","commit":true}`), nil); r.status != 200 {
		t.Fatalf("allowed: %d %s", r.status, r.raw)
	}
}

// /healthz answers without a key; /health/systems probes each interface with the technical user.
func TestHealth(t *testing.T) {
	var auth atomic.Value
	sapSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		auth.Store(u + ":" + p + ":" + r.URL.Query().Get("sap-client"))
		switch r.URL.Path {
		case "/sap/bc/adt/discovery":
			w.WriteHeader(200)
		case "/sap/bc/soap/rfc":
			w.WriteHeader(403)
		default:
			w.WriteHeader(404)
		}
	}))
	defer sapSrv.Close()
	cfg := testConfig(t, func(s *System) { s.URL = sapSrv.URL; s.Interfaces.OData = ptr(true) })
	store, _ := OpenIdempotencyStore("")
	s, err := NewServer(cfg, map[string]Backend{"ECC": NewDefaultBackend(cfg.Systems[0], NewHTTPClient(cfg.Systems[0]))}, store, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	res, err := http.Get(hs.URL + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, res)
	}
	res.Body.Close()
	res, _ = http.Get(hs.URL + "/health/systems")
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("health/systems without a key: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/health/systems", nil)
	req.Header.Set(sap.HeaderConnectorKey, testKey)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ Systems []SystemHealth }
	_ = json.NewDecoder(res.Body).Decode(&out)
	if len(out.Systems) != 1 {
		t.Fatalf("%+v", out)
	}
	got := out.Systems[0]
	if !got.Reachable || !got.Interfaces["adt"].OK || got.Interfaces["soap_rfc"].Status != 403 || got.Interfaces["odata"].Status != 404 {
		t.Fatalf("%+v", got)
	}
	if auth.Load() != "SAPAGENT:tech-secret-pw:100" {
		t.Fatalf("probe logon: %v", auth.Load())
	}
}

func ptr[T any](v T) *T { return &v }

// A panicking backend answers 503 in the protocol's shape, and the server keeps serving.
func TestBackendPanicIsAProtocolError(t *testing.T) {
	h := start(t, testConfig(t, nil), nil, "")
	r := post(t, h, "/ECC/search_objects", []byte(`{"query":"PANIC"}`), nil)
	if r.status != 503 || r.code() != sap.ErrSystemUnavailable {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	if r := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"RFC_PING"}`), nil); r.status != 200 {
		t.Fatalf("after the panic: %d %s", r.status, r.raw)
	}
}

// A torn last line (the connector died mid-append) does not stop the start or lose the answers before it.
func TestIdempotencyStoreSurvivesATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	cfg := testConfig(t, nil)
	keyed := map[string]string{sap.HeaderIdempotencyKey: "a/b/1"}
	h := start(t, cfg, nil, path)
	first := post(t, h, "/ECC/execute_rfc", []byte(`{"function":"Z_W"}`), keyed)
	h.srv.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"scope":"abc","body":"x","status":200,"ans`)
	f.Close()
	h2 := start(t, cfg, nil, path)
	if r := post(t, h2, "/ECC/execute_rfc", []byte(`{"function":"Z_W"}`), keyed); r.raw != first.raw || h2.backend.calls.Load() != 0 {
		t.Fatalf("after a torn line: %s (calls %d)", r.raw, h2.backend.calls.Load())
	}
	if r := post(t, h2, "/ECC/execute_rfc", []byte(`{"function":"Z_W"}`), map[string]string{sap.HeaderIdempotencyKey: "a/b/2"}); r.status != 200 {
		t.Fatalf("next key: %d", r.status)
	}
	h2.srv.Close()
	h3 := start(t, cfg, nil, path)
	if r := post(t, h3, "/ECC/execute_rfc", []byte(`{"function":"Z_W"}`), map[string]string{sap.HeaderIdempotencyKey: "a/b/2"}); r.status != 200 || h3.backend.calls.Load() != 0 {
		t.Fatalf("the answer written after the torn line was lost: calls %d", h3.backend.calls.Load())
	}
}

// BenchmarkCallOverhead measures one execute_rfc through the platform's client and this server
// (test backend, no SAP): the connector's own cost per call, keyed (fsynced store) and not.
func BenchmarkCallOverhead(b *testing.B) {
	cfg := &Config{ConnectorKeys: []string{testKey}, Systems: []System{{ID: "ECC", URL: "http://127.0.0.1:1", Client: "100", User: "T", PasswordEnv: "P"}}}
	if err := cfg.validate(func(string) string { return "pw" }); err != nil {
		b.Fatal(err)
	}
	store, err := OpenIdempotencyStore(filepath.Join(b.TempDir(), "s.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	s, _ := NewServer(cfg, map[string]Backend{"ECC": &countingBackend{}}, store, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	client := sap.NewClient(sap.Guard{}, 5*time.Second)
	target := sap.Target{URL: hs.URL + "/ECC", ConnectorKey: testKey}
	req := sap.ExecuteRFCRequest{Function: "BAPI_MATERIAL_GET_DETAIL", Imports: map[string]any{"MATERIAL": "M-01"}}
	// Baseline: a bare handler that decodes the request and answers, as the simulator's does.
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in sap.ExecuteRFCRequest
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": sap.ExecuteRFCResponse{Exports: map[string]any{"FUNCTION": in.Function}, Return: []sap.BAPIReturn{}}})
	}))
	defer bare.Close()
	b.Run("bare-handler", func(b *testing.B) {
		t := sap.Target{URL: bare.URL + "/ECC", ConnectorKey: testKey}
		for b.Loop() {
			var out sap.ExecuteRFCResponse
			if err := client.Call(context.Background(), t, sap.EndpointExecuteRFC, req, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unkeyed", func(b *testing.B) {
		for b.Loop() {
			var out sap.ExecuteRFCResponse
			if err := client.Call(context.Background(), target, sap.EndpointExecuteRFC, req, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keyed-first", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			ctx := sap.WithIdempotencyKey(context.Background(), "agent/call-"+strconv.Itoa(i))
			var out sap.ExecuteRFCResponse
			if err := client.Call(ctx, target, sap.EndpointExecuteRFC, req, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keyed-repeat", func(b *testing.B) {
		for b.Loop() {
			ctx := sap.WithIdempotencyKey(context.Background(), "agent/call-1")
			var out sap.ExecuteRFCResponse
			if err := client.Call(ctx, target, sap.EndpointExecuteRFC, req, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
