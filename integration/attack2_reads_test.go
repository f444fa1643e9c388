package integration

// Attack campaign 2 (issue 18), the reads: finding 12, /api/health blamed Temporal when Redis
// hung (three checks in a row under one 2 s deadline). Findings 4 (index reads) are covered
// in api/landscape_budget_test.go, internal/landscape; finding 6 in faultsuite2_reads_test.go.

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api"
	"github.com/sapagent/sapagent/internal/events"
)

// hungListener accepts TCP connections and never answers: a Redis that hangs.
func hungListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

type healthJSON struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
	Failed []string          `json:"failed"`
}

func getHealth(t *testing.T, h http.Handler) (int, healthJSON, time.Duration) {
	began := time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/health", nil))
	took := time.Since(began)
	var out healthJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return rec.Code, out, took
}

// TestAttack2HealthNamesAHungRedis: an API process whose Redis accepts connections and never
// answers reports Redis, and only Redis, as failed; Temporal and Postgres (real, answering)
// stay ok, and the answer comes within the one check's deadline.
func TestAttack2HealthNamesAHungRedis(t *testing.T) {
	// Serial: asserts the health checks answer within 3 s (see TestMain).
	e := startEnv(t, nil)
	code, body, _ := getHealth(t, e.stack.API.Router())
	require.Equal(t, http.StatusOK, code, "%+v", body)
	assert.Empty(t, body.Failed)

	// The same process's dependencies, but a "Redis" at a private address that hangs, with the
	// client options the product uses (deadlines from the context).
	rdb := redis.NewClient(&redis.Options{Addr: hungListener(t), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	srv := &api.Server{Store: e.stack.API.Store, Bus: events.New(rdb, events.Options{}), Temporal: e.stack.API.Temporal,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	code, body, took := getHealth(t, srv.Router())
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "degraded", body.Status)
	assert.Equal(t, map[string]string{"postgres": "ok", "redis": "unavailable", "temporal": "ok"}, body.Checks, "the hung Redis is not blamed on Temporal")
	assert.Equal(t, []string{"redis"}, body.Failed)
	assert.Less(t, took, 3*time.Second, "the checks run side by side, each under its own deadline")
}
