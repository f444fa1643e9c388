package sapenrich

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/cleancore"
)

// Run with: go test ./internal/sapenrich/ -run '^$' -bench . -benchtime 1x
// SAPENRICH_BENCH_ENTRIES / SAPENRICH_BENCH_OBJECTS change the sizes.

func benchSize(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkEmbedEntries: entries/s through EmbedEntries (read pages, offline embeddings
// endpoint through go-openai, write back), against a baseline in the same run: the bare
// endpoint embedding the same texts in the same batches, no database.
func BenchmarkEmbedEntries(b *testing.B) {
	ctx := context.Background()
	n := benchSize("SAPENRICH_BENCH_ENTRIES", 20000)
	l := newLandscape(b, "S4HANA")
	ms := newModelServer(b)
	l.entries(1, genEntries(n, func(i int) string {
		return fmt.Sprintf("Custom table %d holds sales bonus data per customer and period, maintained by job ZBONUS_%d", i, i%97)
	}))
	emb := ms.embedder(b)
	opts := EmbedOptions{Embedder: emb}

	// Baseline: the endpoint alone, same texts and batch size, same concurrency 1 vs 2 aside.
	texts := make([]string, 0, 128)
	start := time.Now()
	for i := 0; i < n; i++ {
		texts = append(texts, EntryText("TABL", fmt.Sprintf("ZTAB%05d", i), fmt.Sprintf("Custom table %d", i),
			fmt.Sprintf("Custom table %d holds sales bonus data per customer and period, maintained by job ZBONUS_%d", i, i%97), 2000))
		if len(texts) == 128 || i == n-1 {
			_, err := emb.Embed(ctx, texts)
			require.NoError(b, err)
			texts = texts[:0]
		}
	}
	baseline := float64(n) / time.Since(start).Seconds()

	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, err := l.db().Exec(ctx, `UPDATE sap_search_entries SET embedding = NULL WHERE connection_id = $1`, l.scope.ConnectionID)
		require.NoError(b, err)
		b.StartTimer()
		t0 := time.Now()
		res, err := EmbedEntries(ctx, l.x(), l.scope, opts, nil)
		elapsed += time.Since(t0)
		require.NoError(b, err)
		require.EqualValues(b, n, res.Embedded)
	}
	rate := float64(n*b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "entries/s")
	b.ReportMetric(baseline, "baseline-endpoint-entries/s")
	b.ReportMetric(rate/baseline, "ratio")
}

// BenchmarkEmbedEntriesCached: entries/s when every entry's embedding comes from the
// previous generation (a full sync of an unchanged landscape): SQL only.
func BenchmarkEmbedEntriesCached(b *testing.B) {
	ctx := context.Background()
	n := benchSize("SAPENRICH_BENCH_ENTRIES", 20000)
	l := newLandscape(b, "S4HANA")
	ms := newModelServer(b)
	body := func(i int) string { return fmt.Sprintf("Custom table %d holds bonus data", i) }
	l.entries(1, genEntries(n, body))
	l.entries(2, genEntries(n, body))
	_, err := EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(b)}, nil)
	require.NoError(b, err)
	s2 := l.scope
	s2.Generation = 2
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, err := l.db().Exec(ctx, `UPDATE sap_search_entries SET embedding = NULL WHERE generation = 2`)
		require.NoError(b, err)
		b.StartTimer()
		t0 := time.Now()
		res, err := EmbedEntries(ctx, l.x(), s2, EmbedOptions{Embedder: ms.embedder(b)}, nil)
		elapsed += time.Since(t0)
		require.NoError(b, err)
		require.EqualValues(b, n, res.Copied)
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "entries/s")
}

// BenchmarkAnalyzeCleanCore: custom objects/s through AnalyzeCleanCore (stream objects with
// their relationships, classify, upsert), against a baseline in the same run: Classify of
// the same usages in memory, no database.
func BenchmarkAnalyzeCleanCore(b *testing.B) {
	ctx := context.Background()
	n := benchSize("SAPENRICH_BENCH_OBJECTS", 10000)
	l := newLandscape(b, "ECC")
	targets := []rel{
		{toType: "TABL", to: "MARA", kind: "uses_table"}, {toType: "TABL", to: "BSEG", kind: "uses_table"},
		{toType: "FUNC", to: "BAPI_TRANSACTION_COMMIT", kind: "calls_function"},
		{toType: "FUNC", to: "BAPI_SALESORDER_CREATEFROMDAT2", kind: "calls_function"},
		{toType: "CLAS", to: "CL_ABAP_CONTEXT_INFO", kind: "uses_class"}, {toType: "TABL", to: "VBAK", kind: "uses_table", usage: "write"},
		{toType: "DDLS", to: "I_SALESORDER", kind: "uses_view"}, {toType: "TABL", to: "ZSALES_BONUS", kind: "uses_table"},
	}
	objs := make([]object, n)
	var rels []rel
	var usages [][]cleancore.Usage
	for i := range objs {
		objs[i] = object{typ: "PROG", name: fmt.Sprintf("ZPROG%06d", i), pkg: fmt.Sprintf("ZPKG%03d", i%200)}
		var us []cleancore.Usage
		for j, t := range targets {
			if (i+j)%3 == 0 {
				continue // objects differ: about two thirds of the usages each
			}
			r := t
			r.fromType, r.from, r.line = "PROG", objs[i].name, j+1
			rels = append(rels, r)
			u, _ := UsageOf(r.toType, r.to, r.kind, r.usage)
			us = append(us, u)
		}
		usages = append(usages, us)
	}
	l.index(1, objs, rels, nil)
	c, err := cleancore.New(nil, cleancore.Options{})
	require.NoError(b, err)

	start := time.Now()
	for i, us := range usages {
		classify(c, "ECC", ccObject{typ: "PROG", name: objs[i].name}, us, make([]int, len(us)))
	}
	baseline := float64(n) / time.Since(start).Seconds()

	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := AnalyzeCleanCore(ctx, l.x(), l.scope, CleanCoreOptions{Classifier: c}, nil)
		elapsed += time.Since(t0)
		require.NoError(b, err)
		require.EqualValues(b, n, res.Objects)
	}
	rate := float64(n*b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "objects/s")
	b.ReportMetric(baseline, "baseline-classify-objects/s")
	b.ReportMetric(rate/baseline, "ratio")
}
