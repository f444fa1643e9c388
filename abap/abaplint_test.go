package abap

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/testenv"
)

// oracleDir is where internal/abapref installs its pinned abaplint (package-lock.json).
const oracleDir = "../internal/abapref/oracle"

// TestPackagePassesAbaplint runs lint.js (abaplint.json: syntax 7.02, default rules but those
// the config switches off, docs/connector.md says why) over abap/zsapagent.
func TestPackagePassesAbaplint(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "abaplint skipped: Node.js (node) is not installed")
	}
	if _, err := os.Stat(filepath.Join(oracleDir, "node_modules/@abaplint/core/package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			testenv.Missing(t, "abaplint skipped: npm is not installed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = oracleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", oracleDir, err, out)
		}
	}
	modules, err := filepath.Abs(filepath.Join(oracleDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "lint.js", "zsapagent")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("abaplint finds issues in abap/zsapagent: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
