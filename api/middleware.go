package api

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/auth"
)

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
			httpx.Fail(c, http.StatusUnauthorized, "unauthorized", "access_token in the URL is accepted only on WebSocket and SSE routes; send Authorization: Bearer <token>")
			return
		}
		httpx.Fail(c, http.StatusUnauthorized, "unauthorized", "missing bearer token")
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
		httpx.Fail(c, http.StatusUnauthorized, "unauthorized", reason)
		return
	}
	httpx.SetCaller(c, id.User, id.Expires)
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
	res, ok := s.limiter.Check(c.Request.Context(), budget+httpx.User(c))
	if !ok {
		c.Next()
		return
	}
	c.Header("X-RateLimit-Limit", strconv.Itoa(s.limiter.PerMinute))
	c.Header("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	if res.Allowed == 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
		httpx.Fail(c, http.StatusTooManyRequests, "rate_limited",
			"too many "+what+": at most "+strconv.Itoa(s.limiter.PerMinute)+" per minute; retry after the Retry-After seconds")
		return
	}
	c.Next()
}
