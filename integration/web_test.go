package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// The web chat's entry points on the API's address (issue 13): the page at / and the
// development sign-in.
func TestThePageAndTheDevelopmentSignIn(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)

	resp, err := http.Get(e.stack.APIURL + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "not a JSON 404 any more")
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.NotEmpty(t, resp.Header.Get("Content-Security-Policy"))
	assert.Contains(t, strings.ToLower(string(body)), "<!doctype html>")
	// Unknown API routes stay JSON.
	var apiErr struct{ Error, Code string }
	assert.Equal(t, http.StatusNotFound, e.doAs("", "GET", "/api/no-such-route", nil, &apiErr))
	assert.NotEmpty(t, apiErr.Code)

	// Sign in as a user name, then use the token.
	var signIn struct {
		Token string `json:"token"`
		User  string `json:"user"`
	}
	require.Equal(t, http.StatusOK, e.doAs("", "POST", "/api/dev/token", map[string]any{"user": "carol"}, &signIn))
	assert.Equal(t, "carol", signIn.User)
	var orgs struct {
		Data []any `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.doAs(signIn.Token, "GET", "/api/orgs", nil, &orgs))
	assert.Empty(t, orgs.Data, "carol sees none of alice's organizations")
	assert.Equal(t, http.StatusBadRequest, e.doAs("", "POST", "/api/dev/token", map[string]any{"user": "../etc"}, &apiErr))
	assert.Equal(t, "invalid_user", apiErr.Code)
	assert.Equal(t, http.StatusBadRequest, e.doAs("", "POST", "/api/dev/token", map[string]any{"user": ""}, nil))
}

func TestProductionHasNoDevelopmentSignIn(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.Environment = "production" })
	var apiErr struct{ Error, Code string }
	assert.Equal(t, http.StatusNotFound, e.doAs("", "POST", "/api/dev/token", map[string]any{"user": "alice"}, &apiErr))
	assert.Equal(t, "not_found", apiErr.Code)
}
