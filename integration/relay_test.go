package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/chat"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
)

type sseEvent struct {
	ID, Event string
	Data      []byte
}

// sseStream is an open Server-Sent Events response, read one event at a time.
type sseStream struct {
	t      *testing.T
	body   io.ReadCloser
	sc     *bufio.Scanner
	cancel context.CancelFunc
}

// openSSE opens an event stream; the connection lasts until the test ends or close.
func openSSE(t *testing.T, e *env, path, lastEventID string) *sseStream {
	req, _ := http.NewRequest("GET", e.stack.APIURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	s := &sseStream{t: t, body: resp.Body, sc: sc, cancel: cancel}
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	_ = s.body.Close()
}

// next returns the next event, or ok false when the server ended the stream.
func (s *sseStream) next() (ev sseEvent, ok bool) {
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if ev.Data != nil {
				validateEvent(s.t, ev.Data)
				return ev, true
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = []byte(strings.TrimPrefix(line, "data: "))
		}
	}
	return sseEvent{}, false
}

// readSSE reads Server-Sent Events until done returns true.
func readSSE(t *testing.T, e *env, path, lastEventID string, done func(sseEvent) bool) []sseEvent {
	s := openSSE(t, e, path, lastEventID)
	defer s.close()
	var out []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			t.Fatalf("SSE stream ended: %v", s.sc.Err())
		}
		out = append(out, ev)
		if done(ev) {
			return out
		}
	}
}

func TestSSECarriesTheSameEventsAndResumesWithLastEventID(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "hello over SSE"}, nil))
	wsEvents := ws.until(30*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	last := wsEvents[len(wsEvents)-1].cursor()

	all := readSSE(t, e, "/api/agents/"+agent.ID+"/events", init.cursor(), func(ev sseEvent) bool { return ev.ID == last })
	require.Len(t, all, len(wsEvents))
	for i := range all {
		assert.JSONEq(t, string(wsEvents[i].Raw), string(all[i].Data))
		assert.Equal(t, wsEvents[i].Type, all[i].Event)
		assert.Equal(t, wsEvents[i].cursor(), all[i].ID, "the SSE id is the resume cursor <epoch>:<seq>")
	}
	// Resuming from the middle gets exactly the rest.
	mid := all[len(all)/2]
	rest := readSSE(t, e, "/api/agents/"+agent.ID+"/events", mid.ID, func(ev sseEvent) bool { return ev.ID == last })
	assert.Len(t, rest, len(all)-len(all)/2-1)
	// Without a cursor the first event is init.
	first := readSSE(t, e, "/api/agents/"+agent.ID+"/events", "", func(sseEvent) bool { return true })
	assert.Equal(t, "init", first[0].Event)
	assert.Equal(t, last, first[0].ID)
	// A bare seq (a client from before epochs) cannot be confirmed: init, not a guess.
	first = readSSE(t, e, "/api/agents/"+agent.ID+"/events", fmt.Sprint(init.Seq), func(sseEvent) bool { return true })
	assert.Equal(t, "init", first[0].Event)
	req, _ := http.NewRequest("GET", e.stack.APIURL+"/api/agents/"+agent.ID+"/events?after=Epoch:1", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestInitCarriesPartialTextAndPendingApprovals(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	// A few deltas in, the reply has partial text for a late client (no fixed wait).
	deltas := 0
	ws.until(30*time.Second, func(ev event) bool {
		if ev.Type == "stream" {
			deltas++
		}
		return deltas == 5
	})
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
	t.Parallel()
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
	// Serial: paces its writes against the server's write timeout (see TestMain).
	e := startEnv(t, nil)
	agent := e.createAgent("")
	slow := e.dial(agent.ID, "") // stops reading after init
	slowInit := slow.next(5 * time.Second)
	fast := e.dial(agent.ID, "")
	fastInit := fast.next(5 * time.Second)
	// The fast client stands for one that keeps up: schema checks of 12 MB of frames would make
	// it the slow one on a loaded machine.
	fast.fast = true
	assert.Equal(t, 1, e.stack.API.Hub.Topics(), "two local clients share one Redis subscription")
	slowSSE := openSSE(t, e, "/api/agents/"+agent.ID+"/events", "") // stops reading after init too
	sseInit, ok := slowSSE.next()
	require.True(t, ok)
	require.Equal(t, "init", sseInit.Event)

	ctx := context.Background()
	topic := events.AgentTopic(agent.ID)
	payload := strings.Repeat("x", 4096)
	const n = 3000 // ≈12 MB: more than socket buffers and the per-client queue hold
	end := fmt.Sprintf("%s:%d", fastInit.Epoch, fastInit.Seq+n)
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
		_, err := e.stack.Deps.Bus.Publish(ctx, topic, events.Event{Frame: frames.Stream{MessageID: "m", Delta: payload, N: i + 1}})
		require.NoError(t, err)
		if i%50 == 49 {
			time.Sleep(2 * time.Millisecond) // a model streams; it does not burst 12 MB at once
		}
	}
	select {
	case last := <-done:
		assert.Equal(t, fastInit.Seq+n, last, "the reading client got every event")
	case <-time.After(60 * time.Second):
		t.Fatal("the fast client was held up")
	}
	t.Logf("fast client received %d events in %v", n, time.Since(start))

	// The slow clients pause longer than a write to them may take (the server used to give up
	// after 10 s in the middle of a frame, and the client then found a broken connection), then
	// read on: first the events already sent, then the documented close with a resume cursor.
	time.Sleep(time.Until(start.Add(15 * time.Second)))
	require.NoError(t, slow.conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	last := slowInit.Seq
	var closeErr *websocket.CloseError
	for {
		_, raw, err := slow.conn.ReadMessage()
		if err != nil {
			require.ErrorAs(t, err, &closeErr)
			break
		}
		seq, _ := peekSeq(raw)
		require.Equal(t, last+1, seq)
		last = seq
	}
	assert.Equal(t, chat.CloseSlowConsumer, closeErr.Code, "close frame, not a broken connection: %v", closeErr)
	resume := fmt.Sprintf("%s:%d", slowInit.Epoch, last)
	assert.Equal(t, "too slow; reconnect with after="+resume, closeErr.Text, "the cursor names the last event delivered")
	assert.Less(t, last, fastInit.Seq+n, "the slow client was cut off before the end")
	// Resuming there delivers exactly the rest.
	rest := e.dial(agent.ID, "?after="+resume)
	for seq := last + 1; seq <= fastInit.Seq+n; seq++ {
		require.Equal(t, seq, rest.next(10*time.Second).Seq)
	}

	// SSE ends the same way: an error event with close_code 4008 after the events sent, then
	// the end of the response; Last-Event-ID (the last id received) resumes.
	var lastID string
	var endEvent sseEvent
	for {
		ev, ok := slowSSE.next()
		require.True(t, ok, "the SSE stream ended without saying why")
		if ev.Event == "error" {
			endEvent = ev
			break
		}
		require.NotEmpty(t, ev.ID)
		lastID = ev.ID
	}
	var sseEnd struct {
		CloseCode int `json:"close_code"`
	}
	require.NoError(t, json.Unmarshal(endEvent.Data, &sseEnd))
	assert.Equal(t, chat.CloseSlowConsumer, sseEnd.CloseCode)
	assert.Contains(t, string(endEvent.Data), "after="+lastID)
	_, ok = slowSSE.next()
	assert.False(t, ok, "the response ends after the error event")
	restSSE := readSSE(t, e, "/api/agents/"+agent.ID+"/events", lastID, func(ev sseEvent) bool { return ev.ID == end })
	assert.Equal(t, "stream", restSSE[0].Event)
}

// When Redis loses a topic while clients watch it (FLUSHALL, eviction, a restart the
// subscription survives), the events that follow are numbered from 1 in a new epoch: a
// connected client is told to resynchronise instead of taking them as the continuation.
func TestClientsOfATopicRedisLostAreToldToResynchronise(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	sse := openSSE(t, e, "/api/agents/"+agent.ID+"/events", "")
	_, ok := sse.next()
	require.True(t, ok)
	ctx := context.Background()
	topic := events.AgentTopic(agent.ID)
	publish := func(count int) {
		for i := 0; i < count; i++ {
			_, err := e.stack.Deps.Bus.Publish(ctx, topic, events.Event{Frame: frames.Stream{MessageID: "m", Delta: fmt.Sprint(i), N: i + 1}})
			require.NoError(t, err)
		}
	}
	publish(3)
	got := ws.until(5*time.Second, func(ev event) bool { return ev.Seq == init.Seq+3 })
	require.Len(t, got, 3)

	keys, err := e.stack.Deps.Redis.Keys(ctx, e.cfg.RedisPrefix+"{"+topic+"}*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	require.NoError(t, e.stack.Deps.Redis.Del(ctx, keys...).Err())
	publish(6) // seq 1..6 of the new epoch: 4, 5, 6 look like the next events of the old one

	require.NoError(t, ws.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, raw, err := ws.conn.ReadMessage()
	var closeErr *websocket.CloseError
	require.ErrorAs(t, err, &closeErr, "got an event of the new numbering: %s", raw)
	assert.Equal(t, chat.CloseResync, closeErr.Code)

	for i := 0; i < 3; i++ {
		ev, ok := sse.next()
		require.True(t, ok)
		require.Equal(t, "stream", ev.Event)
	}
	end, ok := sse.next()
	require.True(t, ok)
	require.Equal(t, "error", end.Event, "got an event of the new numbering: %s", end.Data)
	assert.Contains(t, string(end.Data), `"close_code":4009`)

	// Coming back with the cursor it holds, the client gets a fresh init of the new epoch.
	again := e.dial(agent.ID, "?after="+got[2].cursor())
	fresh := again.next(5 * time.Second)
	require.Equal(t, "init", fresh.Type)
	assert.NotEqual(t, init.Epoch, fresh.Epoch)
	assert.Equal(t, int64(6), fresh.Seq)
}

func TestTwoAPIProcessesServeTheSameConversation(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	init := ws.next(5 * time.Second)
	last := init.Seq
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	var text strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	reconnects := 0
	for {
		ev := ws.next(60 * time.Second)
		require.Equal(t, last+1, ev.Seq, "no gap, no duplicate")
		require.Equal(t, init.Epoch, ev.Epoch)
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
			ws = e.dial(agent.ID, fmt.Sprintf("?after=%s:%d", init.Epoch, last))
			reconnects++
		}
	}
	assert.Greater(t, reconnects, 5)
	msgs := e.messages(agent.ID)
	assert.Equal(t, msgs[len(msgs)-1].Content, text.String())
}

func TestWorkspaceTopicStreamsWithTheSameResumeSemantics(t *testing.T) {
	t.Parallel()
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
		_, err := e.stack.Deps.Bus.Publish(context.Background(), topic, events.Event{Frame: frames.Status{Status: "active"}})
		require.NoError(t, err)
	}
	got := ws.until(5*time.Second, func(ev event) bool { return ev.Seq == init.Seq+3 })
	assert.Len(t, got, 3)
	require.NotEmpty(t, init.Epoch)
	conn2, _, err := websocket.DefaultDialer.Dial(base+e.token+"&after="+init.Epoch+":"+fmt.Sprint(init.Seq+1), nil)
	require.NoError(t, err)
	defer conn2.Close()
	rest := (&socket{t: t, conn: conn2}).until(5*time.Second, func(ev event) bool { return ev.Seq == init.Seq+3 })
	assert.Len(t, rest, 2)
	_, resp, err := websocket.DefaultDialer.Dial(base+e.tokenFor("mallory"), nil)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}
