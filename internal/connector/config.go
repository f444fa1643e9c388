// Package connector is sapagent's connector service (cmd/sapagent-connector): it serves the
// connector protocol (docs/connector-protocol.md, types in internal/sap) for the SAP systems of
// its configuration and hands each call to that system's Backend, which maps it onto SAP's own
// HTTP interfaces (ADT, SOAP RFC, OData). docs/connector.md describes deployment and config.
package connector

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sapagent/sapagent/internal/sap"
)

// Interfaces of SAP the connector can use.
const (
	InterfaceADT     = "adt"
	InterfaceSOAPRFC = "soap_rfc"
	InterfaceOData   = "odata"
)

// Endpoints lists every protocol endpoint the connector serves.
var Endpoints = []string{
	sap.EndpointSystemInfo, sap.EndpointProbeChanges, sap.EndpointTableSchema, sap.EndpointReadTable,
	sap.EndpointExecuteRFC, sap.EndpointFunctionInterface, sap.EndpointSearchObjects,
	sap.EndpointABAPSource, sap.EndpointWhereUsed, sap.EndpointWriteTable,
	sap.EndpointIndexCustomObjects, sap.EndpointIndexRelationships, sap.EndpointIndexCustomCode,
	sap.EndpointIndexCatalogContext, sap.EndpointIndexEnhancements, sap.EndpointIndexS4Extensions,
}

// defaultRoutes says which interface serves an endpoint when the config does not say:
// repository browsing through ADT, data and function modules through SOAP RFC.
var defaultRoutes = map[string]string{
	sap.EndpointSearchObjects: InterfaceADT,
	sap.EndpointABAPSource:    InterfaceADT,
	sap.EndpointWhereUsed:     InterfaceADT,
}

// Config is the connector's configuration file (CONNECTOR_CONFIG, YAML or JSON).
type Config struct {
	ConnectorKeys []string `yaml:"connector_keys"`
	// IdempotencyStore is the file keeping the first answer of keyed writes across restarts.
	IdempotencyStore string   `yaml:"idempotency_store"`
	Systems          []System `yaml:"systems"`
}

// System is one SAP system the connector serves at /<ID>/.
type System struct {
	ID       string `yaml:"id"`
	URL      string `yaml:"url"`
	Client   string `yaml:"client"`
	Language string `yaml:"language"`
	// Technical user: runs calls that carry no X-SAP-User, and the health probes. The password
	// comes from the environment variable PasswordEnv, never from the file.
	User        string `yaml:"user"`
	PasswordEnv string `yaml:"password_env"`
	Password    string `yaml:"-"`
	CAFile      string `yaml:"ca_file"`
	// CAPool holds ca_file's certificates (nil: the system's roots).
	CAPool               *x509.CertPool `yaml:"-"`
	Interfaces           Interfaces     `yaml:"interfaces"`
	ReadOnly             bool           `yaml:"read_only"`
	WriteFunctionModules []string       `yaml:"write_function_modules"`
	MaxConcurrentCalls   int            `yaml:"max_concurrent_calls"`
	Timeouts             Timeouts       `yaml:"timeouts"`
	// CustomerNamespaces are the customer's own namespaces (/ACME/): objects in them are custom
	// code like Z* and Y* ones in the index phases.
	CustomerNamespaces []string `yaml:"customer_namespaces"`
	// ChangeLog is the file of the connector's own change log of the system (probe_changes):
	// seqs survive a restart. Default: changes-<id>.jsonl next to idempotency_store; without
	// either the log lives in memory and starts again at seq 1 after a restart.
	ChangeLog string `yaml:"change_log"`
}

// Interfaces says which SAP interfaces a system offers and which serves each endpoint.
type Interfaces struct {
	ADT     *bool             `yaml:"adt"`
	SOAPRFC *bool             `yaml:"soap_rfc"`
	OData   *bool             `yaml:"odata"`
	Routes  map[string]string `yaml:"routes"`
}

// Enabled reports whether the interface is switched on (adt and soap_rfc by default, odata not).
func (i Interfaces) Enabled(name string) bool {
	on := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	switch name {
	case InterfaceADT:
		return on(i.ADT, true)
	case InterfaceSOAPRFC:
		return on(i.SOAPRFC, true)
	case InterfaceOData:
		return on(i.OData, false)
	}
	return false
}

// Route is the interface that serves endpoint.
func (i Interfaces) Route(endpoint string) string {
	if r, ok := i.Routes[endpoint]; ok {
		return r
	}
	if r, ok := defaultRoutes[endpoint]; ok {
		return r
	}
	return InterfaceSOAPRFC
}

// Timeouts bound a system's calls.
type Timeouts struct {
	// Call bounds one protocol call, SAP's answer included (default 60s).
	Call Duration `yaml:"call"`
	// Connect bounds dialling SAP and the TLS handshake (default 10s).
	Connect Duration `yaml:"connect"`
	// Queue bounds waiting for a free slot under max_concurrent_calls (default 30s).
	Queue Duration `yaml:"queue"`
}

// Duration reads "30s", "2m" or a number of seconds.
type Duration time.Duration

// UnmarshalYAML accepts a Go duration string or seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := n.Decode(&secs); err != nil {
		return fmt.Errorf("%q is not a duration (e.g. \"30s\") or a number of seconds", s)
	}
	*d = Duration(time.Duration(secs * float64(time.Second)))
	return nil
}

// Defaults of a system.
const (
	DefaultMaxConcurrentCalls = 4
	DefaultCallTimeout        = 60 * time.Second
	DefaultConnectTimeout     = 10 * time.Second
	DefaultQueueTimeout       = 30 * time.Second
	DefaultLanguage           = "EN"
)

var (
	systemIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	clientPattern   = regexp.MustCompile(`^[0-9]{3}$`)
	languagePattern = regexp.MustCompile(`^[A-Za-z0-9]{1,2}$`)
	envNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	functionPattern = regexp.MustCompile(`^[A-Za-z0-9_/]{1,30}$`)
	// SAP namespaces are /NAME/ with 1 to 8 letters, digits or underscores.
	namespacePattern = regexp.MustCompile(`^/[A-Z0-9_]{1,8}/$`)
)

// LoadConfig reads and validates the file at path; getenv supplies the technical users'
// passwords (os.Getenv in production).
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	if path == "" {
		return nil, errors.New("CONNECTOR_CONFIG is not set: name the connector's YAML or JSON config file (docs/connector.md)")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CONNECTOR_CONFIG: %w", err)
	}
	cfg, err := ParseConfig(raw, getenv)
	if err != nil {
		return nil, fmt.Errorf("CONNECTOR_CONFIG %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes YAML or JSON (JSON is YAML) and validates it. Unknown fields are errors:
// a misspelt read_only must not silently allow writes.
func ParseConfig(raw []byte, getenv func(string) string) (*Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("not valid YAML or JSON of the connector's config: %w", err)
	}
	if err := cfg.validate(getenv); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func (c *Config) validate(getenv func(string) string) error {
	if len(c.ConnectorKeys) == 0 {
		return errors.New("connector_keys: at least one key is required (the platform sends it as X-Connector-Key)")
	}
	for i, k := range c.ConnectorKeys {
		if len(k) < 8 {
			return fmt.Errorf("connector_keys[%d]: a key needs at least 8 characters (32 random bytes recommended)", i)
		}
	}
	if len(c.Systems) == 0 {
		return errors.New("systems: at least one SAP system is required")
	}
	seen := map[string]bool{}
	for i := range c.Systems {
		s := &c.Systems[i]
		if err := s.validate(getenv); err != nil {
			return fmt.Errorf("systems[%d]: %w", i, err)
		}
		if seen[s.ID] {
			return fmt.Errorf("systems[%d].id: %q is used twice", i, s.ID)
		}
		seen[s.ID] = true
		if s.ChangeLog == "" && c.IdempotencyStore != "" {
			s.ChangeLog = filepath.Join(filepath.Dir(c.IdempotencyStore), "changes-"+s.ID+".jsonl")
		}
	}
	return nil
}

func (s *System) validate(getenv func(string) string) error {
	if !systemIDPattern.MatchString(s.ID) {
		return fmt.Errorf("id: %q must be 1-32 letters, digits, _ or - (it is the URL path segment, e.g. ECC)", s.ID)
	}
	if err := checkSystemURL(s.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	s.URL = strings.TrimSuffix(s.URL, "/")
	if !clientPattern.MatchString(s.Client) {
		return fmt.Errorf("client: %q must be SAP's three-digit client, e.g. \"100\" (quote it in YAML)", s.Client)
	}
	if s.Language == "" {
		s.Language = DefaultLanguage
	}
	if !languagePattern.MatchString(s.Language) {
		return fmt.Errorf("language: %q must be an SAP logon language such as EN or DE", s.Language)
	}
	s.Language = strings.ToUpper(s.Language)
	switch {
	case s.User == "" && s.PasswordEnv != "":
		return errors.New("password_env: set user too (password_env names the technical user's password variable)")
	case s.User != "" && s.PasswordEnv == "":
		return errors.New("password_env: the technical user needs the name of the environment variable holding its password (never the password itself)")
	case s.User != "":
		if !envNamePattern.MatchString(s.PasswordEnv) {
			return fmt.Errorf("password_env: %q is not an environment variable name", s.PasswordEnv)
		}
		if s.Password = getenv(s.PasswordEnv); s.Password == "" {
			return fmt.Errorf("password_env: the environment variable %s is empty or not set", s.PasswordEnv)
		}
	}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return fmt.Errorf("ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("ca_file: %s holds no PEM certificate", s.CAFile)
		}
		s.CAPool = pool
	}
	if err := s.Interfaces.validate(); err != nil {
		return fmt.Errorf("interfaces.%w", err)
	}
	for j, ns := range s.CustomerNamespaces {
		ns = strings.ToUpper(strings.TrimSpace(ns))
		if !namespacePattern.MatchString(ns) {
			return fmt.Errorf("customer_namespaces[%d]: %q is not a namespace such as /ACME/", j, s.CustomerNamespaces[j])
		}
		s.CustomerNamespaces[j] = ns
	}
	for j, fm := range s.WriteFunctionModules {
		if !functionPattern.MatchString(fm) {
			return fmt.Errorf("write_function_modules[%d]: %q is not a function module name", j, fm)
		}
		s.WriteFunctionModules[j] = strings.ToUpper(fm)
	}
	switch {
	case s.MaxConcurrentCalls == 0:
		s.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	case s.MaxConcurrentCalls < 0 || s.MaxConcurrentCalls > 1000:
		return fmt.Errorf("max_concurrent_calls: %d must be between 1 and 1000", s.MaxConcurrentCalls)
	}
	for _, t := range []struct {
		name string
		d    *Duration
		def  time.Duration
	}{{"call", &s.Timeouts.Call, DefaultCallTimeout}, {"connect", &s.Timeouts.Connect, DefaultConnectTimeout}, {"queue", &s.Timeouts.Queue, DefaultQueueTimeout}} {
		switch {
		case *t.d == 0:
			*t.d = Duration(t.def)
		case *t.d < 0 || time.Duration(*t.d) > time.Hour:
			return fmt.Errorf("timeouts.%s: %s must be positive and at most 1h", t.name, time.Duration(*t.d))
		}
	}
	return nil
}

func (i Interfaces) validate() error {
	known := map[string]bool{}
	for _, e := range Endpoints {
		known[e] = true
	}
	for endpoint, iface := range i.Routes {
		if !known[endpoint] {
			return fmt.Errorf("routes: %q is not a connector endpoint", endpoint)
		}
		if iface != InterfaceADT && iface != InterfaceSOAPRFC && iface != InterfaceOData {
			return fmt.Errorf("routes.%s: %q must be adt, soap_rfc or odata", endpoint, iface)
		}
	}
	for _, e := range Endpoints {
		if r := i.Route(e); !i.Enabled(r) {
			return fmt.Errorf("routes.%s: routed to %s, which is switched off for this system", e, r)
		}
	}
	return nil
}

// checkSystemURL wants https://host[:port][/path]; http only for a loopback address (tests,
// the dev stack's simulator). Credentials, queries and fragments are refused.
func checkSystemURL(raw string) error {
	if raw == "" {
		return errors.New("required: SAP's base URL, e.g. https://sap.example.com:44300")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q does not parse", raw)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("no user, query or fragment in the URL (the technical user is user/password_env)")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%q: https:// is required (http:// only for a loopback address)", raw)
	}
	return fmt.Errorf("%q: the scheme must be https", raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// WritesFunction reports whether execute_rfc may run fm as a write on this system: never on a
// read_only system; otherwise when the allowlist is empty or names fm (BAPI_TRANSACTION_COMMIT
// and _ROLLBACK always, they only finish what an allowed write staged).
func (s *System) WritesFunction(fm string) bool {
	if s.ReadOnly {
		return false
	}
	fm = strings.ToUpper(fm)
	if len(s.WriteFunctionModules) == 0 || fm == "BAPI_TRANSACTION_COMMIT" || fm == "BAPI_TRANSACTION_ROLLBACK" {
		return true
	}
	for _, allowed := range s.WriteFunctionModules {
		if allowed == fm {
			return true
		}
	}
	return false
}

// String and LogValue name the system without its password, whatever prints or logs it.
func (s System) String() string { return s.ID + " (" + s.URL + ", client " + s.Client + ")" }

// GoString keeps %#v from printing the password.
func (s System) GoString() string { return "connector.System{" + s.String() + "}" }

// LogValue logs the system's id, URL and client only.
func (s System) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", s.ID), slog.String("url", s.URL), slog.String("client", s.Client))
}
