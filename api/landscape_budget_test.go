package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/index"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/landscape/landscapetest"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// Finding 4 of issue 18: the dashboard and the diff were unthrottled, and every new ?q= of a
// diff merged both indexes again and took a slot of a cache shared by every tenant, so 530
// requests of one tenant flushed another's cached dashboard.

// readsEnv is the real router on a migrated database with two tenants: the attacker's
// workspace (alice) with two indexed connections and the victim's (victor, another
// organization) with one.
type readsEnv struct {
	t           *testing.T
	st          *store.Store
	srv         *Server
	router      *gin.Engine
	tokens      map[string]string
	attacker    uuid.UUID
	attackerOrg uuid.UUID
	victim      uuid.UUID
	left        landscapetest.Conn
	right       landscapetest.Conn
	victims     landscapetest.Conn
}

// bulkEntries writes n search entries spread over types and packages like a landscape's; the
// variant differs in 1 % of them and lacks about 1 %.
func bulkEntries(t testing.TB, c landscapetest.Conn, n int, variant bool) {
	t.Helper()
	_, err := c.St.Pool.Exec(context.Background(), `INSERT INTO sap_search_entries (connection_id, workspace_id, generation, category, object_type, object_name,
			custom, package, title, body, content_hash)
		SELECT $1, $2, 1, 'object', (ARRAY['TABL','FUNC','CLAS','PROG','DDLS','DTEL','DOMA','INTF'])[1 + g % 8],
			CASE WHEN g % 10 = 0 THEN 'Z' ELSE '' END || 'OBJ_' || lpad(g::text, 8, '0'),
			g % 10 = 0, 'PKG' || (g % 3000), 'Object ' || g, 'Description of object ' || g,
			decode(md5(g::text || CASE WHEN $3 AND g % 100 = 0 THEN 'changed' ELSE '' END), 'hex')
		FROM generate_series(1, $4) g WHERE NOT ($3 AND g % 97 = 0)`, c.ID, c.WorkspaceID, variant, n)
	require.NoError(t, err)
}

var readsSecret = []byte("reads-test-secret-0123456789abcdef")

func newReadsEnv(t *testing.T, entries int, configure func(*Server)) *readsEnv {
	ctx := context.Background()
	st, _ := storetest.New(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	vorg, err := st.CreateOrg(ctx, "Victim", "victor")
	require.NoError(t, err)
	vws, err := st.CreateWorkspace(ctx, vorg.ID, "Victim", "victor")
	require.NoError(t, err)
	e := &readsEnv{t: t, st: st, tokens: map[string]string{}, attacker: ws.ID, attackerOrg: org.ID, victim: vws.ID,
		left: landscapetest.Connection(t, st, ws.ID, "ECC", "ECC"), right: landscapetest.Connection(t, st, ws.ID, "S4", "S4HANA"),
		victims: landscapetest.Connection(t, st, vws.ID, "Victim ECC", "ECC")}
	synced := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	for i, c := range []landscapetest.Conn{e.left, e.right, e.victims} {
		c.Graph(t, 1, synced, sapindex.Counts{})
		bulkEntries(t, c, entries, i == 1)
	}
	_, err = st.Pool.Exec(ctx, `VACUUM ANALYZE sap_search_entries`)
	require.NoError(t, err)

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { rdb.Close() })
	verifier, err := auth.NewVerifier(ctx, auth.Options{Secret: readsSecret})
	require.NoError(t, err)
	for _, u := range []string{"alice", "victor"} {
		e.tokens[u], err = auth.Mint(readsSecret, u, time.Hour, "", "")
		require.NoError(t, err)
	}
	e.srv = &Server{Store: st, Auth: verifier, Limiter: redis_rate.NewLimiter(rdb), RedisPrefix: "reads-test:" + uuid.NewString() + ":",
		RateLimitPerMinute: 1000, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if configure != nil {
		configure(e.srv)
	}
	e.router = e.srv.Router()
	return e
}

func (e *readsEnv) get(user, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens[user])
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	return rec
}

func (e *readsEnv) dashboardPath(ws uuid.UUID) string {
	return "/api/workspaces/" + ws.String() + "/dashboard"
}

func (e *readsEnv) diffPath(q string) string {
	return fmt.Sprintf("/api/workspaces/%s/dashboard/diff?left=%s&right=%s&limit=5&q=%s", e.attacker, e.left.ID, e.right.ID, q)
}

// objectsOf is the victim dashboard's object count.
func objectsOf(t *testing.T, rec *httptest.ResponseRecorder) int64 {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var body struct {
		Data []struct {
			Objects int64 `json:"objects"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Len(t, body.Data, 1)
	return body.Data[0].Objects
}

func slowest(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// TestIndexReadsAreBudgetedPerUser: one user's burst of dashboard and diff requests runs into
// 429 rate_limited with Retry-After, and another tenant's reads are not affected.
func TestIndexReadsAreBudgetedPerUser(t *testing.T) {
	e := newReadsEnv(t, 100, nil)
	limited := 0
	for i := range 80 {
		path := e.dashboardPath(e.attacker)
		if i%2 == 1 {
			path = e.diffPath("OBJ_" + strconv.Itoa(i))
		}
		rec := e.get("alice", path)
		if rec.Code == http.StatusTooManyRequests {
			limited++
			var body httpx.Error
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			assert.Equal(t, "rate_limited", body.Code, rec.Body.String())
			assert.NotEmpty(t, body.Error)
			n, err := strconv.Atoi(rec.Header().Get("Retry-After"))
			require.NoError(t, err, "Retry-After %q", rec.Header().Get("Retry-After"))
			assert.Positive(t, n)
			continue
		}
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	assert.GreaterOrEqual(t, limited, 15, "80 index reads in a burst: the budget is 60 a minute per user")
	assert.Equal(t, http.StatusOK, e.get("victor", e.dashboardPath(e.victim)).Code, "another tenant still reads")
}

// TestIndexReadsAreBudgetedPerWorkspace: the members of one workspace share a budget too.
func TestIndexReadsAreBudgetedPerWorkspace(t *testing.T) {
	e := newReadsEnv(t, 100, func(s *Server) { s.IndexReadsPerMinute, s.IndexReadsPerWorkspaceMinute = 1000, 10 })
	ctx := context.Background()
	for _, u := range []string{"bob", "carol"} {
		_, _, err := e.st.SetOrgMember(ctx, e.attackerOrg, u, store.RoleMember)
		require.NoError(t, err)
		_, err = e.st.SetWorkspaceMember(ctx, e.attacker, u, store.RoleMember, "alice")
		require.NoError(t, err)
		e.tokens[u], err = auth.Mint(readsSecret, u, time.Hour, "", "")
		require.NoError(t, err)
	}
	codes := map[int]int{}
	for i := range 12 {
		codes[e.get([]string{"alice", "bob", "carol"}[i%3], e.dashboardPath(e.attacker)).Code]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 10, http.StatusTooManyRequests: 2}, codes)
	assert.Equal(t, http.StatusOK, e.get("victor", e.dashboardPath(e.victim)).Code, "another workspace has its own budget")
}

// TestADiffFloodKeepsAnotherTenantsDashboardCachedAndFast is the attack: on ~105k-entry
// indexes one tenant sends 530 diffs, each with a new ?q=. Another tenant's dashboard stays
// cached (a recomputation would see the row added below) and its latency is reported before and
// during the flood, measured in the same run. READS_FLOOD_ENTRIES overrides the size.
func TestADiffFloodKeepsAnotherTenantsDashboardCachedAndFast(t *testing.T) {
	n := 105_000
	if v := os.Getenv("READS_FLOOD_ENTRIES"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	e := newReadsEnv(t, n, nil)
	victim := e.dashboardPath(e.victim)
	objects := objectsOf(t, e.get("victor", victim)) // warms the victim's figures
	var before []time.Duration
	for range 10 {
		began := time.Now()
		require.Equal(t, int64(n), objectsOf(t, e.get("victor", victim)))
		before = append(before, time.Since(began))
	}
	// A row the cached figures do not count: a recomputation would.
	e.victims.Entries(t, landscapetest.Entry{Type: "PROG", Name: "ZZ_ADDED_AFTER", Package: "ZZ"})

	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec := e.get("alice", e.diffPath(fmt.Sprintf("OBJ_%05d", i)))
				mu.Lock()
				codes[rec.Code]++
				mu.Unlock()
			}
		}()
	}
	var during []time.Duration
	flood := time.Now()
	for i := range 530 {
		next <- i
		if i%20 == 0 {
			began := time.Now()
			assert.Equal(t, objects, objectsOf(t, e.get("victor", victim)), "the victim's dashboard was recomputed during the flood")
			during = append(during, time.Since(began))
		}
	}
	close(next)
	wg.Wait()
	took := time.Since(flood)
	assert.Equal(t, objects, objectsOf(t, e.get("victor", victim)), "the flood evicted the victim's cached dashboard")
	t.Logf("entries per index %d; victim dashboard median %v (max %v) before, median %v (max %v) during a flood of 530 q-diffs (%v, answers %v)",
		n, median(before), slowest(before), median(during), slowest(during), took.Round(time.Millisecond), codes)
	assert.Less(t, median(during), 250*time.Millisecond+4*median(before), "the victim's dashboard slowed down under another tenant's flood")
}

// Every route listed as an index read (and so documented with 429) draws on the budget.
func TestEveryIndexReadRouteIsBudgeted(t *testing.T) {
	for route := range index.ReadRoutes {
		e := newReadsEnv(t, 10, func(s *Server) { s.IndexReadsPerMinute = 1 })
		path := strings.ReplaceAll(route, ":id", e.attacker.String()) + "?connection_id=" + e.left.ID.String()
		first := e.get("alice", path)
		assert.NotEqual(t, http.StatusTooManyRequests, first.Code, route)
		assert.Equal(t, http.StatusTooManyRequests, e.get("alice", path).Code, route)
	}
}
