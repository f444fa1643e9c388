package ops

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// OIDCConfig is the web chat's OpenID Connect sign-in: a public client (no secret) using the
// authorization code flow with PKCE against Issuer.
type OIDCConfig struct {
	Issuer   string
	ClientID string
	Scopes   string
	Audience string // optional: the authorize request's audience parameter (Auth0)
}

// authConfig tells the web page how to sign in (public: the page asks before it has a token):
// "oidc" with the client's settings when an issuer is configured (dev_sign_in says whether the
// development sign-in route exists too: a development server with OIDC), else "dev" when only
// the development route exists, else "none" (the page says sign-in is not configured).
func (s *Handler) authConfig(c *gin.Context) {
	c.Header("Cache-Control", "no-cache")
	switch {
	case s.OIDC != nil && s.OIDC.Issuer != "":
		body := gin.H{"mode": "oidc", "issuer": s.OIDC.Issuer, "client_id": s.OIDC.ClientID, "scopes": s.OIDC.Scopes,
			"dev_sign_in": s.DevTokens != nil}
		if s.OIDC.Audience != "" {
			body["audience"] = s.OIDC.Audience
		}
		c.JSON(http.StatusOK, body)
	case s.DevTokens != nil:
		c.JSON(http.StatusOK, gin.H{"mode": "dev"})
	default:
		c.JSON(http.StatusOK, gin.H{"mode": "none"})
	}
}

// ModelInfo is one model a user may pick for an agent (GET /api/models).
type ModelInfo struct {
	ID            string `json:"id"` // provider:model, what PATCH /api/agents/:id takes as model
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Default       bool   `json:"default"` // PRIMARY_MODEL: used by agents without a model of their own
	ContextTokens int    `json:"context_tokens"`
}

// listModels returns the models agents may use; each passes the same check as PATCH's model.
func (s *Handler) listModels(c *gin.Context) {
	out := make([]ModelInfo, 0, len(s.Models))
	for _, m := range s.Models {
		if s.ValidateModel == nil || s.ValidateModel(m.ID) == nil {
			out = append(out, m)
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": out})
}
