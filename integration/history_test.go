package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// recordHistory writes a run's history to workflows/testdata when UPDATE_HISTORIES=1, so the
// replay test in package workflows checks every later workflow change against it. Recorded
// files are committed; a change that breaks replay needs workflow.GetVersion.
func recordHistory(t *testing.T, c client.Client, workflowID, runID, name string) {
	if os.Getenv("UPDATE_HISTORIES") != "1" {
		return
	}
	ctx := context.Background()
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, 0)
	h := &history.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	path := filepath.Join("..", "workflows", "testdata", name+".json")
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	t.Logf("recorded %s (%d events)", path, len(h.Events))
}
