package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/websocket"

	"github.com/sapagent/sapagent/internal/store"
)

// command is what a client may send over the WebSocket: {"type": "message"|"approve"|"stop",
// "request_id": "..."} plus the fields of the matching REST body.
type command struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	sendMessageRequest
	approveRequest
}

// readCommands reads client frames (commands, pongs, close) until the client goes; each
// command is answered with {"type":"ack"|"command_error", "request_id", ...}. Each command
// first re-checks the caller's access (g); a refusal also closes the stream (4001/4003).
func (s *Streams) readCommands(ctx context.Context, cancel context.CancelFunc, ws *wsSink, agent store.Agent, user string, g *streamGuard) {
	defer cancel()
	conn := ws.conn
	conn.SetReadLimit(int64(6*s.MaxMessageBytes + 4096))
	_ = conn.SetReadDeadline(time.Now().Add(socketPongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(socketPongWait)) })
	for {
		kind, raw, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(socketPongWait))
		if kind != websocket.TextMessage {
			continue
		}
		var cmd command
		var o outcome
		var end accessEnd // set when the caller lost access: the stream closes after the reply
		switch {
		case json.Unmarshal(raw, &cmd) != nil:
			o = failure(http.StatusBadRequest, "invalid_json", "command is not a JSON object")
		case cmd.Type == "message":
			o, end = s.commandAllowed(ctx, g, func() outcome { return s.Conversations.deliver(ctx, agent, user, cmd.sendMessageRequest) })
		case cmd.Type == "approve":
			o, end = s.commandAllowed(ctx, g, func() outcome { return s.Conversations.decide(ctx, agent, user, cmd.approveRequest) })
		case cmd.Type == "stop":
			o, end = s.commandAllowed(ctx, g, func() outcome { return s.Conversations.stop(ctx, agent) })
		default:
			o = failure(http.StatusBadRequest, "unknown_command", "type must be message, approve or stop")
		}
		reply := gin.H{"type": "ack", "request_id": cmd.RequestID, "command": cmd.Type, "http_status": o.status, "result": o.body}
		if o.status >= 400 {
			reply["type"] = "command_error"
		}
		out, _ := json.Marshal(reply)
		if ws.write(out) != nil {
			return
		}
		if end.code != 0 {
			g.end(end) // the relay writes the close frame; this goroutine reads the client's answer
		}
	}
}

// commandAllowed makes the checks a REST mutation's request would pass: the token and
// membership (commandAccess), then the same per-user rate limit.
func (s *Streams) commandAllowed(ctx context.Context, g *streamGuard, run func() outcome) (outcome, accessEnd) {
	if refusal, end := s.commandAccess(ctx, g); refusal.status != 0 {
		return refusal, end
	}
	if ok, retry := s.Limiter.AllowMutation(ctx, g.key.user); !ok {
		return failure(http.StatusTooManyRequests, "rate_limited", "too many changes; retry after "+retry.String()), accessEnd{}
	}
	return run(), accessEnd{}
}
