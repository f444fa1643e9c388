package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

// rawClient counts frames on a WebSocket until it has seen want of them.
func rawClient(b *testing.B, url string, header http.Header, want int, skipFirst bool, done *sync.WaitGroup) *websocket.Conn {
	conn, _, err := websocket.DefaultDialer.Dial(url, header)
	require.NoError(b, err)
	if skipFirst {
		_, _, err := conn.ReadMessage() // init
		require.NoError(b, err)
	}
	done.Add(1)
	go func() {
		defer done.Done()
		for i := 0; i < want; i++ {
			if _, _, err := conn.ReadMessage(); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	return conn
}

// bareBroadcast is the baseline: one go-redis subscription per channel, each message written to
// every connected gorilla socket by a goroutine per socket. No auth, no log, no seq checks.
func bareBroadcast(b *testing.B, rdb *redis.Client) (*httptest.Server, func(channel string) chan []byte) {
	var mu sync.Mutex
	subs := map[string][]chan []byte{}
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch := r.URL.Query().Get("ch")
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		out := make(chan []byte, 512)
		mu.Lock()
		subs[ch] = append(subs[ch], out)
		mu.Unlock()
		go func() {
			for m := range out {
				if conn.WriteMessage(websocket.TextMessage, m) != nil {
					return
				}
			}
		}()
	}))
	ps := rdb.Subscribe(context.Background())
	go func() {
		for m := range ps.Channel(redis.WithChannelSize(4096)) {
			mu.Lock()
			for _, out := range subs[m.Channel] {
				out <- []byte(m.Payload)
			}
			mu.Unlock()
		}
	}()
	b.Cleanup(func() { _ = ps.Close(); srv.Close() })
	return srv, func(channel string) chan []byte {
		require.NoError(b, ps.Subscribe(context.Background(), channel))
		return nil
	}
}

// BenchmarkFanOut delivers events from Redis to WebSocket clients through the API (one agent to
// 1,000 clients; 1,000 agents to one client each) and through bareBroadcast in the same run,
// and reports delivered events per second, the ratio, and memory per idle connection.
func BenchmarkFanOut(b *testing.B) {
	e := startEnv(b, func(c *config.Config, _ *devstack.Options) { c.RateLimitPerMinute = 1 << 30 })
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(strings.TrimSuffix(e.cfg.RedisURL, "/0"), "redis://"), PoolSize: 64})
	defer rdb.Close()
	bare, subscribeBare := bareBroadcast(b, rdb)
	wsBase := "ws" + strings.TrimPrefix(e.stack.APIURL, "http")
	auth := http.Header{"Authorization": {"Bearer " + e.token}}
	payload := map[string]any{"message_id": "m", "delta": strings.Repeat("x", 64)}

	newAgents := func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			tx, err := e.stack.Deps.Store.Pool.Begin(ctx)
			require.NoError(b, err)
			a, err := store.CreateAgent(ctx, tx, store.Agent{ID: uuid.New(), WorkspaceID: uuid.MustParse(e.ws), CreatedBy: "alice"})
			require.NoError(b, err)
			require.NoError(b, tx.Commit(ctx))
			ids[i] = a.ID.String()
		}
		return ids
	}
	for n := 0; n < b.N; n++ {
		for _, shape := range []struct {
			name             string
			agents, perAgent int
			events           int
		}{{"1 agent x 1000 clients", 1, 1000, 100}, {"1000 agents x 1 client", 1000, 1, 20}} {
			ids := newAgents(shape.agents)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			var conns []*websocket.Conn
			for _, id := range ids {
				for c := 0; c < shape.perAgent; c++ {
					conns = append(conns, rawClient(b, wsBase+"/api/agents/"+id+"/ws", auth, shape.events, true, &wg))
				}
			}
			var after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&after)
			perConn := float64(after.HeapInuse+after.StackInuse-before.HeapInuse-before.StackInuse) / float64(len(conns))
			start := time.Now()
			publishAll(ids, shape.events, func(id string) error {
				_, err := e.stack.Deps.Bus.Publish(ctx, events.AgentTopic(id), events.Event{Type: "stream", Fields: payload})
				return err
			})
			wg.Wait()
			product := float64(len(conns)*shape.events) / time.Since(start).Seconds()
			for _, c := range conns {
				c.Close()
			}

			// The same shape through the bare baseline.
			var bwg sync.WaitGroup
			var bconns []*websocket.Conn
			channels := make([]string, len(ids))
			for i := range ids {
				channels[i] = "bench-bare:" + ids[i]
				subscribeBare(channels[i])
				for c := 0; c < shape.perAgent; c++ {
					bconns = append(bconns, rawClient(b, "ws"+strings.TrimPrefix(bare.URL, "http")+"/?ch="+channels[i], nil, shape.events, false, &bwg))
				}
			}
			time.Sleep(200 * time.Millisecond) // let the baseline register its sockets
			start = time.Now()
			raw := []byte(`{"seq":1,"type":"stream","id":"","ts":"2026-11-22T00:00:00Z","message_id":"m","delta":"` + strings.Repeat("x", 64) + `"}`)
			publishAll(channels, shape.events, func(ch string) error { return rdb.Publish(ctx, ch, raw).Err() })
			bwg.Wait()
			baseline := float64(len(bconns)*shape.events) / time.Since(start).Seconds()
			for _, c := range bconns {
				c.Close()
			}
			name := strings.ReplaceAll(shape.name, " ", "")
			b.ReportMetric(product, name+"-events/s")
			b.ReportMetric(baseline, name+"-bare-events/s")
			b.ReportMetric(product/baseline, name+"-ratio")
			b.ReportMetric(perConn/1024, name+"-KiB/conn")
			fmt.Fprintf(testWriter{b}, "%s: product %.0f ev/s, bare %.0f ev/s, ratio %.2f, %.1f KiB per connection (both ends, in-process)\n",
				shape.name, product, baseline, product/baseline, perConn/1024)
		}
	}
}

type testWriter struct{ b *testing.B }

func (w testWriter) Write(p []byte) (int, error) {
	w.b.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// publishAll publishes `events` rounds to every key with 32 concurrent publishers (as many
// activities would), each key's events staying in order.
func publishAll(keys []string, events int, publish func(string) error) {
	var wg sync.WaitGroup
	work := make(chan string)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				for i := 0; i < events; i++ {
					if err := publish(k); err != nil {
						panic(err)
					}
				}
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
}
