package sapindex_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// Benchmarks (`make bench` runs them with -benchtime 1x; each iteration is one whole
// measurement). Sizes: SAPINDEX_BENCH_WRITES (default 100,000 items) and
// SAPINDEX_BENCH_ENTRIES (default 1,000,000 search entries); -short skips the 1M search bench.

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// landscapeWords is the vocabulary of generated descriptions; lower indexes are drawn more
// often (Zipf), as "data", "document" and "sales" are in a real repository.
var landscapeWords = strings.Fields(`data document sales item header material customer order account general master
	table plant vendor supplier purchase delivery billing invoice payment condition pricing price stock movement
	valuation batch serial warehouse storage location company code cost center profit controlling asset ledger
	journal entry posting period fiscal year currency exchange rate tax country region address partner contact
	employee personnel payroll time schedule shipment route transport freight carrier packaging handling unit
	quality inspection lot notification equipment functional maintenance plan work center routing production
	bill component planned requirement forecast demand quota contract agreement release strategy approval
	workflow user role authorization log change history archive text description status profile settings
	configuration customizing interface idoc message output form print spool job variant report list display
	create change delete read update check validate calculate determine simulate convert transfer upload download
	bonus rebate commission credit limit dunning clearing reconciliation bank statement cash flow budget project
	network activity milestone wbs element order type category group class characteristic value classification
	variant configuration sustainability carbon emission certificate compliance legal hazardous substance`)

var modules = []string{"VB", "MA", "BK", "KN", "LF", "EK", "CO", "FI", "MM", "SD", "PP", "QM", "PM", "HR", "PS", "WM", "LE", "CA"}

type genEntry struct {
	category, typ, name, title string
	custom                     bool
}

// genLandscape generates entry i of a synthetic landscape deterministically.
func genLandscape(i int) genEntry {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	zipf := func() string {
		// P(word k) ∝ 1/(k+1): a few words are very common.
		k := int(math.Exp(r.Float64()*math.Log(float64(len(landscapeWords)+1)))) - 1
		return landscapeWords[min(k, len(landscapeWords)-1)]
	}
	words := make([]string, 3+r.IntN(5))
	for j := range words {
		words[j] = zipf()
	}
	title := strings.ToUpper(words[0][:1]) + words[0][1:] + " " + strings.Join(words[1:], " ")
	mod := modules[r.IntN(len(modules))]
	custom := r.IntN(20) == 0
	prefix := ""
	if custom {
		prefix = "Z"
	}
	w1, w2 := strings.ToUpper(words[0]), strings.ToUpper(words[len(words)-1])
	e := genEntry{title: title, custom: custom}
	switch k := i % 20; {
	case k < 6:
		e.category, e.typ, e.name = "table", "TABL", fmt.Sprintf("%s%s%s%05X", prefix, mod, w1[:min(2, len(w1))], i)
	case k < 10:
		e.category, e.typ, e.name = "data_element", "DTEL", fmt.Sprintf("%s%s_%s_%d", prefix, w1, w2, i)
	case k < 13:
		if r.IntN(30) == 0 {
			e.category, e.typ, e.name = "bapi", "FUNC", fmt.Sprintf("BAPI_%s%s_%s%d", w1, w2, []string{"GETLIST", "GETDETAIL", "CREATE", "CHANGE"}[r.IntN(4)], i)
		} else {
			e.category, e.typ, e.name = "function", "FUNC", fmt.Sprintf("%s%s_%s_%s_%d", prefix, mod, w1, w2, i)
		}
	case k < 15:
		e.category, e.typ, e.name = "class", "CLAS", fmt.Sprintf("%sCL_%s_%s_%d", prefix, w1, w2, i)
	case k < 18:
		e.category, e.typ, e.name = "program", "PROG", fmt.Sprintf("%sR%s_%s_%d", prefix, mod, w1, i)
	default:
		e.category, e.typ, e.name = "cds_view", "DDLS", fmt.Sprintf("%sI_%s%s%d", prefix, words[0], words[len(words)-1], i)
	}
	e.name = strings.ToUpper(e.name)
	return e
}

// bagEmbedder embeds a text as the sum of its words' fixed random vectors: cheap enough for a
// million entries, and texts sharing words are close, as with a real model.
type bagEmbedder struct {
	dims  int
	words map[string][]float32 // one goroutine uses it
}

func newBagEmbedder(dims int) bagEmbedder {
	return bagEmbedder{dims: dims, words: map[string][]float32{}}
}

func (b bagEmbedder) vector(text string) []float32 {
	v := make([]float32, b.dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		wv, ok := b.words[w]
		if !ok {
			h := fnv.New64a()
			_, _ = h.Write([]byte(w))
			r := rand.New(rand.NewPCG(h.Sum64(), 7))
			wv = make([]float32, b.dims)
			for i := range wv {
				wv[i] = float32(r.NormFloat64())
			}
			b.words[w] = wv
		}
		for i := range v {
			v[i] += wv[i]
		}
	}
	return v
}

func (b bagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = b.vector(t)
	}
	return out, nil
}

// BenchmarkIndexWrites compares WritePage (pages of custom objects: cursor check, COPY of
// index rows and search entries, cursor advance, one transaction each) with one bare COPY of the
// same rows into the same tables, in the same run.
func BenchmarkIndexWrites(b *testing.B) {
	n := envInt("SAPINDEX_BENCH_WRITES", 100000)
	pageSize := envInt("SAPINDEX_BENCH_PAGE", 1000)
	f := newFixture(b)
	ctx := context.Background()
	items := make([]map[string]any, n)
	for i := range items {
		e := genLandscape(i)
		items[i] = map[string]any{"type": e.typ, "name": e.name, "description": e.title, "package": "Z" + modules[i%len(modules)], "created_by": "DEVELOPER", "changed_at": "2024-05-01"}
	}
	for b.Loop() {
		// Baseline: the same rows, mapped beforehand, in one COPY per table.
		bareGen, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
		require.NoError(b, err)
		rows := make([]sapindex.Row, n)
		entries := make([]sapindex.Entry, n)
		for i, it := range items {
			r, e, err := sapindex.MapItem(sapindex.PhaseCustomObjects, it)
			require.NoError(b, err)
			rows[i], entries[i] = r, *e
		}
		start := time.Now()
		require.NoError(b, pgx.BeginFunc(ctx, f.st.Pool, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"workspace_sap_index"}, []string{"connection_id", "workspace_id", "generation", "phase", "object_type", "object_name", "item_key", "package", "description", "data", "content_hash"},
				pgx.CopyFromSlice(n, func(i int) ([]any, error) {
					r := &rows[i]
					return []any{f.conn, f.ws, bareGen, sapindex.PhaseCustomObjects, r.ObjectType, r.ObjectName, r.ItemKey, r.Package, r.Description, string(r.Data), r.Hash}, nil
				})); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"sap_search_entries"}, []string{"connection_id", "workspace_id", "generation", "category", "object_type", "object_name", "custom", "package", "title", "body", "release_state", "content_hash"},
				pgx.CopyFromSlice(n, func(i int) ([]any, error) {
					e := &entries[i]
					return []any{f.conn, f.ws, bareGen, e.Category, e.ObjectType, e.ObjectName, e.Custom, e.Package, e.Title, e.Body, e.ReleaseState, e.Hash}, nil
				}))
			return err
		}))
		bare := time.Since(start)
		rows, entries = nil, nil

		gen, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
		require.NoError(b, err)
		run := f.run(b, f.ws, f.conn, sapindex.ModeFull, gen)
		start = time.Now()
		st := f.writePhase(b, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCustomObjects}, items, pageSize)
		writer := time.Since(start)
		require.Equal(b, int64(n), st.Items)
		require.Equal(b, n, f.count(b, "sap_search_entries", gen))

		b.ReportMetric(float64(n)/writer.Seconds(), "entries/s")
		b.ReportMetric(float64(n)/bare.Seconds(), "bare_copy_entries/s")
		b.ReportMetric(bare.Seconds()/writer.Seconds(), "ratio_vs_bare")
		require.NoError(b, f.x.Abandon(ctx, f.conn, bareGen))
		require.NoError(b, f.x.Abandon(ctx, f.conn, gen))

		// What the two GIN indexes (full text, trigram) cost: the writer again without them.
		_, err = f.st.Pool.Exec(ctx, `DROP INDEX sap_search_entries_fts; DROP INDEX sap_search_entries_name_trgm`)
		require.NoError(b, err)
		gen, _, err = f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
		require.NoError(b, err)
		run = f.run(b, f.ws, f.conn, sapindex.ModeFull, gen)
		start = time.Now()
		f.writePhase(b, sapindex.Target{RunID: run, WorkspaceID: f.ws, ConnectionID: f.conn, Generation: gen, Phase: sapindex.PhaseCustomObjects}, items, pageSize)
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "entries/s_without_gin")
		require.NoError(b, f.x.Abandon(ctx, f.conn, gen))
		_, err = f.st.Pool.Exec(ctx, `CREATE INDEX sap_search_entries_fts ON sap_search_entries USING gin (search);
			CREATE INDEX sap_search_entries_name_trgm ON sap_search_entries USING gin (object_name gin_trgm_ops)`)
		require.NoError(b, err)
	}
}

// BenchmarkSearch1M loads a landscape of SAPINDEX_BENCH_ENTRIES search entries (COPY, then the
// indexes built once, as a restore would) and measures keyword and hybrid latency over a query
// mix: exact names, name prefixes and wildcards, description words and questions.
func BenchmarkSearch1M(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: skipping the 1M-entry search benchmark")
	}
	n := envInt("SAPINDEX_BENCH_ENTRIES", 1000000)
	f := newFixture(b)
	ctx := context.Background()
	emb := newBagEmbedder(256)

	gen, _, err := f.x.BeginBuild(ctx, f.ws, f.conn, "ECC")
	require.NoError(b, err)
	loadLandscape(b, f, gen, n, emb)
	counts, err := f.x.ComputeCounts(ctx, f.conn, gen)
	require.NoError(b, err)
	require.NoError(b, f.x.SwitchFull(ctx, f.conn, gen, 1, counts))

	queries := benchQueries(n)
	measure := func(mode string, e sapindex.Embedder) (p50, p99 time.Duration, found float64) {
		var lat []time.Duration
		type timed struct {
			q string
			d time.Duration
		}
		var each []timed
		hits := 0
		for _, q := range queries {
			start := time.Now()
			res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: q, Mode: mode, Limit: 20}, e)
			lat = append(lat, time.Since(start))
			each = append(each, timed{q, time.Since(start)})
			require.NoError(b, err, q)
			if len(res.Hits) > 0 {
				hits++
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		sort.Slice(each, func(i, j int) bool { return each[i].d > each[j].d })
		b.Logf("%s: slowest %v", mode, each[:min(4, len(each))])
		return lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], float64(hits) / float64(len(queries))
	}
	for b.Loop() {
		measure(sapindex.SearchKeyword, nil) // warm the caches once, as a running system is
		k50, k99, kf := measure(sapindex.SearchKeyword, nil)
		h50, h99, hf := measure(sapindex.SearchHybrid, emb)
		b.ReportMetric(float64(k50.Microseconds())/1000, "keyword_p50_ms")
		b.ReportMetric(float64(k99.Microseconds())/1000, "keyword_p99_ms")
		b.ReportMetric(float64(h50.Microseconds())/1000, "hybrid_p50_ms")
		b.ReportMetric(float64(h99.Microseconds())/1000, "hybrid_p99_ms")
		b.ReportMetric(kf, "keyword_found")
		b.ReportMetric(hf, "hybrid_found")
	}
}

// benchQueries is the query mix: 30 % exact names, 20 % prefixes, 10 % wildcards, 25 %
// description words, 15 % questions.
func benchQueries(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	questions := []string{"which table stores material valuation data", "how is the customer credit limit checked",
		"where are sales order items kept", "function to create a purchase order", "report listing open vendor invoices",
		"which class calculates pricing conditions", "table of general ledger journal entries", "how are bonus rebates computed"}
	var out []string
	for i := 0; i < 200; i++ {
		e := genLandscape(r.IntN(n))
		switch k := i % 20; {
		case k < 6:
			out = append(out, e.name)
		case k < 10:
			out = append(out, e.name[:min(len(e.name), 4+r.IntN(4))]+"*")
		case k < 12:
			w := strings.Fields(strings.ToUpper(e.title))
			out = append(out, "Z*"+w[len(w)-1]+"*")
		case k < 17:
			w := strings.Fields(e.title)
			out = append(out, strings.Join(w[:min(len(w), 2+r.IntN(2))], " "))
		default:
			out = append(out, questions[r.IntN(len(questions))])
		}
	}
	return out
}

// loadLandscape copies n generated entries into generation gen with the search indexes dropped
// and builds them afterwards (as a restore would: much faster than maintaining them row by row).
func loadLandscape(b testing.TB, f fixture, gen int64, n int, emb bagEmbedder) {
	ctx := context.Background()
	load := time.Now()
	conn, err := f.st.Pool.Acquire(ctx)
	require.NoError(b, err)
	for _, s := range []string{`SET maintenance_work_mem = '256MB'`, `DROP INDEX sap_search_entries_fts`, `DROP INDEX sap_search_entries_name_trgm`, `DROP INDEX sap_search_entries_name_prefix`} {
		_, err := conn.Exec(ctx, s)
		require.NoError(b, err)
	}
	i := 0
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"sap_search_entries"}, []string{"connection_id", "workspace_id", "generation", "category", "object_type", "object_name", "custom", "package", "title", "body", "release_state", "content_hash", "embedding"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i == n {
				return nil, nil
			}
			e := genLandscape(i)
			i++
			body := e.title + ". package " + modules[i%len(modules)]
			return []any{f.conn, f.ws, gen, e.category, e.typ, e.name, e.custom, modules[i%len(modules)], e.title, body, "", []byte{byte(i)},
				sapindex.EncodeEmbedding(emb.vector(e.title + " " + body))}, nil // names' words are unique: left out of the bench's bag of words
		}))
	require.NoError(b, err)
	copied := time.Since(load)
	for _, s := range []string{
		`CREATE INDEX sap_search_entries_fts ON sap_search_entries USING gin (search)`,
		`CREATE INDEX sap_search_entries_name_trgm ON sap_search_entries USING gin (object_name gin_trgm_ops)`,
		`CREATE INDEX sap_search_entries_name_prefix ON sap_search_entries (connection_id, generation, object_name text_pattern_ops)`,
		`ANALYZE sap_search_entries`,
	} {
		_, err := conn.Exec(ctx, s)
		require.NoError(b, err)
	}
	conn.Release()
	b.Logf("loaded %d entries: COPY %s, indexes %s", n, copied.Round(time.Second), (time.Since(load) - copied).Round(time.Second))
}
