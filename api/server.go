// Package api is the HTTP tier: gin router, handlers, and the WebSocket relay of conversation
// events. It is stateless: state lives in Postgres, Redis and Temporal.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

// Server holds the API's dependencies.
type Server struct {
	Store           *store.Store
	Bus             *events.Bus
	Temporal        client.Client
	TaskQueue       string
	MaxMessageBytes int
	IdleTimeout     time.Duration
	Log             *slog.Logger
}

// Router builds the gin engine with every route.
func (s *Server) Router() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(s.recovery())
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) { notFound(c, "route") })
	r.NoMethod(func(c *gin.Context) { fail(c, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed") })

	api := r.Group("/api")
	api.GET("/health", s.health)
	api.POST("/agents", s.createAgent)
	api.GET("/agents/:id", s.getAgent)
	api.POST("/agents/:id/message", s.sendMessage)
	api.GET("/agents/:id/messages", s.listMessages)
	api.GET("/agents/:id/ws", s.agentSocket)
	return r
}

// health reports whether every dependency answers; load balancers take 503 as "not ready".
func (s *Server) health(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "redis": "ok", "temporal": "ok"}
	healthy := true
	if err := s.Store.Pool.Ping(ctx); err != nil {
		checks["postgres"], healthy = "unavailable", false
	}
	if err := s.Bus.Ping(ctx); err != nil {
		checks["redis"], healthy = "unavailable", false
	}
	if _, err := s.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		checks["temporal"], healthy = "unavailable", false
	}
	status, word := http.StatusOK, "ok"
	if !healthy {
		status, word = http.StatusServiceUnavailable, "degraded"
	}
	c.JSON(status, gin.H{"status": word, "checks": checks})
}
