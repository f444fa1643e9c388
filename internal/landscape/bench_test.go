package landscape_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/landscape/landscapetest"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// BenchmarkLandscapeReads times the read models on two connections of LANDSCAPE_BENCH_ENTRIES
// search entries each (default 100,000; the figures in docs/benchmarks.md use 1,000,000), 10 %
// custom with a Clean Core analysis, the right one differing in 1 % of its objects. The
// baseline is the cheapest full pass over one connection's entries (count(*)), measured in the
// same run: the ratios say how many such passes each read costs. "-cached" reads are the same
// with the API's cache warm (the second and later requests for one index version).
func BenchmarkLandscapeReads(b *testing.B) {
	n := 100_000
	if v := os.Getenv("LANDSCAPE_BENCH_ENTRIES"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	ctx := context.Background()
	st, _ := storetest.New(b)
	org, err := st.CreateOrg(ctx, "Bench", "alice")
	require.NoError(b, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "WS", "alice")
	require.NoError(b, err)
	left, right := landscapetest.Connection(b, st, ws.ID, "ECC", "ECC"), landscapetest.Connection(b, st, ws.ID, "S4", "S4HANA")
	start := time.Now()
	for i, c := range []landscapetest.Conn{left, right} {
		c.Graph(b, 1, time.Now(), sapindex.Counts{})
		// Types and packages spread like a landscape's: a few types, thousands of packages.
		_, err := st.Pool.Exec(ctx, `INSERT INTO sap_search_entries (connection_id, workspace_id, generation, category, object_type, object_name,
				custom, package, title, body, content_hash)
			SELECT $1, $2, 1, 'object', (ARRAY['TABL','FUNC','CLAS','PROG','DDLS','DTEL','DOMA','INTF'])[1 + g % 8],
				CASE WHEN g % 10 = 0 THEN 'Z' ELSE '' END || 'OBJ_' || lpad(g::text, 8, '0'),
				g % 10 = 0, 'PKG' || (g % 3000), 'Object ' || g, 'Description of object ' || g,
				decode(md5(g::text || CASE WHEN $3 AND g % 100 = 0 THEN 'changed' ELSE '' END), 'hex')
			FROM generate_series(1, $4) g WHERE NOT ($3 AND g % 97 = 0)`, c.ID, ws.ID, i == 1, n)
		require.NoError(b, err)
		_, err = st.Pool.Exec(ctx, `INSERT INTO clean_core_analysis (connection_id, workspace_id, generation, object_type, object_name, package, level, findings)
			SELECT $1, $2, 1, (ARRAY['TABL','FUNC','CLAS','PROG','DDLS','DTEL','DOMA','INTF'])[1 + g % 8], 'ZOBJ_' || lpad(g::text, 8, '0'), 'PKG' || (g % 3000),
				(ARRAY['A','B','C','D'])[1 + g % 4],
				jsonb_build_array(jsonb_build_object('usage', jsonb_build_object('type', 'TABL', 'name', 'VBAK', 'kind', 'read'), 'state', 'noAPI', 'level', 'D', 'why', 'x',
					'successors', jsonb_build_array(jsonb_build_object('type', 'DDLS', 'name', 'I_SALESDOCUMENT'))))
			FROM generate_series(10, $3, 10) g`, c.ID, ws.ID, n)
		require.NoError(b, err)
	}
	for _, table := range []string{"sap_search_entries", "clean_core_analysis"} {
		_, err = st.Pool.Exec(ctx, `VACUUM ANALYZE `+table) // as autovacuum would after a sync
		require.NoError(b, err)
	}
	b.Logf("filled 2 × %d entries in %s", n, time.Since(start).Round(time.Second))

	r := landscape.Reader{Index: sapindex.New(st.Pool)} // every figure computed
	cachedReader := landscape.Reader{Index: sapindex.New(st.Pool), Cache: &landscape.Cache{}}
	lg, err := r.Graph(ctx, ws.ID, left.ID)
	require.NoError(b, err)
	rg, err := r.Graph(ctx, ws.ID, right.ID)
	require.NoError(b, err)
	timed := func(f func() error) time.Duration {
		t0 := time.Now()
		require.NoError(b, f())
		return time.Since(t0)
	}
	qs := 0
	ops := []struct {
		name string
		f    func() error
	}{
		{"baseline-count", func() error {
			var c int64
			return st.Pool.QueryRow(ctx, `SELECT count(*) FROM sap_search_entries WHERE connection_id = $1 AND generation = 1`, left.ID).Scan(&c)
		}},
		{"dashboard", func() error { _, err := r.Dashboard(ctx, lg, 20); return err }},
		{"dashboard-cached", func() error { _, err := cachedReader.Dashboard(ctx, lg, 20); return err }},
		{"diff-counts", func() error { _, err := r.DiffCounts(ctx, lg, rg, landscape.ObjectFilter{}); return err }},
		{"diff-counts-cached", func() error {
			_, err := cachedReader.DiffCounts(ctx, lg, rg, landscape.ObjectFilter{})
			return err
		}},
		{"diff-counts-new-q", func() error { // a ?q= not asked before: counted from the cached comparison
			qs++
			_, err := cachedReader.DiffCounts(ctx, lg, rg, landscape.ObjectFilter{Query: "OBJ_" + strconv.Itoa(qs%1000)})
			return err
		}},
		{"diff-changed-page", func() error {
			_, err := r.Diff(ctx, lg, rg, landscape.DiffChanged, landscape.ObjectFilter{}, nil, 100)
			return err
		}},
		{"diff-only-left-page", func() error {
			_, err := r.Diff(ctx, lg, rg, landscape.DiffOnlyLeft, landscape.ObjectFilter{}, nil, 100)
			return err
		}},
		{"objects-page", func() error {
			_, err := r.Objects(ctx, lg, landscape.ObjectFilter{}, &landscape.Cursor{Keys: []string{"PROG", "OBJ_00500000"}}, 100)
			return err
		}},
		{"objects-q", func() error {
			_, err := r.Objects(ctx, lg, landscape.ObjectFilter{Query: "OBJ_0000123"}, nil, 100)
			return err
		}},
		{"clean-core-summary", func() error { _, err := r.CleanCoreSummary(ctx, lg, ""); return err }},
		{"findings-page", func() error {
			_, err := r.Findings(ctx, lg, landscape.FindingFilter{Level: "D"}, nil, 100)
			return err
		}},
	}
	for _, o := range ops { // warm the cache for every read alike
		timed(o.f)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		times := make([]time.Duration, len(ops))
		for k, o := range ops {
			times[k] = timed(o.f)
		}
		for k, o := range ops {
			b.ReportMetric(float64(times[k].Microseconds())/1000, o.name+"-ms")
			if k > 0 {
				b.ReportMetric(float64(times[k])/float64(times[0]), o.name+"/baseline")
			}
		}
	}
}
