package devstack

import (
	"os"
	"testing"

	"github.com/sapagent/sapagent/internal/connector"
)

// The dev stack's generated connector config and the compose file's copy describe the same
// systems, and both pass the connector's own validation.
func TestDevConnectorConfigsAreValidAndAlike(t *testing.T) {
	pw := func(name string) string {
		if name == devTechPasswordEnv {
			return "dev-pass-1"
		}
		return ""
	}
	text, err := DevConnectorConfig("http://127.0.0.1:8090", "a-key-of-enough-length")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := connector.ParseConfig(text, pw)
	if err != nil {
		t.Fatalf("generated config: %v\n%s", err, text)
	}
	raw, err := os.ReadFile("../../deploy/connector.sapsim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	compose, err := connector.ParseConfig(raw, pw)
	if err != nil {
		t.Fatalf("deploy/connector.sapsim.yaml: %v", err)
	}
	if len(gen.Systems) != 2 || len(compose.Systems) != 2 {
		t.Fatalf("systems: generated %d, compose %d", len(gen.Systems), len(compose.Systems))
	}
	for i, g := range gen.Systems {
		c := compose.Systems[i]
		if g.ID != c.ID || g.URL != c.URL || g.Client != c.Client || g.User != c.User || g.PasswordEnv != c.PasswordEnv ||
			g.Interfaces.Enabled(connector.InterfaceOData) != c.Interfaces.Enabled(connector.InterfaceOData) || g.MaxConcurrentCalls != c.MaxConcurrentCalls {
			t.Errorf("system %d: generated %+v, compose %+v", i, g, c)
		}
	}
}
