package devstack

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/connector/sapbackend"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// Simulator users the dev connector's config names: the technical user (syncs, calls
// without a user's own login) is the simulator's DEVELOPER, its password handed over as the
// config's password_env would be.
const (
	devTechUser        = "DEVELOPER"
	devTechPasswordEnv = "SAPSIM_TECH_PASSWORD"
)

// DevConnectorConfig is the connector config the dev stack generates for its simulator at
// simURL: systems ECC and S4H over SOAP RFC and ADT (and OData on S4H), client 100, key the
// connector key. JSON, as an operator could write it (docs/connector.md); the compose file's
// deploy/connector.sapsim.yaml is the same in YAML.
func DevConnectorConfig(simURL, key string) ([]byte, error) {
	type interfaces struct {
		OData bool `json:"odata"`
	}
	type system struct {
		ID          string `json:"id"`
		URL         string `json:"url"`
		Client      string `json:"client"`
		User        string `json:"user"`
		PasswordEnv string `json:"password_env"`
		MaxCalls    int    `json:"max_concurrent_calls"`
		// S/4HANA's business partner and product writes go through its released OData APIs.
		Interfaces interfaces `json:"interfaces"`
	}
	cfg := struct {
		Keys    []string `json:"connector_keys"`
		Systems []system `json:"systems"`
	}{Keys: []string{key}}
	for _, sid := range []string{"ECC", "S4H"} {
		cfg.Systems = append(cfg.Systems, system{ID: sid, URL: simURL + "/" + sid, Client: "100", User: devTechUser, PasswordEnv: devTechPasswordEnv, MaxCalls: 16,
			Interfaces: interfaces{OData: sid == "S4H"}})
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// NewDevConnector builds the real connector (internal/connector with sapbackend) in front of
// the simulator at simURL, with a fresh random key; its idempotency store lives in memory, as
// the simulator's state does.
func NewDevConnector(simURL string, log *slog.Logger) (http.Handler, string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	key := base64.RawURLEncoding.EncodeToString(raw)
	text, err := DevConnectorConfig(simURL, key)
	if err != nil {
		return nil, "", err
	}
	cfg, err := connector.ParseConfig(text, func(name string) string {
		if name == devTechPasswordEnv {
			return sapsim.DefaultUsers()[devTechUser]
		}
		return ""
	})
	if err != nil {
		return nil, "", fmt.Errorf("dev connector config: %w", err)
	}
	backends := map[string]connector.Backend{}
	for _, sys := range cfg.Systems {
		backends[sys.ID] = sapbackend.New(sys, connector.NewHTTPClient(sys))
	}
	store, err := connector.OpenIdempotencyStore("")
	if err != nil {
		return nil, "", err
	}
	srv, err := connector.NewServer(cfg, backends, store, log)
	if err != nil {
		return nil, "", err
	}
	return srv.Handler(), key, nil
}
