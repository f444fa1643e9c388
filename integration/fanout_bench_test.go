package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
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
	"github.com/sapagent/sapagent/internal/events/frames"
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
// and reports delivered events per second and the ratio.
func BenchmarkFanOut(b *testing.B) {
	e := startEnv(b, func(c *config.Config, _ *devstack.Options) { c.RateLimitPerMinute = 1 << 30 })
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(strings.TrimSuffix(e.cfg.RedisURL, "/0"), "redis://"), PoolSize: 64})
	defer rdb.Close()
	bare, subscribeBare := bareBroadcast(b, rdb)
	wsBase := "ws" + strings.TrimPrefix(e.stack.APIURL, "http")
	auth := http.Header{"Authorization": {"Bearer " + e.token}}
	payload := frames.Stream{MessageID: "m", Delta: strings.Repeat("x", 64), N: 1}

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
	// One round through the product: connect, publish, wait for every client, disconnect.
	productRound := func(ids []string, perAgent, count int) float64 {
		var wg sync.WaitGroup
		var conns []*websocket.Conn
		for _, id := range ids {
			for c := 0; c < perAgent; c++ {
				conns = append(conns, rawClient(b, wsBase+"/api/agents/"+id+"/ws", auth, count, true, &wg))
			}
		}
		start := time.Now()
		publishAll(ids, count, func(id string) error {
			_, err := e.stack.Deps.Bus.Publish(ctx, events.AgentTopic(id), events.Event{Frame: payload})
			return err
		})
		wg.Wait()
		rate := float64(len(conns)*count) / time.Since(start).Seconds()
		for _, c := range conns {
			c.Close()
		}
		return rate
	}
	// The same shape through the bare baseline.
	bareRound := func(ids []string, perAgent, count int) float64 {
		var wg sync.WaitGroup
		var conns []*websocket.Conn
		channels := make([]string, len(ids))
		for i := range ids {
			channels[i] = "bench-bare:" + ids[i]
			subscribeBare(channels[i])
			for c := 0; c < perAgent; c++ {
				conns = append(conns, rawClient(b, "ws"+strings.TrimPrefix(bare.URL, "http")+"/?ch="+channels[i], nil, count, false, &wg))
			}
		}
		time.Sleep(200 * time.Millisecond) // let the baseline register its sockets
		start := time.Now()
		raw := []byte(`{"seq":1,"type":"stream","id":"","ts":"2026-11-22T00:00:00Z","message_id":"m","delta":"` + strings.Repeat("x", 64) + `"}`)
		publishAll(channels, count, func(ch string) error { return rdb.Publish(ctx, ch, raw).Err() })
		wg.Wait()
		rate := float64(len(conns)*count) / time.Since(start).Seconds()
		for _, c := range conns {
			c.Close()
		}
		return rate
	}
	const rounds = 3 // alternating, medians reported: the machines are noisy
	for n := 0; n < b.N; n++ {
		for _, shape := range []struct {
			name             string
			agents, perAgent int
			events           int
		}{{"1 agent x 1000 clients", 1, 1000, 100}, {"1000 agents x 1 client", 1000, 1, 50}} {
			ids := newAgents(shape.agents)
			var product, baseline []float64
			for r := 0; r < rounds; r++ {
				product = append(product, productRound(ids, shape.perAgent, shape.events))
				baseline = append(baseline, bareRound(ids, shape.perAgent, shape.events))
			}
			p, bare := median(product), median(baseline)
			name := strings.ReplaceAll(shape.name, " ", "")
			b.ReportMetric(p, name+"-events/s")
			b.ReportMetric(bare, name+"-bare-events/s")
			b.ReportMetric(p/bare, name+"-ratio")
			fmt.Fprintf(testWriter{b}, "%s: product %.0f ev/s, bare %.0f ev/s, ratio %.2f (medians of %d alternating rounds: product %.0f, bare %.0f)\n",
				shape.name, p, bare, p/bare, rounds, product, baseline)
		}
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
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

// TestIdleClientProcess is not a test: BenchmarkIdleConnectionMemory runs the test binary again
// with this test selected, so the clients' sockets live in another process and the benchmark
// process measures only the server's share of each connection.
func TestIdleClientProcess(t *testing.T) {
	url := os.Getenv("SAPAGENT_IDLE_CLIENT_URL")
	if url == "" {
		t.Skip("only run by BenchmarkIdleConnectionMemory")
	}
	n, err := strconv.Atoi(os.Getenv("SAPAGENT_IDLE_CLIENTS"))
	require.NoError(t, err)
	header := http.Header{}
	if tok := os.Getenv("SAPAGENT_IDLE_CLIENT_TOKEN"); tok != "" {
		header.Set("Authorization", "Bearer "+tok)
	}
	conns := make([]*websocket.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, _, err := websocket.DefaultDialer.Dial(url, header)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // the benchmark closes stdin when it has measured
	for _, c := range conns {
		_ = c.Close()
	}
}

// BenchmarkIdleConnectionMemory: 1,000 idle WebSocket clients on one agent, connected from a
// separate process; the server's heap and stacks grow by this much per connection. The bare
// baseline (bareBroadcast) is measured the same way in the same run.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	e := startEnv(b, func(c *config.Config, _ *devstack.Options) { c.RateLimitPerMinute = 1 << 30 })
	rdb := redis.NewClient(&redis.Options{Addr: strings.TrimPrefix(strings.TrimSuffix(e.cfg.RedisURL, "/0"), "redis://")})
	defer rdb.Close()
	bare, subscribeBare := bareBroadcast(b, rdb)
	subscribeBare("bench-bare-idle")
	agent := e.createAgent("idle")
	const clients = 1000
	measure := func(url, token string) float64 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClientProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SAPAGENT_IDLE_CLIENT_URL="+url, "SAPAGENT_IDLE_CLIENTS="+strconv.Itoa(clients), "SAPAGENT_IDLE_CLIENT_TOKEN="+token)
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(b, err)
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		require.NoError(b, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(b, err)
		require.Equal(b, "ready\n", line)
		time.Sleep(300 * time.Millisecond) // the last upgrades finish and reach their idle state
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		if f := os.Getenv("SAPAGENT_HEAP_PROFILE"); f != "" {
			out, _ := os.Create(f + strconv.Itoa(len(token)))
			_ = pprof.Lookup("heap").WriteTo(out, 0)
			_ = out.Close()
			b.Logf("heap +%.1f KiB/conn, stacks +%.1f KiB/conn", float64(int64(after.HeapInuse)-int64(before.HeapInuse))/clients/1024, float64(int64(after.StackInuse)-int64(before.StackInuse))/clients/1024)
		}
		_ = stdin.Close()
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		require.NoError(b, cmd.Wait())
		return float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse)) / clients / 1024
	}
	for n := 0; n < b.N; n++ {
		product := measure("ws"+strings.TrimPrefix(e.stack.APIURL, "http")+"/api/agents/"+agent.ID+"/ws", e.token)
		baseline := measure("ws"+strings.TrimPrefix(bare.URL, "http")+"/?ch=bench-bare-idle", "")
		b.ReportMetric(product, "server-KiB/conn")
		b.ReportMetric(baseline, "bare-server-KiB/conn")
		b.Logf("idle connection, server side: product %.1f KiB, bare gorilla %.1f KiB", product, baseline)
	}
}
