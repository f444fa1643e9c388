// Command gen writes the event protocol's JSON schema (schemas/events.schema.json) and the
// page's TypeScript types (web/src/chat/events.gen.ts) from the frame types of package frames:
// `go generate ./internal/events/frames`, or `make generate`. A test regenerates both in memory
// and fails when the files in the tree differ.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	out, err := generate(root)
	if err != nil {
		fail(err)
	}
	for _, f := range out {
		if err := os.WriteFile(filepath.Join(root, f.path), f.content, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// moduleRoot is the nearest directory upwards that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
