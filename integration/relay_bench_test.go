package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

// chunkLog records when each content chunk left the model, per request (keyed by its message).
type chunkLog struct {
	mu     sync.Mutex
	writes map[string][]timedOffset
}

type timedOffset struct {
	end int // cumulative text length after this piece
	at  time.Time
}

func (l *chunkLog) add(key, content string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := 0
	if w := l.writes[key]; len(w) > 0 {
		prev = w[len(w)-1].end
	}
	l.writes[key] = append(l.writes[key], timedOffset{prev + len(content), at})
}

// sample is one chunk's trip: when the model wrote it and how long until the client read it.
type sample struct {
	written time.Time
	latency time.Duration
}

// latencies pairs each written chunk with the first read that covered it.
func latencies(writes, reads []timedOffset) []sample {
	var out []sample
	j := 0
	for _, w := range writes {
		for j < len(reads) && reads[j].end < w.end {
			j++
		}
		if j == len(reads) {
			break
		}
		out = append(out, sample{w.at, reads[j].at.Sub(w.at)})
	}
	return out
}

// window keeps the latencies of chunks written while every stream was running: after the last
// stream's first chunk and before the first stream's last chunk. Outside it the machine is also
// starting or finishing turns (a burst of Temporal work that BenchmarkMessageToFirstStream
// measures), so this is the relay's cost at exactly that many concurrent streams.
func window(streams [][]sample) (all, concurrent []time.Duration) {
	var from, to time.Time
	seen := false
	for _, s := range streams {
		if len(s) == 0 {
			continue
		}
		if first := s[0].written; !seen || first.After(from) {
			from = first
		}
		if last := s[len(s)-1].written; !seen || last.Before(to) {
			to = last
		}
		seen = true
	}
	for _, s := range streams {
		for _, x := range s {
			all = append(all, x.latency)
			if !x.written.Before(from) && !x.written.After(to) {
				concurrent = append(concurrent, x.latency)
			}
		}
	}
	sortDurations(all)
	sortDurations(concurrent)
	return all, concurrent
}

// BenchmarkRelayOverhead: tokens leave the offline model every 20 ms (50 tokens/s per stream, 300
// tokens, so each stream runs 6 s);
// a WebSocket client reads them through the whole stack (activity → Redis → API → socket) while,
// in the same run, a go-openai client reads an identical stream directly from the model. The
// report is p50/p99 of both and of the difference, at 1 and 100 concurrent streams.
func BenchmarkRelayOverhead(b *testing.B) {
	for _, streams := range []int{1, 100} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			log := &chunkLog{writes: map[string][]timedOffset{}}
			e := startEnv(b, func(c *config.Config, o *devstack.Options) {
				c.RateLimitPerMinute = 1 << 30
				c.OfflineLLMDelay = 20 * time.Millisecond
				o.OfflineLLM.Rules = []offlinellm.Rule{{Name: "relay", Match: `^(relay|direct) \d+ \d+$`, Reply: strings.Repeat("token ", 150)}}
				o.OfflineLLM.OnChunk = log.add
			})
			cfg := openai.DefaultConfig("offline")
			cfg.BaseURL = e.stack.OfflineLLMURL
			direct := openai.NewClientWithConfig(cfg)
			agents := make([]agentJSON, streams)
			sockets := make([]*socket, streams)
			for i := range agents {
				agents[i] = e.createAgent("relay")
				sockets[i] = e.dial(agents[i].ID, "")
				sockets[i].next(5 * time.Second)
			}
			for n := 0; n < b.N; n++ {
				var mu sync.Mutex
				var relayedStreams, straightStreams [][]sample
				var wg sync.WaitGroup
				for i := range agents {
					wg.Add(2)
					key := fmt.Sprintf("%d %d", n, i)
					go func() { // through the product
						defer wg.Done()
						require.Equal(b, http.StatusAccepted, e.do("POST", "/api/agents/"+agents[i].ID+"/message", map[string]any{"content": "relay " + key}, nil))
						var reads []timedOffset
						total := 0
						for _, ev := range sockets[i].until(60*time.Second, func(ev event) bool { return ev.Type == "stream_end" }) {
							if ev.Type == "stream" {
								total += len(ev.Delta)
								reads = append(reads, timedOffset{total, ev.At})
							}
						}
						sockets[i].until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
						log.mu.Lock()
						l := latencies(log.writes["relay "+key], reads)
						log.mu.Unlock()
						mu.Lock()
						relayedStreams = append(relayedStreams, l)
						mu.Unlock()
					}()
					go func() { // straight from the model
						defer wg.Done()
						st, err := direct.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: offlinellm.ModelName, Stream: true,
							Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "direct " + key}}})
						require.NoError(b, err)
						defer st.Close()
						var reads []timedOffset
						total := 0
						for {
							ch, err := st.Recv()
							if errors.Is(err, io.EOF) {
								break
							}
							require.NoError(b, err)
							if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
								total += len(ch.Choices[0].Delta.Content)
								reads = append(reads, timedOffset{total, time.Now()})
							}
						}
						log.mu.Lock()
						l := latencies(log.writes["direct "+key], reads)
						log.mu.Unlock()
						mu.Lock()
						straightStreams = append(straightStreams, l)
						mu.Unlock()
					}()
				}
				wg.Wait()
				relayed, relayedWindow := window(relayedStreams)
				straight, straightWindow := window(straightStreams)
				require.NotEmpty(b, relayedWindow, "no moment when all %d relayed streams ran at once", streams)
				require.NotEmpty(b, straightWindow, "no moment when all %d direct streams ran at once", streams)
				b.ReportMetric(ms(percentile(relayedWindow, 50)-percentile(straightWindow, 50)), "concurrent-added-p50-ms")
				b.ReportMetric(ms(percentile(relayedWindow, 99)-percentile(straightWindow, 99)), "concurrent-added-p99-ms")
				b.ReportMetric(ms(percentile(relayedWindow, 99)), "concurrent-relay-p99-ms")
				b.ReportMetric(ms(percentile(straightWindow, 99)), "concurrent-direct-p99-ms")
				b.ReportMetric(ms(percentile(relayed, 50)), "relay-p50-ms")
				b.ReportMetric(ms(percentile(relayed, 99)), "relay-p99-ms")
				b.ReportMetric(ms(percentile(straight, 50)), "direct-p50-ms")
				b.ReportMetric(ms(percentile(straight, 99)), "direct-p99-ms")
				b.ReportMetric(ms(percentile(relayed, 50)-percentile(straight, 50)), "added-p50-ms")
				b.ReportMetric(ms(percentile(relayed, 99)-percentile(straight, 99)), "added-p99-ms")
			}
		})
	}
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }
