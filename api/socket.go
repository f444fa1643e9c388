package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/websocket"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
)

const (
	socketWriteTimeout = 10 * time.Second
	socketPingEvery    = 25 * time.Second
	socketPongWait     = 60 * time.Second
	initMessageLimit   = 500
	// clientBuffer is how many events may wait for one slow client before it is cut off.
	clientBuffer = 512
)

// Close codes (docs/events.md).
const (
	CloseSlowConsumer = 4008 // the client fell behind; reconnect with after=<seq>
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
	send(seq int64, raw []byte) error
	ping() error
	close(code int, reason string)
}

// streamStart validates everything that can fail with a status before the upgrade: origin,
// agent, cursor; then it subscribes, so nothing published from here on is missed.
func (s *Server) streamStart(c *gin.Context, after string) (store.Agent, int64, *events.Listener, bool) {
	if !s.originAllowed(c.Request) {
		fail(c, http.StatusForbidden, "origin_not_allowed", "this origin may not open event streams; add it to ALLOWED_ORIGINS")
		return store.Agent{}, 0, nil, false
	}
	agent, ok := s.loadAgent(c)
	if !ok {
		return agent, 0, nil, false
	}
	cursor, l, ok := s.subscribe(c, events.AgentTopic(agent.ID.String()), after)
	return agent, cursor, l, ok
}

// subscribe parses the resume cursor and subscribes to a topic, or answers 400/503.
func (s *Server) subscribe(c *gin.Context, topic, after string) (int64, *events.Listener, bool) {
	cursor := int64(-1)
	if after != "" {
		n, err := strconv.ParseInt(after, 10, 64)
		if err != nil || n < 0 {
			badRequest(c, "invalid_cursor", "after must be a non-negative event seq")
			return 0, nil, false
		}
		cursor = n
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	l, err := s.Hub.Subscribe(ctx, topic, clientBuffer)
	if err != nil {
		s.Log.Warn("subscribe", "error", err)
		unavailable(c, "the event stream")
		return 0, nil, false
	}
	return cursor, l, true
}

// workspaceSocket streams a workspace's topic (sync progress and other workspace-wide events),
// with the same resume semantics as an agent's; init carries the workspace.
func (s *Server) workspaceSocket(c *gin.Context) {
	if !s.originAllowed(c.Request) {
		fail(c, http.StatusForbidden, "origin_not_allowed", "this origin may not open event streams; add it to ALLOWED_ORIGINS")
		return
	}
	w, ok := s.workspaceAccess(c, "id", false)
	if !ok {
		return
	}
	topic := events.WorkspaceTopic(w.ID.String())
	after, l, ok := s.subscribe(c, topic, c.Query("after"))
	if !ok {
		return
	}
	s.serveSocket(c, l, func(ctx context.Context, cancel context.CancelFunc, ws *wsSink) {
		go drainReads(ws.conn, cancel)
		s.relayTopic(ctx, topic, after, l, ws, func(ctx context.Context, seq int64) (gin.H, error) {
			return gin.H{"type": "init", "seq": seq, "workspace": w}, nil
		})
	})
}

// serveSocket switches to the WebSocket protocol and runs serve on its own goroutine, then the
// handler returns, so net/http releases the request's buffers and the handler's deep stack: an
// idle connection costs only the socket, the relay and the reader. serve's context ends when
// the client goes away (cancel) or serve returns; the listener and socket are released after.
func (s *Server) serveSocket(c *gin.Context, l *events.Listener, serve func(ctx context.Context, cancel context.CancelFunc, ws *wsSink)) {
	conn, err := upgrader.Upgrade(c.Writer, c.Request, nil)
	if err != nil {
		s.Hub.Unsubscribe(l)
		return // the upgrader has written the HTTP error
	}
	// The request's context ends when the handler returns; keep its values, not its lifetime.
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Request.Context()))
	go func() {
		defer func() {
			cancel()
			s.Hub.Unsubscribe(l)
			_ = conn.Close()
		}()
		serve(ctx, cancel, &wsSink{conn: conn})
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
func (s *Server) agentSocket(c *gin.Context) {
	agent, after, l, ok := s.streamStart(c, c.Query("after"))
	if !ok {
		return
	}
	user := userOf(c)
	s.serveSocket(c, l, func(ctx context.Context, cancel context.CancelFunc, ws *wsSink) {
		go s.readCommands(ctx, cancel, ws, agent, user)
		s.relay(ctx, agent, after, l, ws)
	})
}

// agentEvents is the SSE twin of agentSocket (resume with Last-Event-ID or ?after=).
func (s *Server) agentEvents(c *gin.Context) {
	after := c.GetHeader("Last-Event-ID")
	if after == "" {
		after = c.Query("after")
	}
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
	s.relay(c.Request.Context(), agent, cursor, l, &sseSink{w: w})
}

// relay sends init (or the backlog after `after`), then live events, each once and in seq
// order; gaps in the live stream are filled from the log.
func (s *Server) relay(ctx context.Context, agent store.Agent, after int64, l *events.Listener, out sink) {
	topic := events.AgentTopic(agent.ID.String())
	s.relayTopic(ctx, topic, after, l, out, func(ctx context.Context, seq int64) (gin.H, error) {
		return s.snapshot(ctx, agent, topic, seq)
	})
}

// relayTopic is relay for any topic; snapshot builds its init frame.
func (s *Server) relayTopic(ctx context.Context, topic string, after int64, l *events.Listener, out sink,
	snapshot func(context.Context, int64) (gin.H, error)) {
	last, err := s.streamHead(ctx, topic, after, out, snapshot)
	if err != nil {
		out.close(websocket.CloseInternalServerErr, "could not load the conversation")
		return
	}
	ping := time.NewTicker(socketPingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if out.ping() != nil {
				return
			}
		case <-l.Overflow:
			out.close(CloseSlowConsumer, "too slow; reconnect with after="+strconv.FormatInt(last, 10))
			return
		case <-l.Resync:
			if last, err = s.replay(ctx, topic, last, out); err != nil {
				out.close(CloseResync, "events were lost; reconnect without after for a fresh init")
				return
			}
		case <-l.Ready:
			for _, ev := range l.Take() {
				if ev.Seq <= last {
					continue
				}
				if ev.Seq > last+1 {
					if last, err = s.replay(ctx, topic, last, out); err != nil {
						out.close(CloseResync, "events were lost; reconnect without after for a fresh init")
						return
					}
					if ev.Seq <= last {
						continue
					}
				}
				if out.send(ev.Seq, ev.JSON) != nil {
					return
				}
				last = ev.Seq
			}
		}
	}
}

// streamHead sends init, or the backlog after `after` (init again when the log was trimmed).
func (s *Server) streamHead(ctx context.Context, topic string, after int64, out sink, snapshot func(context.Context, int64) (gin.H, error)) (int64, error) {
	if after >= 0 {
		last, err := s.replay(ctx, topic, after, out)
		if err != errLogTrimmed {
			return last, err
		}
	}
	seq, err := s.Bus.LastSeq(ctx, topic)
	if err != nil {
		return 0, err
	}
	init, err := snapshot(ctx, seq)
	if err != nil {
		return 0, err
	}
	raw, err := json.Marshal(init)
	if err != nil {
		return 0, err
	}
	return seq, out.send(seq, raw)
}

type relayError string

func (e relayError) Error() string { return string(e) }

const errLogTrimmed = relayError("event log trimmed")

// replay writes the logged events after `after` and returns the last seq written.
func (s *Server) replay(ctx context.Context, topic string, after int64, out sink) (int64, error) {
	backlog, complete, err := s.Bus.Since(ctx, topic, after)
	if err != nil {
		return after, err
	}
	if !complete {
		return after, errLogTrimmed
	}
	for _, ev := range backlog {
		if err := out.send(ev.Seq, ev.JSON); err != nil {
			return after, err
		}
		after = ev.Seq
	}
	return after, nil
}

// wsSink writes to a WebSocket; commands answered by the reader share its lock.
type wsSink struct {
	mu   sync.Mutex
	conn *websocket.Conn
}

func (w *wsSink) send(_ int64, raw []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
	return w.conn.WriteMessage(websocket.TextMessage, raw)
}

func (w *wsSink) ping() error {
	return w.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(socketWriteTimeout))
}

func (w *wsSink) close(code int, reason string) {
	_ = w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// sseSink writes Server-Sent Events: id is the seq, event the type.
type sseSink struct{ w gin.ResponseWriter }

func (s *sseSink) send(seq int64, raw []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	if _, err := fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", seq, head.Type, raw); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}

func (s *sseSink) ping() error {
	if _, err := fmt.Fprint(s.w, ": ping\n\n"); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}

func (s *sseSink) close(code int, reason string) {
	raw, _ := json.Marshal(gin.H{"type": "error", "error": reason, "close_code": code})
	_, _ = fmt.Fprintf(s.w, "event: error\ndata: %s\n\n", raw)
	s.w.Flush()
}
