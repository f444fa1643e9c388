package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// answer is one HTTP exchange as a client sees it, with how long it took.
type answer struct {
	status int
	header http.Header
	body   []byte
	took   time.Duration
}

func (a answer) code() string {
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

// request sends a JSON request as alice and returns status, headers, body and duration.
func (e *env) request(method, path string, body any) answer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.stack.APIURL+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: raw, took: time.Since(start)}
}

// assertUnavailable checks a 503 in the API's error shape that tells the client when to retry.
func assertUnavailable(t *testing.T, a answer, what string) {
	t.Helper()
	assert.Equal(t, http.StatusServiceUnavailable, a.status, "%s: %s", what, a.body)
	assert.Equal(t, "unavailable", a.code(), "%s: %s", what, a.body)
	retry, err := strconv.Atoi(a.header.Get("Retry-After"))
	assert.NoError(t, err, "%s: Retry-After %q", what, a.header.Get("Retry-After"))
	assert.Positive(t, retry, what)
}

// While the rate limiter's Redis is down or hung, mutations still go through (the limiter
// fails open) and are not slowed by it: each answers within about a second, not after the
// Redis client's dial and read timeouts and retries.
func TestRedisOutageLeavesMutationsFastAndUnlimited(t *testing.T) {
	// Serial: asserts mutations answer within 1.5 s (see TestMain).
	rd := startPrivateRedis(t)
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) {
		c.RedisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", rd.port)
	})
	agent := e.createAgent("before")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second) // init

	rename := func(i int) answer {
		return e.request("PATCH", "/api/agents/"+agent.ID, map[string]any{"name": "renamed " + strconv.Itoa(i)})
	}
	limited := func() bool { return rename(0).header.Get("X-RateLimit-Remaining") != "" }
	require.True(t, limited(), "the limiter answers while Redis is up")

	fastMutations := func(phase string) {
		for i := 1; i <= 3; i++ {
			a := rename(i)
			require.Equal(t, http.StatusOK, a.status, "%s: %s", phase, a.body)
			assert.Less(t, a.took, 1500*time.Millisecond, "%s: mutation %d waited for the rate limiter", phase, i)
			assert.Empty(t, a.header.Get("X-RateLimit-Remaining"), "%s: no limit was checked", phase)
		}
		// A WebSocket command goes through the same limiter.
		start := time.Now()
		require.NoError(t, ws.conn.WriteJSON(map[string]any{"type": "stop", "request_id": phase}))
		for {
			ev := ws.next(5 * time.Second)
			if ev.Type == "ack" || ev.Type == "command_error" {
				var ack struct {
					RequestID  string `json:"request_id"`
					HTTPStatus int    `json:"http_status"`
				}
				require.NoError(t, json.Unmarshal(ev.Raw, &ack))
				require.Equal(t, phase, ack.RequestID)
				assert.Equal(t, http.StatusOK, ack.HTTPStatus, "%s: %s", phase, ev.Raw)
				break
			}
		}
		assert.Less(t, time.Since(start), 1500*time.Millisecond, "%s: the stop command waited for the rate limiter", phase)
	}

	// Hung: the server accepts connections but never answers.
	require.NoError(t, rd.cmd.Process.Signal(syscall.SIGSTOP))
	fastMutations("redis hung")
	require.NoError(t, rd.cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, limited, 10*time.Second, 200*time.Millisecond, "the limiter is back after Redis answers again")

	// Down: connections are refused.
	rd.stop()
	fastMutations("redis down")
	rd.start()
	require.Eventually(t, limited, 10*time.Second, 200*time.Millisecond, "the limiter is back after Redis restarts")
}

// While Temporal is unreachable, requests that need it answer 503 with Retry-After within
// TEMPORAL_CALL_TIMEOUT instead of hanging for a minute; once it is back everything works, and
// a message retried with the same client_message_id is delivered once.
func TestTemporalOutageAnswers503QuicklyAndRecovers(t *testing.T) {
	// Serial: asserts answers within seconds (see TestMain).
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) {
		c.TemporalCallTimeout = 2 * time.Second
	})
	agent := e.createAgent("outage")
	base := "/api/agents/" + agent.ID

	e.stack.StopTemporal()
	msgID := uuid.NewString()
	message := map[string]any{"content": "hello after the outage", "client_message_id": msgID}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", base + "/message", message},
		{"POST", base + "/stop", nil},
		{"POST", "/api/agents", map[string]any{"name": "new", "workspace_id": e.ws}},
	} {
		a := e.request(c.method, c.path, c.body)
		assertUnavailable(t, a, c.path)
		assert.Less(t, a.took, 8*time.Second, "%s hung while Temporal was down", c.path)
	}
	health := e.request("GET", "/api/health", nil)
	assertUnavailable(t, answer{status: health.status, header: health.header, body: []byte(`{"code":"unavailable"}`)}, "health")
	var agents struct {
		Data []agentJSON `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents?workspace_id="+e.ws, nil, &agents))
	assert.Len(t, agents.Data, 1, "an agent whose conversation could not start is not kept")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, e.stack.StartTemporal(ctx))

	// The client retries with the same client_message_id until it is accepted.
	require.Eventually(t, func() bool {
		return e.request("POST", base+"/message", message).status == http.StatusAccepted
	}, 90*time.Second, 500*time.Millisecond, "sending works again once Temporal is back")
	require.Equal(t, http.StatusAccepted, e.request("POST", base+"/message", message).status, "a second retry is accepted too")
	require.Eventually(t, func() bool {
		msgs := e.messages(agent.ID)
		return len(msgs) == 2 && msgs[1].Status == "complete"
	}, 60*time.Second, 200*time.Millisecond, "the turn runs once")
	msgs := e.messages(agent.ID)
	assert.Equal(t, "user", msgs[0].Role)
	assert.Equal(t, "assistant", msgs[1].Role)
	assert.Equal(t, http.StatusOK, e.request("POST", base+"/stop", nil).status)
	assert.Equal(t, http.StatusOK, e.request("GET", "/api/health", nil).status)
}
