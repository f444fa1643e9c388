package integration

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// BenchmarkMessageToFirstStream measures what the platform adds between a user's POST and the
// first streamed token on their WebSocket: the time from POST to the first `stream` event,
// minus the offline model's own time to first token for that request (reported alongside as
// the baseline, with the POST's own round trip). Run with `make bench`; each run does 50 messages and reports median and p95.
func BenchmarkMessageToFirstStream(b *testing.B) {
	const messages = 50
	var mu sync.Mutex
	modelTTFT := map[string]time.Duration{}
	e := startEnv(b, func(cfg *config.Config, o *devstack.Options) {
		o.OfflineLLM.OnFirstToken = func(last string, since time.Duration) {
			mu.Lock()
			modelTTFT[last] = since
			mu.Unlock()
		}
	})
	for i := 0; i < b.N; i++ {
		agent := e.createAgent("bench")
		ws := e.dial(agent.ID, "")
		ws.next(5 * time.Second)
		var overhead, ttft, total, accepted []time.Duration
		for m := 0; m < messages; m++ {
			content := fmt.Sprintf("benchmark message %d of run %d", m, i)
			start := time.Now()
			require.Equal(b, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": content}, nil))
			accepted = append(accepted, time.Since(start))
			ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
			first := time.Since(start)
			ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
			mu.Lock()
			model, ok := modelTTFT[content]
			mu.Unlock()
			require.True(b, ok, "the offline model saw %q", content)
			total = append(total, first)
			ttft = append(ttft, model)
			overhead = append(overhead, first-model)
		}
		b.ReportMetric(ms(percentile(overhead, 50)), "overhead-p50-ms")
		b.ReportMetric(ms(percentile(overhead, 95)), "overhead-p95-ms")
		b.ReportMetric(ms(percentile(total, 50)), "post-to-first-stream-p50-ms")
		b.ReportMetric(ms(percentile(ttft, 50)), "model-ttft-p50-ms")
		// Baseline from the same run: the POST's own round trip (HTTP + update-with-start on the
		// embedded server), the floor any Temporal-routed message pays.
		b.ReportMetric(ms(percentile(accepted, 50)), "post-accepted-p50-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	idx := (len(s)*p+99)/100 - 1
	if idx < 0 {
		idx = 0
	}
	return s[idx]
}
