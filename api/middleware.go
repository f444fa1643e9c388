package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"

	"github.com/sapagent/sapagent/internal/auth"
)

const (
	userKey    = "sapagent.user"
	expiresKey = "sapagent.expires"
)

// userOf is the authenticated caller (the token's sub).
func userOf(c *gin.Context) string { return c.GetString(userKey) }

// expiryOf is when the caller's token expires (its exp claim): event streams end there.
func expiryOf(c *gin.Context) time.Time { return c.GetTime(expiresKey) }

// streamRoutes are the WebSocket and SSE routes: their browser APIs cannot set headers, so
// only they also take the token as the subprotocol pair "bearer, <jwt>" or ?access_token=.
// Elsewhere a token in the URL would end up in proxy logs, browser history and Referer headers.
var streamRoutes = map[string]bool{
	"/api/workspaces/:id/ws": true,
	"/api/agents/:id/ws":     true,
	"/api/agents/:id/events": true,
}

// authenticate accepts "Authorization: Bearer <jwt>"; on streamRoutes also the subprotocol
// pair or ?access_token=.
func (s *Server) authenticate(c *gin.Context) {
	stream := streamRoutes[c.FullPath()]
	token := bearerToken(c.Request, stream)
	if token == "" {
		c.Header("WWW-Authenticate", `Bearer realm="sapagent"`)
		if !stream && c.Query("access_token") != "" {
			fail(c, http.StatusUnauthorized, "unauthorized", "access_token in the URL is accepted only on WebSocket and SSE routes; send Authorization: Bearer <token>")
			return
		}
		fail(c, http.StatusUnauthorized, "unauthorized", "missing bearer token")
		return
	}
	id, err := s.Auth.Identify(token)
	if err != nil {
		var ae *auth.Error
		reason := "invalid token"
		if errors.As(err, &ae) {
			reason = ae.Reason
		}
		c.Header("WWW-Authenticate", `Bearer realm="sapagent", error="invalid_token"`)
		fail(c, http.StatusUnauthorized, "unauthorized", reason)
		return
	}
	c.Set(userKey, id.User)
	c.Set(expiresKey, id.Expires)
	c.Next()
}

func bearerToken(r *http.Request, stream bool) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	if !stream {
		return ""
	}
	if tok := websocketProtocolToken(r); tok != "" {
		return tok
	}
	return r.URL.Query().Get("access_token")
}

// websocketProtocolToken reads Sec-WebSocket-Protocol: bearer, <token>.
func websocketProtocolToken(r *http.Request) string {
	var parts []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			parts = append(parts, strings.TrimSpace(p))
		}
	}
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "bearer" {
			return parts[i+1]
		}
	}
	return ""
}

// sapReadRoutes are the GETs that call SAP connectors. They are rate-limited like mutations,
// on a budget of their own (same size), so a user cannot flood connectors through reads and
// polling connector health does not use up their writes.
var sapReadRoutes = map[string]bool{
	"/api/workspaces/:id/source":           true,
	"/api/workspaces/:id/connector-health": true,
}

// rateLimit allows RateLimitPerMinute mutating requests per user, and as many GETs that call
// SAP (GCRA in Redis). When Redis is unreachable or slow the request is allowed and the failure
// logged: an outage of the limiter must not take the API down (Redis being down already
// degrades health), and it must not make it slow either (checkLimit gives Redis
// RateLimitTimeout, then skips it a second).
func (s *Server) rateLimit(c *gin.Context) {
	budget, what := "ratelimit:", "changes"
	switch c.Request.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		if !sapReadRoutes[c.FullPath()] {
			c.Next()
			return
		}
		budget, what = "ratelimit-sap:", "SAP reads"
	}
	res, ok := s.checkLimit(c.Request.Context(), budget+userOf(c))
	if !ok {
		c.Next()
		return
	}
	c.Header("X-RateLimit-Limit", strconv.Itoa(s.RateLimitPerMinute))
	c.Header("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	if res.Allowed == 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
		fail(c, http.StatusTooManyRequests, "rate_limited",
			"too many "+what+": at most "+strconv.Itoa(s.RateLimitPerMinute)+" per minute; retry after the Retry-After seconds")
		return
	}
	c.Next()
}

// limiterPause is how long the limiter leaves Redis alone after a failed check: during an
// outage one mutation a second pays RateLimitTimeout, the others none.
const limiterPause = time.Second

// defaultRateLimitTimeout applies when RateLimitTimeout is unset.
const defaultRateLimitTimeout = 250 * time.Millisecond

// checkLimit takes one request from a budget ("ratelimit:" or "ratelimit-sap:" and a user ID). ok is false when the limiter is
// unavailable (Redis failed or did not answer within RateLimitTimeout, now or less than
// limiterPause ago); callers then allow the mutation (fail open).
func (s *Server) checkLimit(ctx context.Context, budget string) (*redis_rate.Result, bool) {
	return s.checkLimitOf(ctx, budget, s.RateLimitPerMinute)
}

// checkLimitOf takes one request from a budget of perMinute requests a minute (see checkLimit).
func (s *Server) checkLimitOf(ctx context.Context, budget string, perMinute int) (*redis_rate.Result, bool) {
	if time.Now().UnixNano() < s.limiterPausedUntil.Load() {
		return nil, false
	}
	timeout := s.RateLimitTimeout
	if timeout <= 0 {
		timeout = defaultRateLimitTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := s.Limiter.Allow(cctx, s.RedisPrefix+budget, redis_rate.PerMinute(perMinute))
	if err != nil {
		if ctx.Err() == nil { // the client leaving is no sign of an outage
			s.limiterPausedUntil.Store(time.Now().Add(limiterPause).UnixNano())
			s.Log.Warn("rate limiter unavailable, allowing mutations unchecked for a second", "error", err)
		}
		return nil, false
	}
	return res, true
}

// originAllowed checks a browser's Origin against ALLOWED_ORIGINS; non-browser clients send none.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	for _, o := range s.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// allowMutation is the rate limit for mutations that do not arrive as HTTP requests
// (WebSocket commands); it fails open, and fast, like the middleware.
func (s *Server) allowMutation(ctx context.Context, user string) (bool, time.Duration) {
	res, ok := s.checkLimit(ctx, "ratelimit:"+user)
	if !ok {
		return true, 0
	}
	return res.Allowed > 0, res.RetryAfter
}
