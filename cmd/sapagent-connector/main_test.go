package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, sapURL string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "connector.json")
	cfg := `{"connector_keys":["0123456789abcdef"],"systems":[{"id":"ECC","url":"` + sapURL + `","client":"100","user":"SAPAGENT","password_env":"ECC_PW"}]}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `sapagent-connector health` prints each system's interfaces and fails when a system does not answer.
func TestHealthCommand(t *testing.T) {
	sapSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sap/bc/soap/rfc" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	env := map[string]string{"CONNECTOR_CONFIG": writeConfig(t, sapSrv.URL), "ECC_PW": "pw-123"}
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if err := run(context.Background(), []string{"health"}, func(k string) string { return env[k] }, &out, log); err != nil {
		t.Fatalf("health: %v\n%s", err, out.String())
	}
	var report struct {
		Systems []struct {
			ID         string
			Reachable  bool
			Interfaces map[string]struct {
				OK     bool
				Status int
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	ecc := report.Systems[0]
	if !ecc.Reachable || !ecc.Interfaces["adt"].OK || ecc.Interfaces["soap_rfc"].Status != 401 {
		t.Fatalf("%s", out.String())
	}
	sapSrv.Close()
	out.Reset()
	if err := run(context.Background(), []string{"health"}, func(k string) string { return env[k] }, &out, log); err == nil || !strings.Contains(err.Error(), "ECC") {
		t.Fatalf("a stopped SAP system: %v", err)
	}
}

func TestConfigErrorsStopTheStart(t *testing.T) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	err := run(context.Background(), nil, func(string) string { return "" }, io.Discard, log)
	if err == nil || !strings.Contains(err.Error(), "CONNECTOR_CONFIG") {
		t.Fatalf("no config: %v", err)
	}
	env := map[string]string{"CONNECTOR_CONFIG": writeConfig(t, "https://sap.example.com")}
	err = run(context.Background(), nil, func(k string) string { return env[k] }, io.Discard, log)
	if err == nil || !strings.Contains(err.Error(), "ECC_PW") {
		t.Fatalf("missing password variable: %v", err)
	}
	env["ECC_PW"], env["CONNECTOR_TLS_CERT"] = "pw-123", "/etc/cert.pem"
	err = run(context.Background(), nil, func(k string) string { return env[k] }, io.Discard, log)
	if err == nil || !strings.Contains(err.Error(), "CONNECTOR_TLS_KEY") {
		t.Fatalf("a certificate without its key: %v", err)
	}
}

// The binary's wiring serves /healthz and the protocol on CONNECTOR_ADDR and stops on its context.
func TestServeAndStop(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env := map[string]string{"CONNECTOR_CONFIG": writeConfig(t, "https://sap.example.com"), "ECC_PW": "pw-123", "CONNECTOR_ADDR": addr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, func(k string) string { return env[k] }, io.Discard, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}()
	var res *http.Response
	for range 100 {
		if res, err = http.Get("http://" + addr + "/healthz"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	res.Body.Close()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/ECC/index/custom_objects", strings.NewReader(`{}`))
	req.Header.Set("X-Connector-Key", "0123456789abcdef")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// The index phase is mapped onto SAP's tables; the configured system does not exist, so
	// the answer is the protocol's "system unavailable", not a crash or an empty page.
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(raw), "SYSTEM_UNAVAILABLE") {
		t.Fatalf("index/custom_objects of an unreachable system: %d %s", res.StatusCode, raw)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop")
	}
}
