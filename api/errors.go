package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// apiError is the one error shape of the API: {"error": "...", "code": "..."}.
type apiError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func fail(c *gin.Context, status int, code, message string) {
	abort(c, status, apiError{Error: message, Code: code})
}

// retryAfterOutage is the Retry-After (seconds) of every 503: dependency outages are
// short-lived or long, and a client polling every few seconds sees the recovery soon enough.
const retryAfterOutage = "5"

// abort ends the request with an error body; every 503 says when to try again.
func abort(c *gin.Context, status int, body any) {
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", retryAfterOutage)
	}
	c.AbortWithStatusJSON(status, body)
}

func badRequest(c *gin.Context, code, message string) { fail(c, http.StatusBadRequest, code, message) }

func notFound(c *gin.Context, what string) {
	fail(c, http.StatusNotFound, "not_found", what+" not found")
}

// unavailable reports a dependency outage without leaking its internals to the client.
func unavailable(c *gin.Context, what string) {
	fail(c, http.StatusServiceUnavailable, "unavailable", what+" is unavailable, try again shortly")
}

// recovery turns a panic into a 500 in the API's error shape (and logs it) instead of a
// dropped connection.
func (s *Server) recovery() gin.HandlerFunc {
	return gin.CustomRecovery(func(c *gin.Context, recovered any) {
		s.Log.Error("handler panic", "path", c.FullPath(), "panic", recovered)
		fail(c, http.StatusInternalServerError, "internal", "internal error")
	})
}
