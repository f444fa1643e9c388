package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/chat"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/testenv"
)

// privateRedis runs a Redis server of this test's own, so it can be stopped and restarted.
type privateRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

// startPrivateRedis starts a Redis of the test's own on a free port, stopped at the end.
func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Missing(t, "redis-server is not installed")
	}
	rd := &privateRedis{t: t, port: freePort(t)}
	rd.start()
	t.Cleanup(rd.stop)
	return rd
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
	t.Parallel()
	rd := startPrivateRedis(t)
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
	assert.Equal(t, chat.CloseResync, closeErr.Code)

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

// Redis restarts empty in the middle of a reply, with one client connected and another that
// read the start of the turn and comes back later with its cursor. Numbering restarts, so
// the old cursors could pass for positions in the new stream; the epoch tells them apart:
// every client is resynchronised and ends with the stored text (the publisher follows the
// first frame of the new numbering with a reset holding the whole text, issue 18).
func TestRedisRestartedEmptyMidReplyResynchronisesEveryClient(t *testing.T) {
	t.Parallel()
	rd := startPrivateRedis(t)
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.RedisURL = fmt.Sprintf("redis://127.0.0.1:%d/0", rd.port)
		scriptedTools(c, o)
	})
	agent := e.createAgent("")
	live := e.dial(agent.ID, "")
	init := live.next(5 * time.Second)
	away := e.dial(agent.ID, "")
	away.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	seen := away.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	awayCursor := seen[len(seen)-1].cursor()
	_ = away.conn.Close()
	var last event
	for deltas := 0; deltas < 3; {
		last = live.next(30 * time.Second)
		if last.Type == "stream" {
			deltas++
		}
	}

	rd.stop()
	rd.start()

	// The connected client gets the rest of the old epoch at most, then 4009.
	require.NoError(t, live.conn.SetReadDeadline(time.Now().Add(60*time.Second)))
	var closeErr *websocket.CloseError
	for {
		_, raw, err := live.conn.ReadMessage()
		if err != nil {
			require.ErrorAs(t, err, &closeErr)
			break
		}
		validateEvent(t, raw)
		var ev event
		require.NoError(t, json.Unmarshal(raw, &ev))
		require.Equal(t, init.Epoch, ev.Epoch, "an event of the new numbering reached the old stream")
		require.Equal(t, last.Seq+1, ev.Seq)
		last = ev
	}
	assert.Equal(t, chat.CloseResync, closeErr.Code)

	// The reply goes on in the new epoch; wait until its seqs have passed the old cursors, so
	// the new numbering could be taken for their continuation.
	topic := events.AgentTopic(agent.ID)
	require.Eventually(t, func() bool {
		head, err := e.stack.Deps.Bus.Head(context.Background(), topic)
		return err == nil && head.Seq > last.Seq+2
	}, 30*time.Second, 50*time.Millisecond)

	// Both come back with the cursors they hold (over the socket and over SSE): fresh inits.
	type client struct {
		name  string
		init  []byte
		next  func() event
		epoch string
	}
	var clients []client
	for name, cursor := range map[string]string{"connected": last.cursor(), "away": awayCursor} {
		ws := e.dial(agent.ID, "?after="+cursor)
		first := ws.next(5 * time.Second)
		require.Equal(t, "init", first.Type, "%s client resumed with %s got the new numbering", name, cursor)
		clients = append(clients, client{name: name, init: first.Raw, next: func() event { return ws.next(60 * time.Second) }, epoch: first.Epoch})
	}
	sse := openSSE(t, e, "/api/agents/"+agent.ID+"/events", awayCursor)
	first, ok := sse.next()
	require.True(t, ok)
	require.Equal(t, "init", first.Event, "SSE resumed with %s got the new numbering", awayCursor)
	clients = append(clients, client{name: "sse", init: first.Data, next: func() event {
		ev, ok := sse.next()
		require.True(t, ok)
		var out event
		require.NoError(t, json.Unmarshal(ev.Data, &out))
		out.Raw = ev.Data
		return out
	}})

	for _, c := range clients {
		var snap struct {
			Epoch   string `json:"epoch"`
			Status  string `json:"status"`
			Partial []struct {
				MessageID  string `json:"message_id"`
				Text       string `json:"text"`
				Incomplete bool   `json:"incomplete"`
			} `json:"partial"`
		}
		require.NoError(t, json.Unmarshal(c.init, &snap))
		assert.NotEqual(t, init.Epoch, snap.Epoch, c.name)
		require.Equal(t, "active", snap.Status, "%s: the reply was still streaming", c.name)
		require.Len(t, snap.Partial, 1, c.name)
		// The new epoch's log starts in the middle of the reply, but holds the reset that
		// followed its first frame: the text so far is whole.
		assert.False(t, snap.Partial[0].Incomplete, "%s: the reset gave the whole text", c.name)
		text := snap.Partial[0].Text
		var final *messageJSON
		for final == nil {
			ev := c.next()
			assert.Equal(t, snap.Epoch, ev.Epoch, c.name)
			if ev.Type == "stream" && ev.MessageID == snap.Partial[0].MessageID {
				var reset struct {
					Text *string `json:"text"`
				}
				_ = json.Unmarshal(ev.Raw, &reset)
				if reset.Text != nil {
					text = *reset.Text
				} else {
					text += ev.Delta
				}
			}
			if isAssistantMessage(ev) {
				final = ev.Message
			}
		}
		msgs := e.messages(agent.ID)
		stored := msgs[len(msgs)-1]
		assert.Equal(t, stored.Content, final.Content, c.name)
		assert.Equal(t, stored.Content, text, "%s: what it showed is the stored reply", c.name)
	}
}
