package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
