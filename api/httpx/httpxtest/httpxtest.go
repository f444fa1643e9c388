// Package httpxtest runs a domain's routes in a test without the server: gin with a stand-in
// for authentication, requests as a named user, and assertions on the API's error shape.
package httpxtest

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
)

// Deps are a handler's shared dependencies over access's store, logging nowhere and with no
// Temporal (routes that reach Temporal are not for these tests).
func Deps(access httpx.AccessStore) httpx.Deps {
	log := slog.New(slog.DiscardHandler)
	return httpx.Deps{Access: httpx.Access{Store: access, Log: log}, Log: log}
}

// Client sends requests to routes mounted under /api; the caller is the user it names.
type Client struct {
	t *testing.T
	r *gin.Engine
}

// New mounts routes under /api behind a stand-in for authentication.
func New(t *testing.T, mount func(*gin.RouterGroup)) Client {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	mount(r.Group("/api", func(c *gin.Context) { httpx.SetCaller(c, c.GetHeader("X-User"), time.Now().Add(time.Hour)) }))
	return Client{t, r}
}

// Send sends req as user: the status and the JSON body decoded (nil when it is not JSON).
func (c Client) Send(user string, req *http.Request) (int, map[string]any) {
	c.t.Helper()
	req.Header.Set("X-User", user)
	w := httptest.NewRecorder()
	c.r.ServeHTTP(w, req)
	var out map[string]any
	if w.Body.Len() > 0 && w.Header().Get("Content-Type") == "application/json; charset=utf-8" {
		require.NoError(c.t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	}
	return w.Code, out
}

// Do sends a JSON body ("" for none) as user.
func (c Client) Do(user, method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	return c.Send(user, req)
}

// OK asserts the status of a request and returns its body.
func (c Client) OK(user, method, path, body string, status int) map[string]any {
	c.t.Helper()
	got, out := c.Do(user, method, path, body)
	require.Equal(c.t, status, got, "%s %s: %v", method, path, out)
	return out
}

// Fails asserts a request's answer in the API's error shape.
func (c Client) Fails(user, method, path, body string, status int, code, message string) {
	c.t.Helper()
	Failed(c.t, status, code, message)(c.Do(user, method, path, body))
}

// Failed asserts an answer (status and body) in the API's error shape.
func Failed(t *testing.T, status int, code, message string) func(int, map[string]any) {
	return func(got int, out map[string]any) {
		t.Helper()
		require.Equal(t, status, got, "%v", out)
		require.Equal(t, map[string]any{"error": message, "code": code}, out)
	}
}
