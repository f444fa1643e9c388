package integration

// What the fault suite checks after every fault, and the WebSocket client it checks with.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/chat"
	"github.com/sapagent/sapagent/workflows"
)

// --- a WebSocket client that behaves like the web chat -------------------------------------

type wsEvent struct {
	Seq        int64         `json:"seq"`
	Epoch      string        `json:"epoch"`
	Type       string        `json:"type"`
	Delta      string        `json:"delta"`
	Text       *string       `json:"text"` // a stream reset: the whole text so far
	N          int           `json:"n"`    // a stream frame's number; below the last reset: a late copy
	MessageID  string        `json:"message_id"`
	Status     string        `json:"status"`
	Attempt    int           `json:"attempt"`
	ToolCallID string        `json:"tool_call_id"`
	Tool       string        `json:"tool"`
	Result     string        `json:"result"`
	Error      string        `json:"error"`
	Message    *messageJSON  `json:"message"`
	Messages   []messageJSON `json:"messages"`
	Partial    []struct {
		MessageID string `json:"message_id"`
		Text      string `json:"text"`
		Reset     int    `json:"reset"`
	} `json:"partial"`
}

// wsFrame is one thing the client received: an event, the end of a connection (Type
// "_closed", with the close code when the server sent one), or the client leaving ("_left").
type wsFrame struct {
	conn      int
	at        time.Time
	closeCode int
	wsEvent
}

// wsClient stays connected like the web chat does: after a dropped connection it resumes with
// its last seq, after close code 4009 it reconnects for a fresh init.
type wsClient struct {
	name    string
	tp      *topology
	api     int
	agentID string

	mu         sync.Mutex
	frames     []wsFrame
	violations []string
	lastSeq    int64
	epoch      string // of lastSeq: the cursor is <epoch>:<seq>
	conns      int
	conn       *websocket.Conn
	stopped    bool
	done       chan struct{}
	inherited  int // frames carried over from the connection it resumed (resume)
}

var schemaMu sync.Mutex

// watch connects a client to api process i; after >= 0 resumes from that seq.
func (tp *topology) watch(name string, i int, agentID string, after int64) *wsClient {
	validateEvent(tp.t, []byte(`{"type":"status","seq":1,"epoch":"e1","id":"x","ts":"2026-11-22T10:00:00Z","status":"idle"}`)) // compiles the schema here
	c := &wsClient{name: name, tp: tp, api: i, agentID: agentID, lastSeq: after, done: make(chan struct{})}
	tp.sockets = append(tp.sockets, c)
	go c.run(after)
	tp.t.Cleanup(func() { c.stop() })
	return c
}

// resume reconnects a client that left, from the last seq it received, as the same client:
// what it assembled before leaving carries over.
func (tp *topology) resume(name string, i int, old *wsClient) *wsClient {
	c := &wsClient{name: name, tp: tp, api: i, agentID: old.agentID, done: make(chan struct{})}
	for _, f := range old.snapshot() {
		if f.Type != "_left" && f.Type != "_closed" {
			c.frames = append(c.frames, f)
		}
	}
	c.lastSeq, c.epoch, c.conns, c.inherited = old.lastSeq, old.epoch, old.conns, len(c.frames)
	tp.sockets = append(tp.sockets, c)
	go c.run(c.lastSeq)
	tp.t.Cleanup(func() { c.stop() })
	return c
}

func (c *wsClient) run(after int64) {
	defer close(c.done)
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	hdr := http.Header{"Authorization": {"Bearer " + c.tp.token}}
	for {
		c.mu.Lock()
		stopped := c.stopped
		c.mu.Unlock()
		if stopped {
			return
		}
		path := "/api/agents/" + c.agentID + "/ws"
		if after >= 0 {
			c.mu.Lock()
			if c.epoch != "" {
				path += fmt.Sprintf("?after=%s:%d", c.epoch, after)
			} else {
				path += fmt.Sprintf("?after=%d", after) // an old client's bare seq: always a fresh init
			}
			c.mu.Unlock()
		}
		url := "ws" + strings.TrimPrefix(c.tp.apiURLs[c.api], "http") + path
		start := time.Now()
		conn, resp, err := dialer.Dial(url, hdr)
		if err != nil {
			call := httpCall{method: "GET", path: path, took: time.Since(start), err: err.Error()}
			if resp != nil {
				call.status, call.err = resp.StatusCode, ""
				var body struct {
					Code string `json:"code"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&body)
				call.code = body.Code
				resp.Body.Close()
			}
			c.tp.http.add(call)
			time.Sleep(250 * time.Millisecond)
			continue
		}
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			conn.Close()
			return
		}
		c.conns++
		c.conn = conn
		n := c.conns
		c.mu.Unlock()
		after = c.read(conn, n, after)
	}
}

// read receives frames until the connection ends and returns the cursor to reconnect with.
func (c *wsClient) read(conn *websocket.Conn, n int, after int64) int64 {
	defer conn.Close()
	prev := after
	for {
		_, raw, err := conn.ReadMessage()
		at := time.Now()
		if err != nil {
			f := wsFrame{conn: n, at: at, wsEvent: wsEvent{Type: "_closed"}}
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				f.closeCode = ce.Code
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			c.frames = append(c.frames, f)
			if f.closeCode == chat.CloseResync {
				return -1
			}
			return c.lastSeq
		}
		var ev wsEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			c.violate("undecodable frame %s", raw)
			continue
		}
		c.validate(raw)
		c.mu.Lock()
		if ev.Type == "init" {
			prev, c.epoch = ev.Seq, ev.Epoch
		} else if ev.Epoch != c.epoch {
			c.violations = append(c.violations, fmt.Sprintf("%s: event seq %d (%s) of epoch %s after epoch %s without init", c.name, ev.Seq, ev.Type, ev.Epoch, c.epoch))
			prev, c.epoch = ev.Seq, ev.Epoch
		} else {
			switch {
			case prev >= 0 && ev.Seq <= prev:
				c.violations = append(c.violations, fmt.Sprintf("%s: event seq %d (%s) after %d: a duplicate", c.name, ev.Seq, ev.Type, prev))
			case prev >= 0 && ev.Seq > prev+1:
				c.violations = append(c.violations, fmt.Sprintf("%s: event seq %d (%s) after %d: events were skipped silently", c.name, ev.Seq, ev.Type, prev))
			}
			prev = ev.Seq
		}
		c.lastSeq = prev
		c.frames = append(c.frames, wsFrame{conn: n, at: at, wsEvent: ev})
		c.mu.Unlock()
	}
}

func (c *wsClient) validate(raw []byte) {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err == nil {
		schemaMu.Lock()
		err = eventSchema.Validate(inst)
		schemaMu.Unlock()
	}
	if err != nil {
		c.violate("frame does not match schemas/events.schema.json: %s: %v", raw, err)
	}
}

func (c *wsClient) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, c.name+": "+fmt.Sprintf(format, args...))
}

// stop disconnects for good and returns the last seq received. Streams still open then are
// not checked: the client left before they ended.
func (c *wsClient) stop() int64 {
	c.mu.Lock()
	if !c.stopped {
		c.frames = append(c.frames, wsFrame{at: time.Now(), wsEvent: wsEvent{Type: "_left"}})
	}
	c.stopped = true
	if c.conn != nil {
		_ = c.conn.Close()
	}
	c.mu.Unlock()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeq
}

func (c *wsClient) snapshot() []wsFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wsFrame(nil), c.frames...)
}

// waitFor waits until a frame at index from or later satisfies pred and returns its index.
func (c *wsClient) waitFor(d time.Duration, from int, what string, pred func(wsFrame) bool) int {
	c.tp.t.Helper()
	deadline := time.Now().Add(d)
	for {
		frames := c.snapshot()
		for i := from; i < len(frames); i++ {
			if pred(frames[i]) {
				return i
			}
		}
		if time.Now().After(deadline) {
			require.FailNow(c.tp.t, fmt.Sprintf("%s: no %s within %s", c.name, what, d), "frames: %s", describeFrames(frames[min(from, len(frames)):]))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isType(typ string) func(wsFrame) bool {
	return func(f wsFrame) bool { return f.Type == typ }
}

func describeFrames(frames []wsFrame) string {
	var b strings.Builder
	for _, f := range frames {
		switch f.Type {
		case "stream":
			b.WriteString(".")
			continue
		case "_closed":
			fmt.Fprintf(&b, "\n  [conn %d closed %d]", f.conn, f.closeCode)
		case "_left":
			b.WriteString("\n  [left]")
		default:
			fmt.Fprintf(&b, "\n  %d %s", f.Seq, strings.TrimSpace(strings.Join([]string{f.Type, f.Status, f.Tool, f.Error}, " ")))
		}
	}
	return b.String()
}

// assembled replays the frames the way the web chat's reducer does and returns, per assistant
// message, the text built from stream deltas (after the last retry marker, starting from an
// init's partial text), which messages' streams a resync interrupted, and the final view of
// the messages (from init snapshots and message events).
func assembled(frames []wsFrame) (text map[string]string, resynced map[string]bool, final map[string]messageJSON) {
	text, resynced, final = map[string]string{}, map[string]bool{}, map[string]messageJSON{}
	open := map[string]bool{} // streams in progress
	resetN := map[string]int{}
	inits := 0
	for _, f := range frames {
		switch f.Type {
		case "_closed":
			if f.closeCode == chat.CloseResync {
				for id := range open {
					resynced[id] = true
				}
			}
		case "_left":
			for id := range open {
				resynced[id] = true
			}
		case "init":
			inits++
			if inits > 1 {
				for id := range open {
					resynced[id] = true
				}
			}
			for _, m := range f.Messages {
				final[m.ID] = m
				delete(open, m.ID)
			}
			for _, p := range f.Partial {
				text[p.MessageID], open[p.MessageID], resetN[p.MessageID] = p.Text, true, p.Reset
			}
		case "retry":
			text[f.MessageID], open[f.MessageID], resetN[f.MessageID] = "", true, 0
		case "stream":
			switch {
			case f.N > 0 && f.N < resetN[f.MessageID]:
			case f.Text != nil:
				text[f.MessageID], resetN[f.MessageID] = *f.Text, f.N
			default:
				text[f.MessageID] += f.Delta
			}
			open[f.MessageID] = true
		case "message":
			if f.Message != nil {
				final[f.Message.ID] = *f.Message
				delete(open, f.Message.ID)
			}
		}
	}
	return text, resynced, final
}

// --- invariants ----------------------------------------------------------------------------

type storedMessage struct {
	ID, Role, Content, Status string
	Seq                       int64
	toolCalls                 int
}

func (tp *topology) storedMessages(agentID string) []storedMessage {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := tp.db.Query(ctx, `SELECT id::text, seq, role, content, status, parts::text FROM messages WHERE agent_id = $1 ORDER BY seq`, agentID)
	require.NoError(tp.t, err)
	defer rows.Close()
	var out []storedMessage
	for rows.Next() {
		var m storedMessage
		var parts string
		require.NoError(tp.t, rows.Scan(&m.ID, &m.Seq, &m.Role, &m.Content, &m.Status, &parts))
		var ps []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(parts), &ps)
		for _, p := range ps {
			if p.Type == "tool_call" {
				m.toolCalls++
			}
		}
		out = append(out, m)
	}
	require.NoError(tp.t, rows.Err())
	return out
}

// writeExpect is how many change-log entries a table of a simulated system must have gained
// since seq `after`: each approved write happened exactly once.
type writeExpect struct {
	sid, table string
	after      int64
	want       int
}

// checkInvariants asserts what must hold after any fault, for the given agents:
//
//	(a) every accepted (202) message has exactly one user row and exactly one final assistant reply;
//	(b) each approved write happened exactly once (the simulator's change log);
//	(c) every client's assembled text equals the stored message, or the client was told to resync;
//	(d) no 5xx answers but documented 503s (code "unavailable"), and every request was answered;
//	(e) no agent is left active: agents.status and the workflow's state are idle with nothing queued;
//	(f) no process panicked.
func (tp *topology) checkInvariants(agentIDs []string, writes []writeExpect) {
	t := tp.t
	stored := map[string]storedMessage{}
	for _, agentID := range agentIDs {
		msgs := tp.storedMessages(agentID)
		for _, m := range msgs {
			stored[m.ID] = m
		}
		assert.Empty(t, replyViolations(msgs, tp.accepted(agentID), tp.sentIDs(agentID)), "(a) every accepted message has one user row and one final reply; transcript:\n%s", describeTranscript(msgs))
	}

	for _, w := range writes {
		var got []string
		for _, ch := range tp.sim.changes(t, w.sid, w.after).Changes {
			if ch.ObjectName == w.table {
				got = append(got, fmt.Sprintf("#%d %s %s by %s", ch.Seq, ch.ChangeType, ch.ObjectName, ch.ChangedBy))
			}
		}
		assert.Len(t, got, w.want, "(b) %s: an approved write happens exactly once; change log: %v; write BAPI calls received: %d", w.sid, got, tp.sim.writeRequests())
	}

	for _, c := range tp.sockets {
		frames := c.snapshot()
		text, resynced, final := assembled(frames)
		var problems []string
		c.mu.Lock()
		problems = append(problems, c.violations...)
		c.mu.Unlock()
		for id, got := range text {
			m, ok := stored[id]
			if !ok || m.Role != "assistant" {
				continue
			}
			if got != m.Content && !resynced[id] {
				problems = append(problems, fmt.Sprintf("message %s: assembled %q, stored %q (no resync was sent)", id, got, m.Content))
			}
			if f, ok := final[id]; ok && f.Content != m.Content {
				problems = append(problems, fmt.Sprintf("message %s: the client's final view has %q, stored %q", id, f.Content, m.Content))
			}
		}
		assert.Empty(t, problems, "(c) client %s: assembled text equals the stored message or the client was told to resync; frames: %s", c.name, describeFrames(frames))
	}

	var bad []string
	for _, c := range tp.http.all() {
		switch {
		case c.status == 0:
			bad = append(bad, fmt.Sprintf("%s %s: no answer after %s: %s", c.method, c.path, c.took.Round(time.Millisecond), c.err))
		case c.status >= 500 && (c.status != http.StatusServiceUnavailable || c.code != "unavailable"):
			bad = append(bad, fmt.Sprintf("%s %s: %d %s", c.method, c.path, c.status, c.code))
		}
	}
	assert.Empty(t, bad, "(d) no 5xx but documented 503s")

	for _, agentID := range agentIDs {
		var status string
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := tp.db.QueryRow(ctx, `SELECT status FROM agents WHERE id = $1`, agentID).Scan(&status)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, workflows.StatusIdle, status, "(e) agents.status of %s", agentID)
		st, err := tp.state(agentID)
		if assert.NoError(t, err, "(e) state query of %s", agentID) {
			assert.Equal(t, workflows.StatusIdle, st.Status, "(e) workflow state of %s", agentID)
			assert.Zero(t, st.Queued, "(e) messages still queued in %s", agentID)
			assert.Empty(t, st.PendingApprovals, "(e) approvals still pending in %s", agentID)
		}
	}

	for _, p := range append(append([]*proc{}, tp.apis...), tp.workers...) {
		assert.NotContains(t, p.output(), "panic:", "(f) %s panicked", p.name)
	}
}

// replyViolations checks (a) on one agent's transcript.
func replyViolations(msgs []storedMessage, accepted map[string]string, sent map[string]bool) []string {
	var out []string
	userAt := map[string]int{}
	for i, m := range msgs {
		if m.Role != "user" {
			continue
		}
		userAt[m.ID] = i
		if !sent[m.ID] {
			out = append(out, fmt.Sprintf("user row %s (%q) was never sent", m.ID, m.Content))
		}
	}
	ids := make([]string, 0, len(accepted))
	for id := range accepted {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		i, ok := userAt[id]
		if !ok {
			out = append(out, fmt.Sprintf("accepted message %q has no user row (lost)", accepted[id]))
			continue
		}
		var finals []storedMessage
		for _, m := range msgs[i+1:] {
			if m.Role == "user" {
				break
			}
			if m.Role == "assistant" && m.toolCalls == 0 {
				finals = append(finals, m)
			}
		}
		switch {
		case len(finals) == 0:
			out = append(out, fmt.Sprintf("accepted message %q has no final assistant reply", accepted[id]))
		case len(finals) > 1:
			out = append(out, fmt.Sprintf("accepted message %q has %d final assistant replies", accepted[id], len(finals)))
		case finals[0].Status != "complete":
			out = append(out, fmt.Sprintf("accepted message %q: the reply is %s", accepted[id], finals[0].Status))
		}
	}
	return out
}

func describeTranscript(msgs []storedMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		content := m.Content
		if len(content) > 120 {
			content = content[:120] + "…"
		}
		fmt.Fprintf(&b, "  %d %s %s calls=%d %q\n", m.Seq, m.Role, m.Status, m.toolCalls, content)
	}
	return b.String()
}

// mustSettle waits for the agent to finish everything it accepted.
func (tp *topology) mustSettle(agentID string, d time.Duration) {
	tp.t.Helper()
	if !tp.settle(agentID, d) {
		st, err := tp.state(agentID)
		require.FailNow(tp.t, fmt.Sprintf("agent %s did not go idle within %s", agentID, d),
			"state %+v (err %v); transcript:\n%s", st, err, describeTranscript(tp.storedMessages(agentID)))
	}
}
