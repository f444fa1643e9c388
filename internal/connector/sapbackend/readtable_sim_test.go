package sapbackend

import (
	"runtime"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// readPage is one read_table call through the connector.
func readPage(tb testing.TB, h *simHarness, table string, fields []string, skip, count int) sap.ReadTableResponse {
	tb.Helper()
	var res sap.ReadTableResponse
	if err := h.client.Call(tb.Context(), sap.Target{URL: h.url, ConnectorKey: connectorKey}, sap.EndpointReadTable,
		sap.ReadTableRequest{Table: table, Fields: fields, RowSkip: skip, RowCount: count}, &res); err != nil {
		tb.Fatal(err)
	}
	return res
}

// allocated is the bytes this process allocated while f ran (the simulator runs in it too).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestSimReadTablePages100kRows pages TADIR of a generated landscape through the connector:
// 100,000 rows, each once, and a deep page costs what the first does.
func TestSimReadTablePages100kRows(t *testing.T) {
	h := startSim(t, sapsim.Options{GeneratedObjects: 110000}, "")
	const want, page = 100000, 5000
	fields := []string{"OBJECT", "OBJ_NAME", "DEVCLASS"}
	seen := make(map[string]bool, want)
	start := time.Now()
	for skip := 0; skip < want; skip += page {
		res := readPage(t, h, "TADIR", fields, skip, page)
		if len(res.Rows) != page {
			t.Fatalf("page at %d: %d rows", skip, len(res.Rows))
		}
		for _, r := range res.Rows {
			k := r[0] + "/" + r[1]
			if seen[k] {
				t.Fatalf("row %s twice", k)
			}
			seen[k] = true
		}
	}
	t.Logf("%d rows in %v", len(seen), time.Since(start))
	first := allocated(func() { readPage(t, h, "TADIR", fields, 0, 1000) })
	deep := allocated(func() { readPage(t, h, "TADIR", fields, 99000, 1000) })
	if deep > 2*first {
		t.Fatalf("a page at row 99,000 allocates %d bytes, the first %d: paging is not O(page)", deep, first)
	}
}

// BenchmarkSimReadTable reads 1000-row pages through connector → SOAP RFC → simulator: TADIR of
// a generated landscape (virtual, rows derived per page) at the start and 90,000 rows deep,
// against MARA (materialised rows) as the baseline of the same run.
func BenchmarkSimReadTable(b *testing.B) {
	h := startSim(b, sapsim.Options{GeneratedObjects: 100000}, "")
	fields := []string{"OBJECT", "OBJ_NAME", "DEVCLASS"}
	type kind struct {
		table  string
		fields []string
		skip   int
		rows   int
		bytes  uint64
		took   time.Duration
	}
	kinds := []*kind{{table: "MARA", fields: []string{"MATNR", "MTART", "MATKL"}}, {table: "TADIR", fields: fields}, {table: "TADIR", fields: fields, skip: 90000}}
	readPage(b, h, "TADIR", fields, 0, 10) // warm up: the first read builds the catalog
	readPage(b, h, "MARA", []string{"MATNR"}, 0, 10)
	for i := 0; i < b.N; i++ {
		// Rounds interleave the three reads, so a busy neighbour on the machine slows all alike.
		for round := 0; round < 10; round++ {
			for _, k := range kinds {
				start := time.Now()
				k.bytes += allocated(func() { k.rows += len(readPage(b, h, k.table, k.fields, k.skip, 1000).Rows) })
				k.took += time.Since(start)
			}
		}
	}
	rate := func(k *kind) float64 { return float64(k.rows) / k.took.Seconds() }
	perRow := func(k *kind) float64 { return float64(k.bytes) / float64(k.rows) }
	base, first, deep := kinds[0], kinds[1], kinds[2]
	b.ReportMetric(rate(base), "mara_rows/s")
	b.ReportMetric(rate(first), "tadir_rows/s")
	b.ReportMetric(rate(first)/rate(base), "tadir/mara")
	b.ReportMetric(rate(deep)/rate(first), "deep/first")
	b.ReportMetric(perRow(base), "mara_B/row")
	b.ReportMetric(perRow(first), "tadir_B/row")
	b.ReportMetric(perRow(deep)/perRow(first), "deep/first_B")
}

// BenchmarkSimIndexCatalogPage serves index/catalog_context pages of 1,000 items of a 100,000-object
// landscape through the connector: a page at TADIR row 80,000 against one at row 20,000 (both among the generated standard objects), and
// first custom_objects pages (TADIR with a WHERE, texts, REPOSRC, and the count) against them.
func BenchmarkSimIndexCatalogPage(b *testing.B) {
	h := startSim(b, sapsim.Options{GeneratedObjects: 100000}, "")
	type kind struct {
		endpoint string
		cursor   string
		items    int
		bytes    uint64
		took     time.Duration
	}
	mid := cursor{Phase: sap.EndpointIndexCatalogContext, Skip: 20000}
	deep := cursor{Phase: sap.EndpointIndexCatalogContext, Skip: 80000}
	kinds := []*kind{{endpoint: sap.EndpointIndexCatalogContext, cursor: mid.encode()}, {endpoint: sap.EndpointIndexCatalogContext, cursor: deep.encode()},
		{endpoint: sap.EndpointIndexCustomObjects}}
	page := func(k *kind) int {
		var p sap.IndexPage
		if err := h.client.Call(b.Context(), sap.Target{URL: h.url, ConnectorKey: connectorKey}, k.endpoint, sap.IndexRequest{Cursor: k.cursor, Limit: 1000}, &p); err != nil {
			b.Fatal(err)
		}
		return len(p.Items)
	}
	page(&kind{endpoint: sap.EndpointIndexCatalogContext}) // warm up: the simulator builds its catalog once
	for i := 0; i < b.N; i++ {
		for round := 0; round < 5; round++ {
			for _, k := range kinds {
				start := time.Now()
				k.bytes += allocated(func() { k.items += page(k) })
				k.took += time.Since(start)
			}
		}
	}
	rate := func(k *kind) float64 { return float64(k.items) / k.took.Seconds() }
	b.ReportMetric(rate(kinds[0]), "catalog_items/s")
	b.ReportMetric(rate(kinds[1])/rate(kinds[0]), "deep/mid")
	b.ReportMetric(float64(kinds[1].bytes)/float64(kinds[1].items)/(float64(kinds[0].bytes)/float64(kinds[0].items)), "deep/mid_B")
	b.ReportMetric(rate(kinds[2]), "custom_objects_items/s")
	b.ReportMetric(rate(kinds[2])/rate(kinds[0]), "custom/catalog")
}
