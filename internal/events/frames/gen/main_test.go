package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The schema and the page's types are what the frame types say: run `make generate` (or
// `go generate ./internal/events/frames`) after changing a frame, and commit the result.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	root, err := moduleRoot()
	require.NoError(t, err)
	out, err := generate(root)
	require.NoError(t, err)
	for _, f := range out {
		have, err := os.ReadFile(filepath.Join(root, f.path))
		require.NoError(t, err)
		require.Equal(t, string(f.content), string(have), "%s is stale: run `make generate`", f.path)
	}
}
