package api

import (
	"context"
	"encoding/json"
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

// agentSocket relays an agent's events over a WebSocket. Everything that can fail with a
// status code (bad id, unknown agent, Redis down) fails before the upgrade.
//
// Without ?after the client first gets init (snapshot from Postgres, with the event seq it
// reflects); with ?after=<seq> it gets the logged events after that seq. Then live events,
// each once, in seq order; a gap in the live stream is filled from the log.
func (s *Server) agentSocket(c *gin.Context) {
	if !s.originAllowed(c.Request) {
		fail(c, http.StatusForbidden, "origin_not_allowed", "this origin may not open event streams; add it to ALLOWED_ORIGINS")
		return
	}
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	after := int64(-1)
	if v := c.Query("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequest(c, "invalid_cursor", "after must be a non-negative event seq")
			return
		}
		after = n
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.Request.Context()))
	defer cancel()
	topic := events.AgentTopic(agent.ID.String())
	// Subscribe before reading the snapshot or the log, so nothing published in between is lost.
	sub, err := s.Bus.Subscribe(ctx, topic)
	if err != nil {
		s.Log.Warn("subscribe", "error", err)
		unavailable(c, "the event stream")
		return
	}
	defer sub.Close()

	conn, err := upgrader.Upgrade(c.Writer, c.Request, nil)
	if err != nil {
		return // the upgrader has written the HTTP error
	}
	defer conn.Close()
	go s.readSocket(conn, cancel)

	last, err := s.socketStart(ctx, conn, agent, topic, after)
	if err != nil {
		s.closeSocket(conn, websocket.CloseInternalServerErr, "could not load the conversation")
		return
	}
	ping := time.NewTicker(socketPingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(socketWriteTimeout)); err != nil {
				return
			}
		case ev, open := <-sub.C:
			if !open {
				s.closeSocket(conn, websocket.CloseTryAgainLater, "event stream interrupted; reconnect with after="+strconv.FormatInt(last, 10))
				return
			}
			if ev.Seq <= last {
				continue
			}
			if ev.Seq > last+1 {
				// Pub/sub dropped something: fill the gap from the log.
				if last, err = s.replay(ctx, conn, topic, last); err != nil {
					return
				}
				if ev.Seq <= last {
					continue
				}
			}
			if err := writeRaw(conn, ev.JSON); err != nil {
				return
			}
			last = ev.Seq
		}
	}
}

// socketStart sends init or the backlog after `after`, returning the last seq sent.
func (s *Server) socketStart(ctx context.Context, conn *websocket.Conn, agent store.Agent, topic string, after int64) (int64, error) {
	if after >= 0 {
		last, err := s.replay(ctx, conn, topic, after)
		if err == nil || err != errLogTrimmed {
			return last, err
		}
		// The log no longer reaches back to `after`: resynchronise with a fresh snapshot.
	}
	seq, err := s.Bus.LastSeq(ctx, topic)
	if err != nil {
		return 0, err
	}
	msgs, err := s.Store.ListMessages(ctx, agent.ID, 0, initMessageLimit)
	if err != nil {
		return 0, err
	}
	fresh, err := s.Store.GetAgent(ctx, agent.ID)
	if err != nil {
		return 0, err
	}
	init, err := json.Marshal(gin.H{"type": "init", "seq": seq, "agent": fresh, "status": fresh.Status, "messages": msgs})
	if err != nil {
		return 0, err
	}
	return seq, writeRaw(conn, init)
}

type relayError string

func (e relayError) Error() string { return string(e) }

const errLogTrimmed = relayError("event log trimmed")

// replay writes the logged events after `after` and returns the last seq written.
func (s *Server) replay(ctx context.Context, conn *websocket.Conn, topic string, after int64) (int64, error) {
	backlog, complete, err := s.Bus.Since(ctx, topic, after)
	if err != nil {
		return after, err
	}
	if !complete {
		return after, errLogTrimmed
	}
	for _, ev := range backlog {
		if err := writeRaw(conn, ev.JSON); err != nil {
			return after, err
		}
		after = ev.Seq
	}
	return after, nil
}

// readSocket consumes client frames (pongs, close) and cancels the relay when the client goes.
func (s *Server) readSocket(conn *websocket.Conn, cancel context.CancelFunc) {
	defer cancel()
	conn.SetReadLimit(64 << 10)
	_ = conn.SetReadDeadline(time.Now().Add(socketPongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(socketPongWait)) })
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(socketPongWait))
	}
}

func (s *Server) closeSocket(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

func writeRaw(conn *websocket.Conn, raw []byte) error {
	_ = conn.SetWriteDeadline(time.Now().Add(socketWriteTimeout))
	return conn.WriteMessage(websocket.TextMessage, raw)
}
