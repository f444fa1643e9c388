// Package httpx holds what every API domain answers with: the error shape {"error","code"},
// strict JSON bodies, list envelopes and paging, the caller's identity, and the workspace and
// organization access checks.
package httpx

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Error is the one error shape of the API: {"error": "...", "code": "..."}.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// Fail ends the request with the error shape.
func Fail(c *gin.Context, status int, code, message string) {
	Abort(c, status, Error{Error: message, Code: code})
}

// RetryAfterOutage is the Retry-After (seconds) of every 503: dependency outages are
// short-lived or long, and a client polling every few seconds sees the recovery soon enough.
const RetryAfterOutage = "5"

// Abort ends the request with an error body; every 503 says when to try again.
func Abort(c *gin.Context, status int, body any) {
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", RetryAfterOutage)
	}
	c.AbortWithStatusJSON(status, body)
}

// BadRequest is a 400 in the error shape.
func BadRequest(c *gin.Context, code, message string) { Fail(c, http.StatusBadRequest, code, message) }

// NotFound is a 404 that names what was not found.
func NotFound(c *gin.Context, what string) {
	Fail(c, http.StatusNotFound, "not_found", what+" not found")
}

// Unavailable reports a dependency outage without leaking its internals to the client.
func Unavailable(c *gin.Context, what string) {
	Fail(c, http.StatusServiceUnavailable, "unavailable", what+" is unavailable, try again shortly")
}
