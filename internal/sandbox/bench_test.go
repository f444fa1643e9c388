//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/script"
	"github.com/sapagent/sapagent/internal/tools"
)

// BenchmarkExecuteCodeOverhead measures what running a small execute_code script in the
// sandbox pool adds to running the same script in-process (script.Run, the baseline), in the
// same run, alternating the two. The helpers are the product's registry; the helper returns a
// small table from memory, so only the sandbox's own cost differs.
//
//	go test -run '^$' -bench ExecuteCodeOverhead -benchtime 2000x ./internal/sandbox/
func BenchmarkExecuteCodeOverhead(b *testing.B) {
	helpers := tools.Default().Helpers()
	rows := make([]any, 5)
	for i := range rows {
		rows[i] = map[string]any{"KUNNR": fmt.Sprintf("%010d", i), "NAME1": "Customer", "LAND1": "DE"}
	}
	call := func(_ context.Context, _ int, _ string, _ map[string]any) (any, error) {
		return map[string]any{"rows": rows, "fields": []any{"KUNNR", "NAME1", "LAND1"}, "row_count": int64(len(rows))}, nil
	}
	for _, bc := range []struct{ name, code string }{
		{"no helper", "total = 0\nfor i in range(100):\n    total += i\nprint(total)\nresult = {\"total\": total}"},
		{"one helper call", "r = sap_read_table(table=\"KNA1\", row_count=5)\nby = {}\nfor row in r[\"rows\"]:\n    by[row[\"LAND1\"]] = by.get(row[\"LAND1\"], 0) + 1\nprint(by)\nresult = by"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := New(Options{Size: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			ctx := context.Background()
			limits := script.Limits{}
			// Warm both paths (and send the helpers to the sandbox once, as a worker does).
			for range 20 {
				if _, err := p.Run(ctx, bc.code, helpers, call, limits); err != nil {
					b.Fatal(err)
				}
				if _, err := script.Run(ctx, bc.code, helpers, call, limits); err != nil {
					b.Fatal(err)
				}
			}
			inproc := make([]time.Duration, 0, b.N)
			sandboxed := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := script.Run(ctx, bc.code, helpers, call, limits); err != nil {
					b.Fatal(err)
				}
				inproc = append(inproc, time.Since(start))
				start = time.Now()
				if _, err := p.Run(ctx, bc.code, helpers, call, limits); err != nil {
					b.Fatal(err)
				}
				sandboxed = append(sandboxed, time.Since(start))
			}
			b.StopTimer()
			in50, in99 := percentile(inproc, 50), percentile(inproc, 99)
			sb50, sb99 := percentile(sandboxed, 50), percentile(sandboxed, 99)
			b.ReportMetric(us(in50), "inproc-p50-µs")
			b.ReportMetric(us(sb50), "sandbox-p50-µs")
			b.ReportMetric(us(in99), "inproc-p99-µs")
			b.ReportMetric(us(sb99), "sandbox-p99-µs")
			b.ReportMetric(us(sb50-in50), "added-p50-µs")
			b.ReportMetric(us(sb99-in99), "added-p99-µs")
			b.ReportMetric(0, "ns/op") // the pair's total is not the figure of interest
		})
	}
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
