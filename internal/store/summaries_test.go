package store

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/schemas"
)

// testStore migrates a fresh database of its own and drops it after the test.
func testStore(t *testing.T) (*Store, string) {
	t.Helper()
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/sapagent_store_" + uuid.NewString()[:8]
	dbURL := u.String()
	require.NoError(t, EnsureDatabase(ctx, dbURL))
	t.Cleanup(func() { _ = DropDatabase(context.Background(), dbURL) })
	require.NoError(t, Migrate(ctx, dbURL))
	st, err := Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st, dbURL
}

func testAgent(t *testing.T, st *Store) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	tx, err := st.Pool.Begin(ctx)
	require.NoError(t, err)
	a, err := CreateAgent(ctx, tx, Agent{ID: uuid.New(), WorkspaceID: ws.ID, Name: "long", CreatedBy: "alice"})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return a.ID
}

func saveTurns(t *testing.T, st *Store, agent uuid.UUID, from, to int) {
	t.Helper()
	var msgs []Message
	for i := from; i <= to; i++ {
		msgs = append(msgs, Message{ID: uuid.New(), AgentID: agent, Seq: int64(i), Role: "user", Content: fmt.Sprint("message ", i)})
	}
	require.NoError(t, st.SaveMessages(context.Background(), msgs))
}

// The finding of issue 10: loading "the newest rows" must return the newest, in order.
func TestListRecentMessagesReturnsTheNewestInOrder(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	agent := testAgent(t, st)
	other := testAgent(t, st)
	saveTurns(t, st, agent, 1, 1200)
	saveTurns(t, st, other, 1, 5)

	got, err := st.ListRecentMessages(ctx, agent, 500)
	require.NoError(t, err)
	require.Len(t, got, 500)
	assert.Equal(t, "message 701", got[0].Content)
	assert.Equal(t, "message 1200", got[499].Content)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].Seq, got[i].Seq)
	}

	after, err := st.ListRecentMessagesAfter(ctx, agent, 1150, 1000)
	require.NoError(t, err)
	require.Len(t, after, 50)
	assert.Equal(t, int64(1151), after[0].Seq)

	few, err := st.ListRecentMessages(ctx, other, 500)
	require.NoError(t, err)
	assert.Len(t, few, 5)
	none, err := st.ListRecentMessages(ctx, uuid.New(), 10)
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestSummariesAreTranscriptRows(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	agent := testAgent(t, st)
	_, err := st.LatestSummary(ctx, agent)
	require.ErrorIs(t, err, ErrNotFound)

	saveTurns(t, st, agent, 1, 10)
	first := SummaryMessage(uuid.New(), agent, 11, "The user counted to ten.", "offline:sapagent-offline", SummaryCoverage{FromSeq: 1, ThroughSeq: 8, Turns: 8})
	saved, err := st.SaveMessage(ctx, first)
	require.NoError(t, err)
	assert.Equal(t, RoleSummary, saved.Role)
	saveTurns(t, st, agent, 12, 20)
	second := SummaryMessage(uuid.New(), agent, 21, "The user counted to twenty.", "", SummaryCoverage{FromSeq: 9, ThroughSeq: 18, Turns: 9})
	_, err = st.SaveMessage(ctx, second)
	require.NoError(t, err)

	latest, err := st.LatestSummary(ctx, agent)
	require.NoError(t, err)
	assert.Equal(t, second.ID, latest.ID)
	c, ok := latest.Coverage()
	require.True(t, ok)
	assert.Equal(t, SummaryCoverage{FromSeq: 9, ThroughSeq: 18, Turns: 9}, c)
	_, ok = Message{Role: "user"}.Coverage()
	assert.False(t, ok)

	// Saving the same ID again (an activity retry) returns the stored row, not a second one.
	again, err := st.SaveMessage(ctx, SummaryMessage(second.ID, agent, 21, "a different text", "", SummaryCoverage{ThroughSeq: 19}))
	require.NoError(t, err)
	assert.Equal(t, "The user counted to twenty.", again.Content)
	got, err := st.GetMessage(ctx, agent, second.ID)
	require.NoError(t, err)
	assert.Equal(t, "The user counted to twenty.", got.Content)
	_, err = st.GetMessage(ctx, uuid.New(), second.ID)
	assert.ErrorIs(t, err, ErrNotFound, "another agent's message is not found")
}

// The migration can be rolled back (summary rows go) and applied again.
func TestSummaryMigrationRollsBack(t *testing.T) {
	st, dbURL := testStore(t)
	ctx := context.Background()
	agent := testAgent(t, st)
	_, err := st.SaveMessage(ctx, SummaryMessage(uuid.New(), agent, 1, "s", "", SummaryCoverage{}))
	require.NoError(t, err)

	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	m, err := migrate.NewMigrator(ctx, conn, "schema_version")
	require.NoError(t, err)
	require.NoError(t, m.LoadMigrations(migrationsFS(t)))
	var summaryVersion int32
	for _, mig := range m.Migrations {
		if mig.Name == "008_summaries.sql" {
			summaryVersion = mig.Sequence
		}
	}
	require.NotZero(t, summaryVersion)
	require.NoError(t, m.MigrateTo(ctx, summaryVersion-1))
	_, err = st.SaveMessage(ctx, SummaryMessage(uuid.New(), agent, 2, "s", "", SummaryCoverage{}))
	require.Error(t, err, "the old schema refuses the role")
	require.NoError(t, m.Migrate(ctx))
	_, err = st.SaveMessage(ctx, SummaryMessage(uuid.New(), agent, 2, "s", "", SummaryCoverage{}))
	require.NoError(t, err)
}

func migrationsFS(t *testing.T) fs.FS {
	sub, err := fs.Sub(schemas.Migrations, "migrations")
	require.NoError(t, err)
	return sub
}
