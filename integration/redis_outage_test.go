package integration

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// privateRedis runs a Redis server of this test's own, so it can be stopped and restarted.
type privateRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func (r *privateRedis) start() {
	r.cmd = exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	require.NoError(r.t, r.cmd.Start())
	require.Eventually(r.t, func() bool {
		out, err := exec.Command("redis-cli", "-p", fmt.Sprint(r.port), "ping").Output()
		return err == nil && strings.TrimSpace(string(out)) == "PONG"
	}, 10*time.Second, 50*time.Millisecond)
}

func (r *privateRedis) stop() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

func TestRedisOutageMidTurnLosesNothingSilently(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	rd := &privateRedis{t: t, port: freePort(t)}
	rd.start()
	t.Cleanup(rd.stop)
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.RedisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", rd.port)
		scriptedTools(c, o)
	})
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second) // init
	var last int64
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	for {
		ev := ws.next(30 * time.Second)
		last = ev.Seq
		if ev.Type == "stream" {
			break
		}
	}

	rd.stop() // Redis is gone for 10 seconds, and comes back empty
	time.Sleep(10 * time.Second)
	rd.start()

	// The live client is either caught up from the log or told to resynchronise; here the log
	// was lost with Redis, so it must be told (4009) — never left waiting on a silent gap.
	require.NoError(t, ws.conn.SetReadDeadline(time.Now().Add(60*time.Second)))
	var closeErr *websocket.CloseError
	for {
		_, raw, err := ws.conn.ReadMessage()
		if err != nil {
			require.ErrorAs(t, err, &closeErr)
			break
		}
		seq, _ := peekSeq(raw)
		require.Greater(t, seq, last, "no duplicate after the outage")
		require.Equal(t, last+1, seq, "no gap after the outage")
		last = seq
	}
	assert.Equal(t, api.CloseResync, closeErr.Code)

	// The turn still completed and was stored once; a fresh init shows it.
	require.Eventually(t, func() bool {
		msgs := e.messages(agent.ID)
		return len(msgs) == 2 && msgs[1].Status == "complete"
	}, 60*time.Second, 200*time.Millisecond)
	init := e.dial(agent.ID, "").next(5 * time.Second)
	require.Len(t, init.Messages, 2)
	var n int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM messages WHERE agent_id = $1 AND role = 'assistant'`, agent.ID).Scan(&n))
	assert.Equal(t, 1, n)
}
