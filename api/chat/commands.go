package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/sapagent/sapagent/internal/events/frames"
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
		out, _ := frames.Marshal(answer(cmd, o))
		if ws.write(out) != nil {
			return
		}
		if end.code != 0 {
			g.end(end) // the relay writes the close frame; this goroutine reads the client's answer
		}
	}
}

// answer is the ack of a command the REST route would have accepted, the command_error of one
// it would have refused; both carry what that route would have answered.
func answer(cmd command, o outcome) frames.Frame {
	result, _ := json.Marshal(o.body)
	ack := frames.Ack{RequestID: cmd.RequestID, Command: cmd.Type, HTTPStatus: o.status, Result: result}
	if o.status >= 400 {
		return frames.CommandError(ack)
	}
	return ack
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
