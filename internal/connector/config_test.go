package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// The documented example (docs/connector.md) loads as YAML, and the same config as JSON.
func TestConfigYAMLAndJSON(t *testing.T) {
	yamlCfg := `
connector_keys: ["0123456789abcdef"]
idempotency_store: /var/lib/sapagent-connector/idempotency.jsonl
systems:
  - id: ECC
    url: https://ecc.example.com:44300/
    client: "100"
    language: de
    user: SAPAGENT_TECH
    password_env: ECC_TECH_PASSWORD
    interfaces:
      odata: false
      routes: {read_table: soap_rfc, where_used: adt}
    read_only: true
    write_function_modules: [bapi_material_savedata]
    max_concurrent_calls: 6
    timeouts: {call: 90s, connect: 5, queue: 1m}
`
	cfg, err := ParseConfig([]byte(yamlCfg), env(map[string]string{"ECC_TECH_PASSWORD": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Systems[0]
	if s.URL != "https://ecc.example.com:44300" || s.Language != "DE" || s.Password != "pw" || !s.ReadOnly ||
		s.WriteFunctionModules[0] != "BAPI_MATERIAL_SAVEDATA" || s.MaxConcurrentCalls != 6 ||
		time.Duration(s.Timeouts.Call) != 90*time.Second || time.Duration(s.Timeouts.Connect) != 5*time.Second ||
		s.Interfaces.Route("search_objects") != InterfaceADT || s.Interfaces.Route("read_table") != InterfaceSOAPRFC {
		t.Fatalf("%+v", s)
	}
	jsonCfg := `{"connector_keys":["0123456789abcdef"],"systems":[{"id":"S4H","url":"http://127.0.0.1:8090","client":"200"}]}`
	cfg, err = ParseConfig([]byte(jsonCfg), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s = cfg.Systems[0]
	if s.Language != "EN" || s.MaxConcurrentCalls != DefaultMaxConcurrentCalls || time.Duration(s.Timeouts.Call) != DefaultCallTimeout ||
		!s.Interfaces.Enabled(InterfaceADT) || s.Interfaces.Enabled(InterfaceOData) {
		t.Fatalf("defaults: %+v", s)
	}
}

// Each mistake is reported with the field it is in.
func TestConfigErrorsNameTheField(t *testing.T) {
	base := `{"connector_keys":["0123456789abcdef"],"systems":[{"id":"ECC","url":"https://sap.example.com","client":"100"%s}]}`
	cases := map[string]string{
		`,"url":"http://sap.example.com"`:               "url",
		`,"client":"1"`:                                 "client",
		`,"id":"E C C"`:                                 "id",
		`,"user":"TECH"`:                                "password_env",
		`,"user":"TECH","password_env":"MISSING_PW"`:    "MISSING_PW",
		`,"ca_file":"/nonexistent/ca.pem"`:              "ca_file",
		`,"max_concurrent_calls":-1`:                    "max_concurrent_calls",
		`,"timeouts":{"call":"soon"}`:                   "soon",
		`,"interfaces":{"routes":{"read_table":"jco"}}`: "interfaces.routes.read_table",
		`,"interfaces":{"adt":false}`:                   "switched off",
		`,"readonly":true`:                              "readonly",
		`,"write_function_modules":["DROP TABLE"]`:      "write_function_modules[0]",
		`,"url":"https://user:pw@sap.example.com"`:      "url",
	}
	for extra, want := range cases {
		raw := strings.Replace(base, "%s", extra, 1)
		// A later duplicate key overrides in YAML? yaml.v3 refuses duplicates: put overrides in place.
		raw = dedupe(raw)
		_, err := ParseConfig([]byte(raw), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error naming %q", extra, err, want)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: the error echoes the URL's password: %v", extra, err)
		}
	}
	for _, raw := range []string{`{"systems":[]}`, `{"connector_keys":["short"],"systems":[]}`, `{"connector_keys":["0123456789abcdef"]}`, `{nope`} {
		if _, err := ParseConfig([]byte(raw), env(nil)); err == nil {
			t.Errorf("%s: accepted", raw)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "ca.pem")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
	raw := strings.Replace(base, "%s", `,"ca_file":"`+bad+`"`, 1)
	if _, err := ParseConfig([]byte(raw), env(nil)); err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Errorf("bad CA file: %v", err)
	}
}

// dedupe drops the base's field when the case sets it again (yaml.v3 refuses duplicate keys).
func dedupe(raw string) string {
	for _, field := range []string{"url", "client", "id"} {
		if strings.Count(raw, `"`+field+`":`) > 1 {
			i := strings.Index(raw, `"`+field+`":`)
			j := strings.Index(raw[i:], ",")
			raw = raw[:i] + raw[i+j+1:]
		}
	}
	return raw
}

// The example config shipped for docker compose and described in docs/connector.md loads.
func TestShippedExampleConfigLoads(t *testing.T) {
	cfg, err := LoadConfig("../../deploy/connector.example.yaml", env(map[string]string{"ECC_TECH_PASSWORD": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Systems[0]; s.ID != "ECC" || s.User != "SAPAGENT_TECH" || len(s.WriteFunctionModules) != 2 {
		t.Fatalf("%+v", s)
	}
}
