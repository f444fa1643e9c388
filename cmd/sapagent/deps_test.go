package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The platform binary (api, worker) must not carry the simulator or the dev stack: a simulated
// connection reaches the simulator through a connector (SIMULATOR_CONNECTOR_URL), never in
// process.
func TestPlatformBinaryDoesNotLinkTheSimulator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "github.com/sapagent/sapagent/internal/app") {
		t.Fatalf("go list -deps listed %d packages without internal/app: not the platform binary's dependencies", len(deps))
	}
	for _, banned := range []string{"github.com/sapagent/sapagent/internal/sap/sapsim", "github.com/sapagent/sapagent/internal/devstack"} {
		for _, d := range deps {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("cmd/sapagent links %s", d)
			}
		}
	}
}
