// Package connections answers a workspace's SAP connections, their secrets, each user's own SAP
// credentials, and the checks that a connector answers.
package connections

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/index"
	"github.com/sapagent/sapagent/api/liveconn"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the connection routes use.
type Handler struct {
	httpx.Deps
	Connections connectionStore
	Secrets     *secrets.Keyring
	Production  bool // ENVIRONMENT=production: connector URLs must be https and not loopback
	SAP         *sapconn.Resolver
	Live        liveconn.Live
	Syncs       *index.Syncs // a connection exists only with its sync schedules
}

// connectionStore is what the connection, secret and credential routes read and write.
type connectionStore interface {
	ListConnections(ctx context.Context, workspaceID uuid.UUID) ([]store.Connection, error)
	CreateConnection(ctx context.Context, c store.Connection) (store.Connection, error)
	UpdateConnection(ctx context.Context, c store.Connection) (store.ConnectionUpdate, error)
	DeleteConnection(ctx context.Context, workspaceID, id uuid.UUID) error
	ListConnectionSecretNames(ctx context.Context, connID uuid.UUID) ([]store.SecretName, error)
	SetConnectionSecret(ctx context.Context, connID uuid.UUID, name string, v store.SealedValue) error
	DeleteConnectionSecret(ctx context.Context, connID uuid.UUID, name string) error
	ListCredentials(ctx context.Context, user string) ([]store.Credential, error)
	SetCredential(ctx context.Context, user string, connID uuid.UUID, sapUser string, v store.SealedValue) (store.Credential, error)
	DeleteCredential(ctx context.Context, user string, connID uuid.UUID) error
}

// Mount adds the connection routes.
func (s *Handler) Mount(a *gin.RouterGroup) {
	// The connector checks resolve the workspace in their handlers (liveconn.Live, or after
	// reading the body), the routes of one connection together with it (Access.Connection).
	a.GET("/workspaces/:id/connector-health", s.connectorHealth)
	a.POST("/workspaces/:id/test-connection", s.testConnection)
	a.POST("/workspaces/:id/test-connection-preview", s.Access.Admin, s.testConnectionPreview)
	a.GET("/workspaces/:id/connections", s.Access.Member, s.listConnections)
	a.POST("/workspaces/:id/connections", s.Access.Admin, s.createConnection)
	a.GET("/workspaces/:id/connections/:connId", s.getConnection)
	a.PATCH("/workspaces/:id/connections/:connId", s.updateConnection)
	a.DELETE("/workspaces/:id/connections/:connId", s.deleteConnection)
	a.GET("/workspaces/:id/connections/:connId/secrets", s.listSecrets)
	a.PUT("/workspaces/:id/connections/:connId/secrets/:name", s.setSecret)
	a.DELETE("/workspaces/:id/connections/:connId/secrets/:name", s.deleteSecret)

	a.GET("/user/sap-credentials", s.listCredentials)
	a.PUT("/user/sap-credentials/:connId", s.setCredential)
	a.DELETE("/user/sap-credentials/:connId", s.deleteCredential)
}
