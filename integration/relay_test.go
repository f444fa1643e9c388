package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api"
	"github.com/sapagent/sapagent/internal/events"
)

type sseEvent struct {
	ID, Event string
	Data      []byte
}

// readSSE reads Server-Sent Events until done returns true.
func readSSE(t *testing.T, e *env, path, lastEventID string, done func(sseEvent) bool) []sseEvent {
	req, _ := http.NewRequest("GET", e.stack.APIURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != nil {
				validateEvent(t, cur.Data)
				out = append(out, cur)
				if done(cur) {
					return out
				}
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = []byte(strings.TrimPrefix(line, "data: "))
		}
	}
	t.Fatalf("SSE stream ended: %v", sc.Err())
	return nil
}

func TestSSECarriesTheSameEventsAndResumesWithLastEventID(t *testing.T) {
	e := startEnv(t, nil)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "hello over SSE"}, nil))
	wsEvents := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	last := wsEvents[len(wsEvents)-1].Seq

	all := readSSE(t, e, "/api/agents/"+agent.ID+"/events", fmt.Sprint(init.Seq), func(ev sseEvent) bool { return ev.ID == fmt.Sprint(last) })
	require.Len(t, all, len(wsEvents))
	for i := range all {
		assert.JSONEq(t, string(wsEvents[i].Raw), string(all[i].Data))
		assert.Equal(t, wsEvents[i].Type, all[i].Event)
	}
	// Resuming from the middle gets exactly the rest.
	mid := all[len(all)/2]
	rest := readSSE(t, e, "/api/agents/"+agent.ID+"/events", mid.ID, func(ev sseEvent) bool { return ev.ID == fmt.Sprint(last) })
	assert.Len(t, rest, len(all)-len(all)/2-1)
	// Without a cursor the first event is init.
	first := readSSE(t, e, "/api/agents/"+agent.ID+"/events", "", func(sseEvent) bool { return true })
	assert.Equal(t, "init", first[0].Event)
}

func TestInitCarriesPartialTextAndPendingApprovals(t *testing.T) {
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	streamed := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	_ = streamed
	time.Sleep(time.Second)
	late := e.dial(agent.ID, "")
	init := late.next(5 * time.Second)
	require.Equal(t, "init", init.Type)
	var snap struct {
		Status  string `json:"status"`
		Partial []struct {
			MessageID string `json:"message_id"`
			Text      string `json:"text"`
		} `json:"partial"`
	}
	require.NoError(t, json.Unmarshal(init.Raw, &snap))
	assert.Equal(t, "active", snap.Status)
	require.Len(t, snap.Partial, 1)
	require.NotEmpty(t, snap.Partial[0].Text)
	// The late client's partial text plus its live deltas is exactly the final message.
	text := snap.Partial[0].Text
	for _, ev := range late.until(60*time.Second, isAssistantMessage) {
		if ev.Type == "stream" {
			text += ev.Delta
		}
	}
	msgs := e.messages(agent.ID)
	assert.Equal(t, msgs[len(msgs)-1].Content, text)

	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "save a note titled Audit"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	init = e.dial(agent.ID, "").next(5 * time.Second)
	var pending struct {
		Status           string `json:"status"`
		PendingApprovals []struct {
			Tool string `json:"tool"`
		} `json:"pending_approvals"`
	}
	require.NoError(t, json.Unmarshal(init.Raw, &pending))
	assert.Equal(t, "waiting", pending.Status)
	require.Len(t, pending.PendingApprovals, 1)
	assert.Equal(t, "save_note", pending.PendingApprovals[0].Tool)
}

func TestClientsCanSendMessagesApprovalsAndStopOverTheSocket(t *testing.T) {
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	sendCmd := func(cmd map[string]any) {
		raw, _ := json.Marshal(cmd)
		require.NoError(t, ws.conn.WriteMessage(websocket.TextMessage, raw))
	}
	sendCmd(map[string]any{"type": "message", "request_id": "r1", "content": "save a note titled Socket"})
	evs := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "approval_needed" })
	var ack struct {
		RequestID string `json:"request_id"`
		Status    int    `json:"http_status"`
	}
	for _, ev := range evs {
		if ev.Type == "ack" {
			require.NoError(t, json.Unmarshal(ev.Raw, &ack))
		}
	}
	assert.Equal(t, "r1", ack.RequestID)
	assert.Equal(t, 202, ack.Status)
	var need toolEvent
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Raw, &need))

	sendCmd(map[string]any{"type": "approve", "request_id": "r2", "decisions": []any{map[string]any{"tool_call_id": "nope", "approved": true}}})
	bad := ws.until(10*time.Second, func(ev event) bool { return ev.Type == "command_error" })
	assert.Contains(t, string(bad[len(bad)-1].Raw), `"http_status":404`)
	sendCmd(map[string]any{"type": "approve", "request_id": "r3", "decisions": []any{map[string]any{"tool_call_id": need.ToolCallID, "approved": true}}})
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })

	sendCmd(map[string]any{"type": "message", "request_id": "r4", "content": "tell me a long story"})
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	sendCmd(map[string]any{"type": "stop", "request_id": "r5"})
	evs = ws.until(15*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	assert.Equal(t, 1, countType(evs, "stopped"))
	sendCmd(map[string]any{"type": "teleport", "request_id": "r6"})
	bad = ws.until(10*time.Second, func(ev event) bool { return ev.Type == "command_error" })
	assert.Contains(t, string(bad[len(bad)-1].Raw), "unknown_command")
}

func TestSlowClientIsCutOffWithoutDelayingOthers(t *testing.T) {
	e := startEnv(t, nil)
	agent := e.createAgent("")
	slow := e.dial(agent.ID, "") // never reads after init
	slow.next(5 * time.Second)
	fast := e.dial(agent.ID, "")
	fastInit := fast.next(5 * time.Second)
	assert.Equal(t, 1, e.stack.API.Hub.Topics(), "two local clients share one Redis subscription")

	ctx := context.Background()
	topic := events.AgentTopic(agent.ID)
	payload := strings.Repeat("x", 4096)
	const n = 3000 // ≈12 MB: more than socket buffers and the per-client queue hold
	done := make(chan int64)
	go func() {
		var last int64
		for {
			ev := fast.next(30 * time.Second)
			last = ev.Seq
			if last >= fastInit.Seq+n {
				done <- last
				return
			}
		}
	}()
	start := time.Now()
	for i := 0; i < n; i++ {
		_, err := e.stack.Deps.Bus.Publish(ctx, topic, events.Event{Type: "stream", Fields: map[string]any{"message_id": "m", "delta": payload}})
		require.NoError(t, err)
	}
	select {
	case last := <-done:
		assert.Equal(t, fastInit.Seq+n, last, "the reading client got every event")
	case <-time.After(60 * time.Second):
		t.Fatal("the fast client was held up")
	}
	t.Logf("fast client received %d events in %v", n, time.Since(start))

	// The slow client finds its connection closed with the documented code and a resume hint.
	require.NoError(t, slow.conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	var closeErr *websocket.CloseError
	for {
		if _, _, err := slow.conn.ReadMessage(); err != nil {
			require.ErrorAs(t, err, &closeErr)
			break
		}
	}
	assert.Equal(t, api.CloseSlowConsumer, closeErr.Code)
	assert.Contains(t, closeErr.Text, "after=")
}

func TestTwoAPIProcessesServeTheSameConversation(t *testing.T) {
	e := startEnv(t, nil)
	// A second API process: its own router and hub on the same Postgres, Redis and Temporal.
	second, err := e.stack.Deps.APIServer(context.Background())
	require.NoError(t, err)
	second.Hub = e.stack.Deps.Bus.NewHub()
	defer second.Hub.Close()
	srv := httptest.NewServer(second.Router())
	defer srv.Close()

	agent := e.createAgent("")
	a := e.dial(agent.ID, "")
	a.next(5 * time.Second)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/api/agents/"+agent.ID+"/ws?access_token="+e.token, nil)
	require.NoError(t, err)
	defer conn.Close()
	b := &socket{t: t, conn: conn}
	b.next(5 * time.Second)

	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "both of you"}, nil))
	idle := func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" }
	fromA, fromB := a.until(30*time.Second, idle), b.until(30*time.Second, idle)
	require.Equal(t, len(fromA), len(fromB))
	for i := range fromA {
		assert.JSONEq(t, string(fromA[i].Raw), string(fromB[i].Raw))
	}
}

func TestRandomReconnectsNeverLoseOrRepeatText(t *testing.T) {
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	last := ws.next(5 * time.Second).Seq
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	reconnects := 0
	for {
		ev := ws.next(60 * time.Second)
		require.Equal(t, last+1, ev.Seq, "no gap, no duplicate")
		last = ev.Seq
		if ev.Type == "stream" {
			text.WriteString(ev.Delta)
		}
		if isAssistantMessage(ev) {
			require.Equal(t, ev.Message.Content, text.String())
			break
		}
		if rng.IntN(4) == 0 { // drop the connection at a random point and resume from the last seq
			_ = ws.conn.Close()
			ws = e.dial(agent.ID, fmt.Sprintf("?after=%d", last))
			reconnects++
		}
	}
	assert.Greater(t, reconnects, 5)
	msgs := e.messages(agent.ID)
	assert.Equal(t, msgs[len(msgs)-1].Content, text.String())
}

func TestWorkspaceTopicStreamsWithTheSameResumeSemantics(t *testing.T) {
	e := startEnv(t, nil)
	base := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + "/api/workspaces/" + e.ws + "/ws?access_token="
	conn, _, err := websocket.DefaultDialer.Dial(base+e.token, nil)
	require.NoError(t, err)
	ws := &socket{t: t, conn: conn}
	defer conn.Close()
	init := ws.next(5 * time.Second)
	require.Equal(t, "init", init.Type)
	topic := events.WorkspaceTopic(e.ws)
	for i := 0; i < 3; i++ {
		_, err := e.stack.Deps.Bus.Publish(context.Background(), topic, events.Event{Type: "status", Fields: map[string]any{"status": "active"}})
		require.NoError(t, err)
	}
	got := ws.until(5*time.Second, func(ev event) bool { return ev.Seq == init.Seq+3 })
	assert.Len(t, got, 3)
	conn2, _, err := websocket.DefaultDialer.Dial(base+e.token+"&after="+fmt.Sprint(init.Seq+1), nil)
	require.NoError(t, err)
	defer conn2.Close()
	rest := (&socket{t: t, conn: conn2}).until(5*time.Second, func(ev event) bool { return ev.Seq == init.Seq+3 })
	assert.Len(t, rest, 2)
	_, resp, err := websocket.DefaultDialer.Dial(base+e.tokenFor("mallory"), nil)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}
