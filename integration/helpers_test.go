package integration

import (
	"encoding/json"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func listRequest(e *env, query string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.cfg.TemporalNamespace, Query: query}
}

func jsonUnmarshal(raw []byte, v any) error { return json.Unmarshal(raw, v) }

func peekSeq(raw []byte) (int64, error) {
	var v struct {
		Seq int64 `json:"seq"`
	}
	err := json.Unmarshal(raw, &v)
	return v.Seq, err
}

// cursor is the resume cursor of an event: "<epoch>:<seq>" (a bare seq from a server without
// epochs, so tests report behaviour rather than a 400 when run against one).
func (ev event) cursor() string {
	if ev.Epoch == "" {
		return itoa(ev.Seq)
	}
	return ev.Epoch + ":" + itoa(ev.Seq)
}
