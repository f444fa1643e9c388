package connector

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TLS to SAP trusts ca_file: SAP's private certificate fails without it and answers with it.
func TestProbeTrustsCAFile(t *testing.T) {
	sapSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer sapSrv.Close()
	caFile := filepath.Join(t.TempDir(), "sap-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sapSrv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	probe := func(ca string) error {
		raw := fmt.Sprintf(`{"connector_keys":["0123456789abcdef"],"systems":[{"id":"ECC","url":%q,"client":"100","ca_file":%q}]}`, sapSrv.URL, ca)
		cfg, err := ParseConfig([]byte(raw), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		sys := cfg.Systems[0]
		return HTTPProbe{System: sys, Client: NewHTTPClient(sys)}.Probe(context.Background())[InterfaceADT]
	}
	if err := probe(caFile); err != nil {
		t.Fatalf("with ca_file: %v", err)
	}
	if err := probe(""); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without ca_file: %v", err)
	}
}

// Printing or logging a system never shows the technical user's password.
func TestSystemNeverPrintsItsPassword(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"connector_keys":["0123456789abcdef"],"systems":[{"id":"ECC","url":"https://sap.example.com","client":"100","user":"T","password_env":"PW"}]}`), env(map[string]string{"PW": "very-secret-pw"}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "system", cfg.Systems[0], "cred", Credentials{User: "T", Password: "very-secret-pw"})
	out := buf.String() + fmt.Sprintf("%v %+v %#v %s", cfg.Systems[0], cfg.Systems[0], cfg.Systems[0], Credentials{User: "T", Password: "very-secret-pw"})
	if strings.Contains(out, "very-secret-pw") {
		t.Fatalf("password printed: %s", out)
	}
}

// The probe asks each interface the way it answers a real call: SOAP RFC with an RFC_PING
// envelope (SAP answers a GET there with an error page), OData at the released API's metadata.
func TestProbeCallsRFCPingAndTheReleasedAPI(t *testing.T) {
	on := true
	seen := map[string]string{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.URL.Path] = r.Method + " " + string(body)
		mu.Unlock()
		if r.URL.Path == "/sap/bc/soap/rfc" && (r.Method != http.MethodPost || !strings.Contains(string(body), "RFC_PING")) {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	sys := System{ID: "ECC", URL: srv.URL, Client: "100", Language: "EN", User: "TECH", Password: "pw",
		Interfaces: Interfaces{OData: &on}}
	got := HTTPProbe{System: sys, Client: srv.Client()}.Probe(context.Background())
	for _, iface := range []string{InterfaceADT, InterfaceSOAPRFC, InterfaceOData} {
		if got[iface] != nil {
			t.Errorf("%s: %v", iface, got[iface])
		}
	}
	if m := seen["/sap/opu/odata/sap/API_BUSINESS_PARTNER/$metadata"]; !strings.HasPrefix(m, "GET") {
		t.Errorf("odata probe: %q, seen %v", m, seen)
	}
}
