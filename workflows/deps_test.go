package workflows

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Workflow code must not link the Starlark interpreter: it decides nothing by running or parsing
// scripts (the model activity records each call's mode), and a workflow that could would make
// replay depend on the interpreter's version. Tool words come from internal/toolpolicy, and the
// legacy classifier is passed in (LegacyClassifier) instead of imported.
func TestWorkflowsDoNotLinkStarlark(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "go.temporal.io/sdk/workflow") {
		t.Fatalf("go list -deps listed %d packages without the workflow SDK: not this package's dependencies", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "go.starlark.net") || d == "github.com/sapagent/sapagent/internal/tools" || d == "github.com/sapagent/sapagent/internal/script" {
			t.Errorf("workflows links %s", d)
		}
	}
}
