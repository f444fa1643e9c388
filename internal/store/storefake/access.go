package storefake

import (
	"context"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

// NoConnections is the connection lookup of the access checks for tests without connections:
// every connection is store.ErrNotFound, as in a workspace that has none.
type NoConnections struct{}

// GetConnection finds no connection.
func (NoConnections) GetConnection(context.Context, uuid.UUID, uuid.UUID) (store.Connection, error) {
	return store.Connection{}, store.ErrNotFound
}

// Access is what httpx.Access reads, over a Tenancy without connections.
type Access struct {
	*Tenancy
	NoConnections
}
