// Package ops answers the routes around the product rather than in it: health, how the page
// signs in, the development sign-in, the models agents may use, and the Temporal UI's codec.
package ops

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the operational routes use.
type Handler struct {
	Store    *store.Store // health: Postgres answers
	Bus      *events.Bus  // health: Redis answers
	Temporal client.Client
	Log      *slog.Logger
	Auth     *auth.Verifier // the codec authenticates operators itself

	Codec         CodecOptions
	DevTokens     func(user string) (token string, expires time.Time, err error)
	OIDC          *OIDCConfig
	Models        []ModelInfo
	ValidateModel func(ref string) error
}

// MountPublic adds the routes anyone may call, and the codec (authenticated by itself).
func (s *Handler) MountPublic(api *gin.RouterGroup) {
	api.GET("/health", s.health)
	api.GET("/auth/config", s.authConfig) // how the web page signs in (public)
	if s.DevTokens != nil {
		api.POST("/dev/token", s.devToken) // development sign-in (web chat); absent in production
	}
	// Authenticated by the codec itself (header or cookie, operators only); not rate-limited:
	// the UI decodes every event of a history it shows.
	s.codecRoutes(api)
}

// Mount adds the routes for signed-in callers.
func (s *Handler) Mount(a *gin.RouterGroup) {
	a.GET("/models", s.listModels)
}
