package integration

// Fault suite, issue 18: a poisoned index page. A connector answering an index phase with
// deep JSON, a NUL, more than 64 MiB or a cursor it sent before used to make the sync retry
// forever. The run must fail with the reason in under a minute, its progress events must say
// so, and the index of the previous sync must stay readable.

import (
	"fmt"
	"io"
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

	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// poisonProxy passes a connector's calls to the simulator, and while poison is set answers the
// relationships phase (the second) with it instead.
type poisonProxy struct {
	sim    http.Handler
	poison atomic.Pointer[func(w http.ResponseWriter, r *http.Request)]
}

func (p *poisonProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f := p.poison.Load(); f != nil && strings.HasSuffix(r.URL.Path, "/index/relationships") {
		(*f)(w, r)
		return
	}
	p.sim.ServeHTTP(w, r)
}

func poisonJSON(raw string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, raw)
	}
}

func TestFaultSuitePoisonedIndexPage(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	target, err := url.Parse(e.stack.SAPSimURL)
	require.NoError(t, err)
	proxy := &poisonProxy{sim: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	var conn connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections",
		map[string]any{"name": "S4", "system_type": "S4HANA", "connector_url": srv.URL + "/S4H"}, &conn))
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/workspaces/"+e.ws+"/connections/"+conn.ID+"/secrets/connector_key",
		map[string]any{"value": sapsim.S4HConnectorKey}, nil))

	// A clean sync first: the index the poisoned ones must leave readable.
	run, code := e.startSync(conn.ID, "full")
	require.Equal(t, http.StatusAccepted, code)
	good := e.awaitSync(run, 3*time.Minute)
	require.Equal(t, "succeeded", good.Status, good.Error)
	objects := func() (int64, int64) {
		var d struct {
			Data []struct {
				Objects    int64 `json:"objects"`
				Generation int64 `json:"generation"`
			} `json:"data"`
		}
		require.Equal(t, http.StatusOK, e.do("GET", "/api/workspaces/"+e.ws+"/dashboard", nil, &d))
		require.Len(t, d.Data, 1)
		return d.Data[0].Objects, d.Data[0].Generation
	}
	before, generation := objects()
	require.Positive(t, before)

	deep := `{"data":{"items":[{"from_type":"PROG","from":"Z","to":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}],"next_cursor":"x"}}`
	huge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":{"items":[{"from":"`)
		chunk := strings.Repeat("x", 1<<20)
		for range 65 {
			_, _ = io.WriteString(w, chunk)
		}
		_, _ = io.WriteString(w, `"}],"next_cursor":"x"}}`)
	}
	var loopCalls atomic.Int64
	loop := func(w http.ResponseWriter, r *http.Request) { // c1 → c2 → c1 …
		next := []string{"c1", "c2"}[loopCalls.Add(1)%2]
		poisonJSON(`{"data":{"items":[{"from_type":"PROG","from":"ZLOOP","to_type":"TABL","to":"T000"}],"next_cursor":"`+next+`"}}`)(w, r)
	}
	for _, tc := range []struct {
		name   string
		poison func(w http.ResponseWriter, r *http.Request)
		reason string
	}{
		{"deep JSON", poisonJSON(deep), "nested more than 64 levels deep"},
		{"a NUL", poisonJSON(`{"data":{"items":[{"from_type":"PROG","from":"Z\u0000","to_type":"TABL","to":"T000"}],"next_cursor":"x"}}`), "NUL character"},
		{"more than 64 MiB", huge, "larger than 64 MiB"},
		{"a cursor loop", loop, "cursor loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := e.dial0Workspace()
			proxy.poison.Store(&tc.poison)
			defer proxy.poison.Store(nil)
			began := time.Now()
			run, code := e.startSync(conn.ID, "full")
			require.Equal(t, http.StatusAccepted, code)
			failed := e.awaitSync(run, time.Minute)
			took := time.Since(began)
			assert.Equal(t, "failed", failed.Status)
			assert.Contains(t, failed.Error, "index relationships: ")
			assert.Contains(t, failed.Error, tc.reason)
			assert.Less(t, took, time.Minute)
			t.Logf("%s: failed after %v: %s", tc.name, took.Round(time.Millisecond), failed.Error)

			finished := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "sync_finished" && ev.RunID == run })
			assert.Contains(t, string(finished[len(finished)-1].Raw), tc.reason, "the progress events say why")

			after, gen := objects()
			assert.Equal(t, before, after, "the previous index stays readable")
			assert.Equal(t, generation, gen)
		})
	}
	assert.Equal(t, http.StatusOK, e.do("GET", fmt.Sprintf("/api/workspaces/%s/dashboard/objects?connection_id=%s&limit=5", e.ws, conn.ID), nil, nil))
}
