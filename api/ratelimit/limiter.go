// Package ratelimit is the per-user budgets of the API in Redis (GCRA). It fails open, and
// fast: an outage of the limiter must not take the API down (Redis being down already degrades
// health), and it must not make it slow either.
package ratelimit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// Limiter takes requests from budgets of PerMinute a minute unless a check says otherwise.
type Limiter struct {
	Redis     *redis_rate.Limiter
	Prefix    string // the deployment's Redis key prefix
	PerMinute int
	Timeout   time.Duration // longest wait for the limiter's Redis before failing open
	Log       *slog.Logger

	pausedUntil atomic.Int64 // unix ns: the limiter skips Redis until then after a failure
}

// limiterPause is how long the limiter leaves Redis alone after a failed check: during an
// outage one mutation a second pays Timeout, the others none.
const limiterPause = time.Second

// defaultTimeout applies when Timeout is unset.
const defaultTimeout = 250 * time.Millisecond

// Check takes one request from a budget ("ratelimit:" or "ratelimit-sap:" and a user ID). ok is false when the limiter is
// unavailable (Redis failed or did not answer within Timeout, now or less than
// limiterPause ago); callers then allow the mutation (fail open).
func (l *Limiter) Check(ctx context.Context, budget string) (*redis_rate.Result, bool) {
	return l.CheckOf(ctx, budget, l.PerMinute)
}

// CheckOf takes one request from a budget of perMinute requests a minute (see Check).
func (l *Limiter) CheckOf(ctx context.Context, budget string, perMinute int) (*redis_rate.Result, bool) {
	if time.Now().UnixNano() < l.pausedUntil.Load() {
		return nil, false
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := l.Redis.Allow(cctx, l.Prefix+budget, redis_rate.PerMinute(perMinute))
	if err != nil {
		if ctx.Err() == nil { // the client leaving is no sign of an outage
			l.pausedUntil.Store(time.Now().Add(limiterPause).UnixNano())
			l.Log.Warn("rate limiter unavailable, allowing mutations unchecked for a second", "error", err)
		}
		return nil, false
	}
	return res, true
}

// AllowMutation is the rate limit for mutations that do not arrive as HTTP requests
// (WebSocket commands); it fails open, and fast, like the middleware.
func (l *Limiter) AllowMutation(ctx context.Context, user string) (bool, time.Duration) {
	res, ok := l.Check(ctx, "ratelimit:"+user)
	if !ok {
		return true, 0
	}
	return res.Allowed > 0, res.RetryAfter
}
