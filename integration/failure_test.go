package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

func TestModelFailuresAreReportedAndTheConversationGoesOn(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.OfflineLLM.Rules = []offlinellm.Rule{
			{Name: "rejected", Match: "^too long$", FailStatus: http.StatusBadRequest},
			{Name: "outage", Match: "^outage$", FailStatus: http.StatusServiceUnavailable},
		}
	})
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	idle := func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" }

	// A request the model rejects is not retried: one error, then idle.
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "too long"}, nil))
	evs := ws.until(30*time.Second, idle)
	assert.Equal(t, 0, countType(evs, "retry"))
	require.Equal(t, 1, countType(evs, "error"))
	assert.Contains(t, string(findType(evs, "error").Raw), "model rejected the request (HTTP 400)")

	// An outage is retried by Temporal; clients are told to drop partial text each time.
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "outage"}, nil))
	evs = ws.until(60*time.Second, idle)
	assert.Equal(t, 2, countType(evs, "retry"), "attempts 2 and 3 announce themselves")
	assert.Equal(t, 1, countType(evs, "error"))

	// The conversation is still usable.
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "still there?"}, nil))
	ws.until(30*time.Second, isAssistantMessage)
	msgs := e.messages(agent.ID)
	assert.Equal(t, []string{"user", "user", "user", "assistant"}, roles(msgs), "failed turns store no assistant text")
}

func TestHealthIs503WhenRedisIsDown(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	srv, err := e.stack.Deps.APIServer(context.Background())
	require.NoError(t, err)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer dead.Close()
	srv.Bus = events.New(dead, events.Options{Prefix: e.cfg.RedisPrefix})
	srv.Hub = srv.Bus.NewHub()
	defer srv.Hub.Close()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/health", nil)
	srv.Router().ServeHTTP(rec, req)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.JSONEq(t, `{"status":"degraded","checks":{"postgres":"ok","redis":"unavailable","temporal":"ok"},"failed":["redis"]}`, rec.Body.String())

	// The socket refuses before upgrading rather than accepting a client it cannot serve.
	agent := e.createAgent("")
	rec = httptest.NewRecorder()
	wsReq := httptest.NewRequest("GET", "/api/agents/"+agent.ID+"/ws", nil)
	wsReq.Header.Set("Authorization", "Bearer "+e.token)
	srv.Router().ServeHTTP(rec, wsReq)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), `"code":"unavailable"`)
}

func countType(evs []event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func findType(evs []event, typ string) event {
	for _, ev := range evs {
		if ev.Type == typ {
			return ev
		}
	}
	return event{}
}
