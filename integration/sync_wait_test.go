package integration

// A sync never hangs silently (issue 20 item 6): while its connector is down, the run says
// "waiting for SAP: <reason>, attempt N, since <time>" — in the API's run, on the workspace's
// event stream — can be cancelled at once, and goes on by itself when the connector is back.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/workflows"
)

// downConnector stands in front of the simulator's ECC: while down it answers every call
// 503 with a message that echoes the connector key, as a careless gateway might.
type downConnector struct {
	srv  *httptest.Server
	down atomic.Bool
}

func newDownConnector(t *testing.T, simURL string) *downConnector {
	target, err := url.Parse(simURL)
	require.NoError(t, err)
	d := &downConnector{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.down.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(sap.ErrorBody{Error: sap.ErrorDetail{Code: sap.ErrSystemUnavailable,
				Message: "RFC destination ECC_100 is down\nrequest key " + r.Header.Get(sap.HeaderConnectorKey)}})
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

type syncWaitingJSON struct {
	Reason  string    `json:"reason"`
	Phase   string    `json:"phase"`
	Attempt int32     `json:"attempt"`
	Since   time.Time `json:"since"`
}

// syncRunWaiting reads a run's status and waiting state through the API (status "" while the
// run's row is not written yet).
func (e *env) syncRunWaiting(runID string) (string, *syncWaitingJSON) {
	var out struct {
		Run struct {
			Status  string           `json:"status"`
			Waiting *syncWaitingJSON `json:"waiting"`
		} `json:"run"`
		Progress *struct {
			Waiting *syncWaitingJSON `json:"waiting"`
		} `json:"progress"`
	}
	code := e.do("GET", "/api/workspaces/"+e.ws+"/sync-runs/"+runID, nil, &out)
	if code == http.StatusNotFound {
		return "", nil
	}
	require.Equal(e.t, http.StatusOK, code)
	return out.Run.Status, out.Run.Waiting
}

// awaitWaiting waits until the run shows a wait of at least minAttempt.
func (e *env) awaitWaiting(runID string, minAttempt int32, within time.Duration) *syncWaitingJSON {
	e.t.Helper()
	var w *syncWaitingJSON
	var status string
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if status, w = e.syncRunWaiting(runID); w != nil && w.Attempt >= minAttempt {
			return w
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.FailNowf(e.t, "no wait shown", "run %s is %q with waiting %+v after %s", runID, status, w, within)
	return nil
}

// currentDetails is what the Temporal UI shows as a workflow's current details.
func (e *env) currentDetails(workflowID, runID string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := e.stack.Deps.Temporal.QueryWorkflow(ctx, workflowID, runID, "__temporal_workflow_metadata")
	require.NoError(e.t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(e.t, v.Get(&md))
	return md.GetCurrentDetails()
}

// connectBehind creates an ECC connection whose connector is the proxy.
func (e *env) connectBehind(d *downConnector, name string) string {
	e.t.Helper()
	var conn connectionJSON
	require.Equal(e.t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections",
		map[string]any{"name": name, "system_type": "ECC", "connector_url": d.srv.URL}, &conn))
	require.Equal(e.t, http.StatusOK, e.do("PUT", "/api/workspaces/"+e.ws+"/connections/"+conn.ID+"/secrets/connector_key",
		map[string]any{"value": sapsim.ECCConnectorKey}, nil))
	return conn.ID
}

func TestSyncWaitingForADownConnectorIsShownCancellableAndClears(t *testing.T) {
	t.Parallel()
	e, _, _ := sapEnv(t, nil)
	d := newDownConnector(t, e.stack.SAPSimURL+"/ECC")
	ws := e.dial0Workspace()

	// Down from the start: within seconds the run says what it waits for.
	d.down.Store(true)
	conn := e.connectBehind(d, "ECC behind a gateway")
	began := time.Now()
	runID, code := e.startSync(conn, "full")
	require.Equal(t, http.StatusAccepted, code)
	w := e.awaitWaiting(runID, 2, 15*time.Second)
	t.Logf("waiting shown after %s: %+v", time.Since(began).Round(time.Millisecond), *w)
	assert.Contains(t, w.Reason, "SYSTEM_UNAVAILABLE")
	assert.Contains(t, w.Reason, "RFC destination ECC_100 is down")
	assert.NotContains(t, w.Reason, sapsim.ECCConnectorKey, "the connector key is never shown")
	assert.NotContains(t, w.Reason, "\n")
	assert.Equal(t, "probe", w.Phase)
	assert.WithinDuration(t, began, w.Since, 10*time.Second)
	first := w.Since
	w = e.awaitWaiting(runID, w.Attempt+1, 20*time.Second)
	assert.Equal(t, first, w.Since, "since stays when the wait goes on")

	// The workflow knows it too: the run's live progress and the Temporal UI's current details.
	var live struct {
		Progress struct {
			Status  string           `json:"status"`
			Waiting *syncWaitingJSON `json:"waiting"`
		} `json:"progress"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/sync-runs/"+runID, nil, &live))
	require.NotNil(t, live.Progress.Waiting, "the workflow's progress shows the wait")
	assert.Equal(t, "probe", live.Progress.Waiting.Phase)
	assert.Equal(t, first, live.Progress.Waiting.Since)
	assert.Contains(t, e.currentDetails("sync/"+conn, runID), "waiting for SAP: SYSTEM_UNAVAILABLE: RFC destination ECC_100 is down")

	// The workspace stream carries the wait.
	evs := ws.until(10*time.Second, func(ev event) bool { return ev.Type == "sync_waiting" && ev.RunID == runID })
	var waiting struct {
		Reason  string `json:"reason"`
		Attempt int32  `json:"attempt"`
		Since   string `json:"since"`
		Phase   string `json:"phase"`
	}
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Raw, &waiting))
	assert.Contains(t, waiting.Reason, "SYSTEM_UNAVAILABLE")
	assert.Positive(t, waiting.Attempt)
	assert.NotEmpty(t, waiting.Since)
	assert.Equal(t, "probe", waiting.Phase)

	// Cancel ends the waiting run at once, as cancelled, its wait gone.
	cancelAt := time.Now()
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/workspaces/"+e.ws+"/sync-runs/"+runID+"/cancel", nil, nil))
	r := e.awaitSync(runID, 15*time.Second)
	took := time.Since(cancelAt)
	t.Logf("cancelled after %s", took.Round(time.Millisecond))
	assert.Equal(t, "cancelled", r.Status)
	assert.Less(t, took, 10*time.Second, "the cancel ends a waiting run promptly")
	// Replayed by package workflows: a run waiting for SAP (sync_waiting), then cancelled.
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, workflows.SyncWorkflowID(conn), runID, "sync_waiting_cancelled_v1")
	_, w = e.syncRunWaiting(runID)
	assert.Nil(t, w, "a finished run waits for nothing")

	// Down, then back: the wait clears by itself and the run succeeds.
	second, code := e.startSync(conn, "full")
	require.Equal(t, http.StatusAccepted, code)
	e.awaitWaiting(second, 2, 15*time.Second)
	d.down.Store(false)
	evs = ws.until(30*time.Second, func(ev event) bool { return ev.Type == "sync_resumed" && ev.RunID == second })
	assert.Equal(t, "sync_resumed", evs[len(evs)-1].Type)
	r = e.awaitSync(second, 3*time.Minute)
	require.Equal(t, "succeeded", r.Status, r.Error)
	_, w = e.syncRunWaiting(second)
	assert.Nil(t, w)
	assert.False(t, strings.Contains(string(r.Phases), "failed"), "no phase failed: %s", r.Phases)
	// Replayed by package workflows: a run that waited for SAP, resumed and succeeded.
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, workflows.SyncWorkflowID(conn), second, "sync_waiting_resumed_v1")
}
