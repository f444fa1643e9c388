package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/store"
)

// BenchmarkAgentListAuthOverhead compares authenticated GET /api/agents through the full router
// (JWT verification, rate-limit middleware, workspace membership query) with the same list
// handler minus auth and tenancy, in one run against real Postgres and Redis.
func BenchmarkAgentListAuthOverhead(b *testing.B) {
	ctx := context.Background()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	u, _ := url.Parse(base)
	u.Path = "/sapagent_bench_" + uuid.NewString()[:8]
	dbURL := u.String()
	require.NoError(b, store.EnsureDatabase(ctx, dbURL))
	defer store.DropDatabase(ctx, dbURL) //nolint:errcheck
	require.NoError(b, store.Migrate(ctx, dbURL))
	st, err := store.Open(ctx, dbURL)
	require.NoError(b, err)
	defer st.Close()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	org, err := st.CreateOrg(ctx, "Bench", "alice")
	require.NoError(b, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "WS", "alice")
	require.NoError(b, err)
	for i := 0; i < 30; i++ {
		tx, _ := st.Pool.Begin(ctx)
		_, err := store.CreateAgent(ctx, tx, store.Agent{ID: uuid.New(), WorkspaceID: ws.ID, Name: fmt.Sprint("agent ", i), CreatedBy: "alice"})
		require.NoError(b, err)
		require.NoError(b, tx.Commit(ctx))
	}
	secret := []byte("bench-secret-bench-secret-bench-")
	verifier, err := auth.NewVerifier(ctx, auth.Options{Secret: secret})
	require.NoError(b, err)
	token, _ := auth.Mint(secret, "alice", time.Hour, "", "")
	s := &Server{Store: st, Auth: verifier, Limiter: redis_rate.NewLimiter(rdb), RedisPrefix: "bench:", RateLimitPerMinute: 60,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	full := s.Router()

	gin.SetMode(gin.ReleaseMode)
	bare := gin.New()
	bare.GET("/api/agents", func(c *gin.Context) {
		cur, limit, ok := httpx.ListParams(c)
		if !ok {
			return
		}
		id, _ := uuid.Parse(c.Query("workspace_id"))
		agents, err := listAgentsUnchecked(c.Request.Context(), s.Store, id, cur, limit+1)
		if err != nil {
			httpx.Access{Store: s.Store, Log: s.Log}.StoreFailed(c, err, "agents")
			return
		}
		httpx.Page(c, agents, limit, func(a store.Agent) store.Cursor { return store.Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
	})

	path := "/api/agents?workspace_id=" + ws.ID.String() + "&limit=20"
	run := func(h http.Handler, withToken bool, n int) time.Duration {
		start := time.Now()
		for i := 0; i < n; i++ {
			req := httptest.NewRequest("GET", path, nil)
			if withToken {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
		return time.Since(start)
	}
	const rounds, per = 10, 200
	run(full, true, 50) // warm both paths
	run(bare, false, 50)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var tFull, tBare time.Duration
		for r := 0; r < rounds; r++ { // interleaved so machine noise hits both alike
			tFull += run(full, true, per)
			tBare += run(bare, false, per)
		}
		n := float64(rounds * per)
		b.ReportMetric(n/tFull.Seconds(), "authed-req/s")
		b.ReportMetric(n/tBare.Seconds(), "bare-req/s")
		b.ReportMetric(tBare.Seconds()/tFull.Seconds(), "ratio")
	}
}

// listAgentsUnchecked is the same list without the membership condition (the baseline).
func listAgentsUnchecked(ctx context.Context, st *store.Store, ws uuid.UUID, after *store.Cursor, limit int) ([]store.Agent, error) {
	t, id := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), uuid.Max
	if after != nil {
		t, id = after.CreatedAt, after.ID
	}
	rows, err := st.Pool.Query(ctx, `SELECT a.id, a.workspace_id, a.name, a.title, a.model, a.status, a.created_by, a.archived_at,
		a.created_at, a.updated_at FROM agents a WHERE a.workspace_id = $1 AND a.archived_at IS NULL AND (a.created_at, a.id) < ($2, $3)
		ORDER BY a.created_at DESC, a.id DESC LIMIT $4`, ws, t, id, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Agent
	for rows.Next() {
		var a store.Agent
		if err := rows.Scan(&a.ID, &a.WorkspaceID, &a.Name, &a.Title, &a.Model, &a.Status, &a.CreatedBy, &a.ArchivedAt, &a.CreatedAt, &a.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
