package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/websocket"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/store"
)

const (
	// socketWriteTimeout bounds one write. A client that reads nothing for this long is gone,
	// like one that answers no ping; a shorter bound would give up in the middle of a frame,
	// after which no close frame can reach a client that merely paused.
	socketWriteTimeout = 60 * time.Second
	// socketCloseWait is how long a closing server waits for the client's close frame before it
	// closes the connection (closing with unread input makes the kernel reset it).
	socketCloseWait  = 10 * time.Second
	socketPingEvery  = 25 * time.Second
	socketPongWait   = 60 * time.Second
	initMessageLimit = 500
	// clientBuffer is how many events may wait for one slow client before it is cut off.
	clientBuffer = 512
)

// Close codes (docs/events.md).
const (
	CloseSlowConsumer = 4008 // the client fell behind; reconnect with after=<epoch>:<seq>
	CloseResync       = 4009 // the server lost events it cannot replay; reconnect without after
)

var upgrader = websocket.Upgrader{
	// Origin is checked against ALLOWED_ORIGINS before upgrading (so a refusal is a JSON 403).
	CheckOrigin: func(*http.Request) bool { return true },
	// Browsers pass the token as the subprotocol pair "bearer, <jwt>"; the server must echo one.
	Subprotocols:    []string{"bearer"},
	ReadBufferSize:  1024,
	WriteBufferSize: 4096,
	WriteBufferPool: &socketBufferPool,
}

var socketBufferPool sync.Pool

// sink is where a relay writes: a WebSocket or an SSE response.
type sink interface {
	send(pos events.Cursor, raw []byte) error
	ping() error
	close(code int, reason string)
}

// streamStart validates everything that can fail with a status before the upgrade: origin,
// agent, cursor; then it subscribes, so nothing published from here on is missed.
func (s *Streams) streamStart(c *gin.Context, after string) (store.Agent, events.Cursor, *events.Listener, bool) {
	if !s.originAllowed(c.Request) {
		httpx.Fail(c, http.StatusForbidden, "origin_not_allowed", "this origin may not open event streams; add it to ALLOWED_ORIGINS")
		return store.Agent{}, events.Cursor{}, nil, false
	}
	agent, ok := s.Conversations.loadAgent(c)
	if !ok {
		return agent, events.Cursor{}, nil, false
	}
	cursor, l, ok := s.subscribe(c, events.AgentTopic(agent.ID.String()), after)
	return agent, cursor, l, ok
}

// subscribe parses the resume cursor and subscribes to a topic, or answers 400/503. No cursor,
// or a bare seq from a client older than epochs, is the zero epoch: the stream starts with init.
func (s *Streams) subscribe(c *gin.Context, topic, after string) (events.Cursor, *events.Listener, bool) {
	var cursor events.Cursor
	if after != "" {
		var err error
		if cursor, err = events.ParseCursor(after); err != nil {
			httpx.BadRequest(c, "invalid_cursor", "after must be an event cursor <epoch>:<seq>")
			return cursor, nil, false
		}
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	l, err := s.Hub.Subscribe(ctx, topic, clientBuffer)
	if err != nil {
		s.Log.Warn("subscribe", "error", err)
		httpx.Unavailable(c, "the event stream")
		return cursor, nil, false
	}
	return cursor, l, true
}

// workspaceSocket streams a workspace's topic (sync progress and other workspace-wide events),
// with the same resume semantics as an agent's; init carries the workspace.
func (s *Streams) workspaceSocket(c *gin.Context) {
	if !s.originAllowed(c.Request) {
		httpx.Fail(c, http.StatusForbidden, "origin_not_allowed", "this origin may not open event streams; add it to ALLOWED_ORIGINS")
		return
	}
	release, ok := s.socketSlot(c)
	if !ok {
		return
	}
	w, ok := s.Access.Workspace(c, "id", false)
	if !ok {
		release()
		return
	}
	topic := events.WorkspaceTopic(w.ID.String())
	after, l, ok := s.subscribe(c, topic, c.Query("after"))
	if !ok {
		release()
		return
	}
	user, expires := httpx.User(c), httpx.Expiry(c)
	s.serveSocket(c, l, release, func(ctx context.Context, cancel context.CancelFunc, ws *wsSink) {
		go drainReads(ws.conn, cancel)
		g := s.guardStream(w.ID, user, expires)
		defer s.releaseStream(g)
		s.relayTopic(ctx, topic, after, l, ws, g.ended, func(ctx context.Context, head events.Cursor) (frames.Frame, error) {
			return frames.WorkspaceInit[store.Workspace]{Seq: head.Seq, Epoch: head.Epoch, Workspace: w}, nil
		})
	})
}

// serveSocket switches to the WebSocket protocol and runs serve on its own goroutine, then the
// handler returns, so net/http releases the request's buffers and the handler's deep stack: an
// idle connection costs only the socket, the relay and the reader. serve's context ends when
// the client goes away (cancel) or serve returns; the listener and socket are released after.
// release gives back the user's socket slot when the socket ends.
func (s *Streams) serveSocket(c *gin.Context, l *events.Listener, release func(), serve func(ctx context.Context, cancel context.CancelFunc, ws *wsSink)) {
	conn, err := upgrader.Upgrade(c.Writer, c.Request, nil)
	if err != nil {
		s.Hub.Unsubscribe(l)
		release()
		return // the upgrader has written the HTTP error
	}
	// The request's context ends when the handler returns; keep its values, not its lifetime.
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Request.Context()))
	go func() {
		defer func() {
			cancel()
			s.Hub.Unsubscribe(l)
			_ = conn.Close()
			release()
		}()
		serve(ctx, cancel, &wsSink{conn: conn, readerDone: ctx.Done()})
	}()
}

// drainReads consumes client frames (pongs, close) of a read-only stream.
func drainReads(conn *websocket.Conn, cancel context.CancelFunc) {
	defer cancel()
	_ = conn.SetReadDeadline(time.Now().Add(socketPongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(socketPongWait)) })
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
	}
}

// agentSocket relays an agent's events over a WebSocket; clients may also send commands.
func (s *Streams) agentSocket(c *gin.Context) {
	release, ok := s.socketSlot(c)
	if !ok {
		return
	}
	agent, after, l, ok := s.streamStart(c, c.Query("after"))
	if !ok {
		release()
		return
	}
	user, expires := httpx.User(c), httpx.Expiry(c)
	s.serveSocket(c, l, release, func(ctx context.Context, cancel context.CancelFunc, ws *wsSink) {
		g := s.guardStream(agent.WorkspaceID, user, expires)
		defer s.releaseStream(g)
		go s.readCommands(ctx, cancel, ws, agent, user, g)
		s.relay(ctx, agent, after, l, ws, g.ended)
	})
}

// agentEvents is the SSE twin of agentSocket (resume with Last-Event-ID or ?after=).
func (s *Streams) agentEvents(c *gin.Context) {
	after := c.GetHeader("Last-Event-ID")
	if after == "" {
		after = c.Query("after")
	}
	release, ok := s.socketSlot(c)
	if !ok {
		return
	}
	defer release()
	agent, cursor, l, ok := s.streamStart(c, after)
	if !ok {
		return
	}
	defer s.Hub.Unsubscribe(l)
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	g := s.guardStream(agent.WorkspaceID, httpx.User(c), httpx.Expiry(c))
	defer s.releaseStream(g)
	s.relay(c.Request.Context(), agent, cursor, l, &sseSink{w: w}, g.ended)
}

// relay sends init (or the backlog after `after`), then live events, each once and in seq
// order; gaps in the live stream are filled from the log. It ends, with the close code, when
// the caller's access does (ended).
func (s *Streams) relay(ctx context.Context, agent store.Agent, after events.Cursor, l *events.Listener, out sink, ended <-chan accessEnd) {
	topic := events.AgentTopic(agent.ID.String())
	s.relayTopic(ctx, topic, after, l, out, ended, func(ctx context.Context, head events.Cursor) (frames.Frame, error) {
		init, err := s.snapshot(ctx, agent, topic, head)
		return init, err
	})
}

// relayTopic is relay for any topic; snapshot builds its init frame. Its position is an epoch
// and a seq: an event of another epoch means Redis lost the topic and numbering restarted, so
// the client is told to resynchronise rather than handed the new numbering as a continuation.
func (s *Streams) relayTopic(ctx context.Context, topic string, after events.Cursor, l *events.Listener, out sink,
	ended <-chan accessEnd, snapshot func(context.Context, events.Cursor) (frames.Frame, error)) {
	pos, err := s.streamHead(ctx, topic, after, out, snapshot)
	if err != nil {
		out.close(websocket.CloseInternalServerErr, "could not load the conversation")
		return
	}
	ping := time.NewTicker(socketPingEvery)
	defer ping.Stop()
	slow := func() {
		out.close(CloseSlowConsumer, "too slow; reconnect with after="+pos.String())
	}
	lost := func() {
		out.close(CloseResync, "events were lost; reconnect without after for a fresh init")
	}
	for {
		// A client that lost access gets nothing more; one that fell behind is told so before
		// anything else: the events it still has buffered end where its resume cursor says.
		select {
		case e := <-ended:
			out.close(e.code, e.reason)
			return
		default:
		}
		select {
		case <-l.Overflow:
			slow()
			return
		default:
		}
		select {
		case <-ctx.Done():
			return
		case e := <-ended:
			out.close(e.code, e.reason)
			return
		case <-ping.C:
			if out.ping() != nil {
				return
			}
		case <-l.Overflow:
			slow()
			return
		case <-l.Resync:
			if pos, err = s.replay(ctx, topic, pos, out); err != nil {
				lost()
				return
			}
		case <-l.Ready:
			for _, ev := range l.Take() {
				if ev.Epoch == "" {
					// From a worker older than epochs (during a rolling upgrade): it counts on the
					// same counter. A restart it causes is caught as before epochs, when the
					// subscription is re-established.
					ev.Epoch = pos.Epoch
				}
				if ev.Epoch == pos.Epoch && ev.Seq <= pos.Seq {
					continue
				}
				if ev.Epoch != pos.Epoch || ev.Seq > pos.Seq+1 {
					// A gap, or another epoch: the log has what was missed, or says it cannot.
					if pos, err = s.replay(ctx, topic, pos, out); err != nil {
						lost()
						return
					}
					if ev.Epoch != pos.Epoch || ev.Seq <= pos.Seq {
						continue
					}
				}
				select {
				case e := <-ended:
					out.close(e.code, e.reason)
					return
				case <-l.Overflow:
					slow()
					return
				default:
				}
				next := events.Cursor{Epoch: pos.Epoch, Seq: ev.Seq}
				if out.send(next, ev.JSON) != nil {
					return
				}
				pos = next
			}
		}
	}
}

// streamHead sends the backlog after `after`, or init when there is no cursor, its epoch is
// not the topic's, or the log no longer reaches back to it.
func (s *Streams) streamHead(ctx context.Context, topic string, after events.Cursor, out sink, snapshot func(context.Context, events.Cursor) (frames.Frame, error)) (events.Cursor, error) {
	if after.Epoch != "" {
		pos, err := s.replay(ctx, topic, after, out)
		if err != errLogTrimmed {
			return pos, err
		}
	}
	head, err := s.Bus.Head(ctx, topic)
	if err != nil {
		return head, err
	}
	init, err := snapshot(ctx, head)
	if err != nil {
		return head, err
	}
	raw, err := frames.Marshal(init)
	if err != nil {
		return head, err
	}
	return head, out.send(head, raw)
}

type relayError string

func (e relayError) Error() string { return string(e) }

const errLogTrimmed = relayError("event log trimmed or from another epoch")

// replay writes the logged events after `after` and returns the position reached.
func (s *Streams) replay(ctx context.Context, topic string, after events.Cursor, out sink) (events.Cursor, error) {
	backlog, _, complete, err := s.Bus.Since(ctx, topic, after)
	if err != nil {
		return after, err
	}
	if !complete {
		return after, errLogTrimmed
	}
	for _, ev := range backlog {
		next := events.Cursor{Epoch: after.Epoch, Seq: ev.Seq}
		if err := out.send(next, ev.JSON); err != nil {
			return after, err
		}
		after = next
	}
	return after, nil
}

// wsSink writes to a WebSocket; commands answered by the reader share its lock.
type wsSink struct {
	mu         sync.Mutex
	conn       *websocket.Conn
	readerDone <-chan struct{} // closed when the reader stopped: the client closed or went away
}

func (w *wsSink) send(_ events.Cursor, raw []byte) error { return w.write(raw) }

// write sends one text frame (an event, or the reader's answer to a command).
func (w *wsSink) write(raw []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
	return w.conn.WriteMessage(websocket.TextMessage, raw)
}

func (w *wsSink) ping() error {
	return w.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(socketWriteTimeout))
}

// close sends the close frame behind the frames already written (a slow client reads them
// first) and waits for the client's answer, so the connection then closes without a reset that
// would discard what the client has not read yet.
func (w *wsSink) close(code int, reason string) {
	w.mu.Lock()
	err := w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(socketWriteTimeout))
	w.mu.Unlock()
	if err != nil {
		return
	}
	select {
	case <-w.readerDone:
	case <-time.After(socketCloseWait):
	}
}

// sseSink writes Server-Sent Events: id is the cursor (epoch:seq), event the type.
type sseSink struct{ w gin.ResponseWriter }

// deadline bounds the next write like a WebSocket's: a client that reads nothing is let go.
func (s *sseSink) deadline() {
	_ = http.NewResponseController(s.w).SetWriteDeadline(time.Now().Add(socketWriteTimeout))
}

func (s *sseSink) send(pos events.Cursor, raw []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	s.deadline()
	if _, err := fmt.Fprintf(s.w, "id: %s\nevent: %s\ndata: %s\n\n", pos, head.Type, raw); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}

func (s *sseSink) ping() error {
	s.deadline()
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}

// close ends an SSE stream with an error event naming the WebSocket close code; it has no id,
// so a reconnecting EventSource resumes after the last event it received.
func (s *sseSink) close(code int, reason string) {
	raw, _ := frames.Marshal(frames.Error{Error: reason, CloseCode: code})
	s.deadline()
	_, _ = fmt.Fprintf(s.w, "event: error\ndata: %s\n\n", raw)
	s.w.Flush()
}

// originAllowed checks a browser's Origin against ALLOWED_ORIGINS; non-browser clients send none.
func (s *Streams) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	for _, o := range s.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}
