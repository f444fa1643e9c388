package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

// Issue 10: init sent the oldest 500 messages, so a client reconnecting to a long conversation
// did not see its latest messages. It sends the newest, in order.
func TestInitSnapshotHoldsTheNewestMessages(t *testing.T) {
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/sapagent_snapshot_" + uuid.NewString()[:8]
	dbURL := u.String()
	require.NoError(t, store.EnsureDatabase(ctx, dbURL))
	defer store.DropDatabase(ctx, dbURL) //nolint:errcheck
	require.NoError(t, store.Migrate(ctx, dbURL))
	st, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	defer st.Close()

	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	tx, err := st.Pool.Begin(ctx)
	require.NoError(t, err)
	agent, err := store.CreateAgent(ctx, tx, store.Agent{ID: uuid.New(), WorkspaceID: ws.ID, Name: "long", CreatedBy: "alice"})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	var msgs []store.Message
	for i := 1; i <= initMessageLimit+120; i++ {
		msgs = append(msgs, store.Message{ID: uuid.New(), AgentID: agent.ID, Seq: int64(i), Role: "user", Content: fmt.Sprint("message ", i)})
	}
	require.NoError(t, st.SaveMessages(ctx, msgs))

	// An idle agent's snapshot needs neither Temporal nor the event log.
	s := &Server{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	init, err := s.snapshot(ctx, agent, events.AgentTopic(agent.ID.String()), 0)
	require.NoError(t, err)
	got := init["messages"].([]store.Message)
	require.Len(t, got, initMessageLimit)
	assert.Equal(t, "message 121", got[0].Content)
	assert.Equal(t, fmt.Sprint("message ", initMessageLimit+120), got[len(got)-1].Content)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].Seq, got[i].Seq, "in seq order")
	}
}
