package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/ops"
	"github.com/sapagent/sapagent/internal/auth"
)

func getJSON(t *testing.T, h http.Handler, path, token string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

// The page learns how to sign in without a token: OIDC when configured (saying whether the
// development sign-in exists too), else development sign-in when its route exists, else none.
func TestAuthConfigModes(t *testing.T) {
	devTokens := func(string) (string, time.Time, error) { return "", time.Time{}, nil }
	dev := &Server{DevTokens: devTokens}
	code, body := getJSON(t, dev.Router(), "/api/auth/config", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"mode": "dev"}, body)

	// A development server with OIDC configured: OIDC wins, the development route stays.
	devOIDC := &Server{DevTokens: devTokens, OIDC: &ops.OIDCConfig{Issuer: "http://127.0.0.1:9000", ClientID: "web", Scopes: "openid"}}
	_, body = getJSON(t, devOIDC.Router(), "/api/auth/config", "")
	assert.Equal(t, map[string]any{"mode": "oidc", "issuer": "http://127.0.0.1:9000", "client_id": "web", "scopes": "openid",
		"dev_sign_in": true}, body)

	prod := &Server{OIDC: &ops.OIDCConfig{Issuer: "https://login.example.com", ClientID: "web", Scopes: "openid profile email", Audience: "https://api.example.com"}}
	_, body = getJSON(t, prod.Router(), "/api/auth/config", "")
	assert.Equal(t, map[string]any{"mode": "oidc", "issuer": "https://login.example.com", "client_id": "web",
		"scopes": "openid profile email", "audience": "https://api.example.com", "dev_sign_in": false}, body)

	prod.OIDC.Audience = ""
	_, body = getJSON(t, prod.Router(), "/api/auth/config", "")
	assert.NotContains(t, body, "audience")

	_, body = getJSON(t, (&Server{}).Router(), "/api/auth/config", "")
	assert.Equal(t, map[string]any{"mode": "none"}, body)
}

// GET /api/models needs a token and lists only what the model check accepts.
func TestModelsListsWhatValidationAccepts(t *testing.T) {
	secret := []byte("models-test-secret-0123456789abcdef")
	v, err := auth.NewVerifier(context.Background(), auth.Options{Secret: secret})
	require.NoError(t, err)
	s := &Server{Auth: v, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Models: []ops.ModelInfo{
			{ID: "offline:sapagent-offline", Provider: "offline", Model: "sapagent-offline", Default: true, ContextTokens: 32000},
			{ID: "gone:model", Provider: "gone", Model: "model", ContextTokens: 32000},
		},
		ValidateModel: func(ref string) error {
			if ref == "gone:model" {
				return assert.AnError
			}
			return nil
		}}
	code, body := getJSON(t, s.Router(), "/api/models", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "unauthorized", body["code"])

	tok, err := auth.Mint(secret, "alice", time.Hour, "", "")
	require.NoError(t, err)
	code, body = getJSON(t, s.Router(), "/api/models", tok)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []any{map[string]any{"id": "offline:sapagent-offline", "provider": "offline", "model": "sapagent-offline",
		"default": true, "context_tokens": float64(32000)}}, body["data"])
}
