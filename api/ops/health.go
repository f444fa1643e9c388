package ops

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
)

// healthCheckTimeout bounds each dependency's check on its own: a hung one is named, and the
// others still report what they are.
const healthCheckTimeout = 2 * time.Second

// health reports whether every dependency answers; load balancers take 503 as "not ready".
// Postgres, Redis and Temporal are checked in parallel, each under its own deadline, so a
// dependency that hangs cannot use up another's time and be blamed on it; "failed" names the
// dependencies that did not answer.
func (s *Handler) health(c *gin.Context) {
	probes := []struct {
		name string
		ping func(context.Context) error
	}{
		{"postgres", func(ctx context.Context) error { return s.Store.Pool.Ping(ctx) }},
		{"redis", func(ctx context.Context) error { return s.Bus.Ping(ctx) }},
		{"temporal", func(ctx context.Context) error {
			_, err := s.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
	}
	// Each probe gets its deadline; the answer does not wait for a probe that ignores it.
	type result struct {
		i   int
		err error
	}
	answers := make(chan result, len(probes))
	for i, p := range probes {
		go func() {
			ctx, cancel := context.WithTimeout(c.Request.Context(), healthCheckTimeout)
			defer cancel()
			answers <- result{i, p.ping(ctx)}
		}()
	}
	ok := make([]bool, len(probes))
	deadline := time.NewTimer(healthCheckTimeout + 100*time.Millisecond)
	defer deadline.Stop()
collect:
	for range probes {
		select {
		case r := <-answers:
			ok[r.i] = r.err == nil
		case <-deadline.C:
			break collect
		}
	}
	checks := map[string]string{}
	failed := []string{}
	for i, p := range probes {
		checks[p.name] = "ok"
		if !ok[i] {
			checks[p.name] = "unavailable"
			failed = append(failed, p.name)
		}
	}
	status, word := http.StatusOK, "ok"
	if len(failed) > 0 {
		status, word = http.StatusServiceUnavailable, "degraded"
		c.Header("Retry-After", httpx.RetryAfterOutage)
	}
	c.JSON(status, gin.H{"status": word, "checks": checks, "failed": failed})
}
