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

	"github.com/sapagent/sapagent/internal/secrets"
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

// Workspace creates an org "Acme" and its workspace "Finance", both owned by owner.
func Workspace(t testing.TB, st *store.Store, owner string) store.Workspace {
	t.Helper()
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, "Acme", owner)
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", owner)
	require.NoError(t, err)
	return ws
}

// ConnectorKey seals key with keys and stores it as the connection's connector key.
func ConnectorKey(t testing.TB, st *store.Store, keys *secrets.Keyring, connectionID uuid.UUID, key string) {
	t.Helper()
	kid, ct := keys.Seal([]byte(key), secrets.ConnectionSecretAAD(connectionID.String(), "connector_key"))
	require.NoError(t, st.SetConnectionSecret(context.Background(), connectionID, "connector_key", store.SealedValue{KeyID: kid, Ciphertext: ct}))
}

// Login seals password with keys and stores it as user's SAP login (sapUser) for the connection.
func Login(t testing.TB, st *store.Store, keys *secrets.Keyring, user string, connectionID uuid.UUID, sapUser, password string) {
	t.Helper()
	kid, ct := keys.Seal([]byte(password), secrets.CredentialAAD(user, connectionID.String()))
	_, err := st.SetCredential(context.Background(), user, connectionID, sapUser, store.SealedValue{KeyID: kid, Ciphertext: ct})
	require.NoError(t, err)
}
