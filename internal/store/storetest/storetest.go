// Package storetest gives a test a Postgres database of its own (TEST_DATABASE_URL's server,
// default the local one), migrated, and dropped when the test ends.
package storetest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/store"
)

// New returns an open store on a fresh database and its URL.
func New(t testing.TB) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/sapagent_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	dbURL := u.String()
	require.NoError(t, store.EnsureDatabase(ctx, dbURL))
	t.Cleanup(func() { _ = store.DropDatabase(context.Background(), dbURL) })
	require.NoError(t, store.Migrate(ctx, dbURL))
	st, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st, dbURL
}

// Agent creates an org and a workspace owned by alice and one agent in it.
func Agent(t testing.TB, st *store.Store) store.Agent {
	t.Helper()
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	tx, err := st.Pool.Begin(ctx)
	require.NoError(t, err)
	agent, err := store.CreateAgent(ctx, tx, store.Agent{ID: uuid.New(), WorkspaceID: ws.ID, Name: "agent", CreatedBy: "alice"})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return agent
}
