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
	run := func(table string, fs []string, skip int) (rowsPerSec, bytesPerRow float64) {
		const pages, n = 10, 1000
		var rows int
		start := time.Now()
		bytes := allocated(func() {
			for i := 0; i < pages; i++ {
				rows += len(readPage(b, h, table, fs, skip, n).Rows)
			}
		})
		return float64(rows) / time.Since(start).Seconds(), float64(bytes) / float64(rows)
	}
	readPage(b, h, "TADIR", fields, 0, 10) // warm up: the first read builds the catalog
	readPage(b, h, "MARA", []string{"MATNR"}, 0, 10)
	for i := 0; i < b.N; i++ {
		base, baseMem := run("MARA", []string{"MATNR", "MTART", "MATKL"}, 0)
		first, firstMem := run("TADIR", fields, 0)
		deep, deepMem := run("TADIR", fields, 90000)
		b.ReportMetric(base, "mara_rows/s")
		b.ReportMetric(first, "tadir_rows/s")
		b.ReportMetric(deep/first, "deep/first")
		b.ReportMetric(first/base, "tadir/mara")
		b.ReportMetric(baseMem, "mara_B/row")
		b.ReportMetric(firstMem, "tadir_B/row")
		b.ReportMetric(deepMem/firstMem, "deep/first_B")
	}
}
