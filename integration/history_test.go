package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// recordHistory writes a run's history to workflows/testdata when UPDATE_HISTORIES=1, so the
// replay test in package workflows checks every later workflow change against it. Recorded
// files are committed and never overwritten here (a change that breaks replay needs
// workflow.GetVersion, not a new recording); delete a file to record it again. Payloads are
// written decrypted, so the replay test needs no key and reads them with the default converter.
func recordHistory(t *testing.T, c client.Client, codec converter.PayloadCodec, workflowID, runID, name string) {
	if os.Getenv("UPDATE_HISTORIES") != "1" {
		return
	}
	path := filepath.Join("..", "workflows", "testdata", name+".json")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Logf("kept %s: recorded histories are not overwritten (delete it to record again)", path)
		return
	}
	h := decodedHistory(t, c, codec, workflowID, runID)
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	t.Logf("recorded %s (%d events)", path, len(h.Events))
}

// rawHistory is a run's history as Temporal stores it (what its UI shows without a codec).
func rawHistory(t testing.TB, c client.Client, workflowID, runID string) *history.History {
	iter := c.GetWorkflowHistory(context.Background(), workflowID, runID, false, 0)
	h := &history.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// decodedHistory is the history with every payload decrypted by codec: what an operator sees
// through the codec endpoint.
func decodedHistory(t testing.TB, c client.Client, codec converter.PayloadCodec, workflowID, runID string) *history.History {
	h := rawHistory(t, c, workflowID, runID)
	require.NoError(t, proxy.VisitPayloads(context.Background(), h, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return codec.Decode(ps)
		},
	}))
	return h
}
