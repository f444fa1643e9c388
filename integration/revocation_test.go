package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/chat"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// accessCheck is the test stack's STREAM_ACCESS_CHECK_INTERVAL.
const accessCheck = time.Second

// dialAs opens a WebSocket on path with token; it is closed when the test ends.
func (e *env) dialAs(token, path string) *websocket.Conn {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + path
	conn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	require.NoError(e.t, err)
	_ = resp.Body.Close()
	e.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// openSSEAs is openSSE with another user's token.
func openSSEAs(t *testing.T, e *env, token, path string) *sseStream {
	req, _ := http.NewRequest("GET", e.stack.APIURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	s := &sseStream{t: t, body: resp.Body, sc: sc, cancel: cancel}
	t.Cleanup(s.close)
	return s
}

// wsClosed reads frames until the server closes the socket (or timeout) and returns the close
// code (0 when the socket was still open at timeout) and the frames read before it.
func wsClosed(t *testing.T, conn *websocket.Conn, timeout time.Duration) (int, []map[string]any) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(timeout)))
	var frames []map[string]any
	for {
		_, raw, err := conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, frames
			}
			return 0, frames
		}
		validateEvent(t, raw)
		var f map[string]any
		require.NoError(t, json.Unmarshal(raw, &f))
		frames = append(frames, f)
	}
}

// sseClosed reads events until the server ends the stream and returns the close_code of its
// final error event (0 if none came).
func sseClosed(t *testing.T, s *sseStream, timeout time.Duration) int {
	t.Helper()
	timer := time.AfterFunc(timeout, s.close)
	defer timer.Stop()
	code := 0
	for {
		ev, ok := s.next()
		if !ok {
			return code
		}
		if ev.Event == "error" {
			var e struct {
				CloseCode int `json:"close_code"`
			}
			require.NoError(t, json.Unmarshal(ev.Data, &e))
			code = e.CloseCode
		}
	}
}

// wsReply reads frames until the answer to requestID.
func wsReply(t *testing.T, conn *websocket.Conn, requestID string) map[string]any {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for {
		_, raw, err := conn.ReadMessage()
		require.NoError(t, err)
		validateEvent(t, raw)
		var f map[string]any
		require.NoError(t, json.Unmarshal(raw, &f))
		if f["request_id"] == requestID {
			return f
		}
	}
}

func readInit(t *testing.T, conn *websocket.Conn) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, raw, err := conn.ReadMessage()
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"type":"init"`)
}

func fastAccessCheck(c *config.Config, _ *devstack.Options) { c.StreamAccessCheck = accessCheck }

// A member removed from the workspace loses every open stream within the check period (4003),
// and a command sent over the socket after the removal is refused (403) and closes it.
func TestRevokedMemberLosesOpenStreamsAndCommands(t *testing.T) {
	// Serial: asserts streams close within seconds of the removal (see TestMain).
	e := startEnv(t, fastAccessCheck)
	bob := e.tokenFor("bob")
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	agent := e.createAgent("close books").ID

	commands := e.dialAs(bob, "/api/agents/"+agent+"/ws")
	watching := e.dialAs(bob, "/api/agents/"+agent+"/ws")
	workspace := e.dialAs(bob, "/api/workspaces/"+e.ws+"/ws")
	for _, c := range []*websocket.Conn{commands, watching, workspace} {
		readInit(t, c)
	}
	sse := openSSEAs(t, e, bob, "/api/agents/"+agent+"/events")
	first, ok := sse.next()
	require.True(t, ok)
	require.Equal(t, "init", first.Event)

	// While bob is a member, commands work.
	require.NoError(t, commands.WriteJSON(map[string]any{"type": "stop", "request_id": "r0"}))
	ack := wsReply(t, commands, "r0")
	assert.Equal(t, "ack", ack["type"], "a member's command is accepted: %v", ack)

	require.Equal(t, 204, e.do("DELETE", "/api/workspaces/"+e.ws+"/members/bob", nil, nil))
	removed := time.Now()

	// The command right after the removal is refused, then the socket closes with 4003.
	require.NoError(t, commands.WriteJSON(map[string]any{"type": "message", "request_id": "r1", "content": "still here?"}))
	code, frames := wsClosed(t, commands, 5*time.Second)
	var reply map[string]any
	for _, f := range frames {
		if f["request_id"] == "r1" {
			reply = f
		}
	}
	require.NotNil(t, reply, "the command is answered: %v", frames)
	assert.Equal(t, "command_error", reply["type"])
	assert.EqualValues(t, http.StatusForbidden, reply["http_status"])
	assert.Equal(t, chat.CloseAccessRevoked, code)

	// Streams that send nothing are closed by the periodic check, within its period.
	for name, c := range map[string]*websocket.Conn{"agent socket": watching, "workspace socket": workspace} {
		code, _ := wsClosed(t, c, accessCheck+3*time.Second-time.Since(removed))
		assert.Equal(t, chat.CloseAccessRevoked, code, name)
	}
	assert.Equal(t, chat.CloseAccessRevoked, sseClosed(t, sse, accessCheck+3*time.Second-time.Since(removed)), "SSE stream")
	assert.Less(t, time.Since(removed), accessCheck+3*time.Second)

	// Nothing was delivered for bob, and he cannot come back.
	assert.Empty(t, e.messages(agent), "the refused command sent no message")
	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + "/api/agents/" + agent + "/ws"
	_, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + bob}})
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "an agent outside your workspaces is not found")
}

// A stream ends when its token expires (4001); the client reconnects with a fresh token.
func TestStreamsCloseAtTokenExpiry(t *testing.T) {
	// Serial: asserts streams close within seconds of the expiry (see TestMain).
	e := startEnv(t, fastAccessCheck)
	agent := e.createAgent("expiry").ID
	short, err := auth.Mint([]byte(e.cfg.AuthJWTSecret), "alice", 3*time.Second, "", "")
	require.NoError(t, err)
	minted := time.Now()

	sock := e.dialAs(short, "/api/agents/"+agent+"/ws")
	workspace := e.dialAs(short, "/api/workspaces/"+e.ws+"/ws")
	readInit(t, sock)
	readInit(t, workspace)
	sse := openSSEAs(t, e, short, "/api/agents/"+agent+"/events")

	// exp is whole seconds, so it falls 2-3 s after minting; auth.Leeway does not extend a stream.
	for name, c := range map[string]*websocket.Conn{"agent socket": sock, "workspace socket": workspace} {
		code, _ := wsClosed(t, c, 6*time.Second-time.Since(minted))
		assert.Equal(t, chat.CloseTokenExpired, code, name)
	}
	assert.Equal(t, chat.CloseTokenExpired, sseClosed(t, sse, 6*time.Second-time.Since(minted)), "SSE stream")
	assert.Greater(t, time.Since(minted), 1900*time.Millisecond, "not before exp")
	assert.Less(t, time.Since(minted), 5*time.Second, "at exp, not exp + leeway")

	// A fresh token reconnects, and its commands work.
	fresh := e.dialAs(e.tokenFor("alice"), "/api/agents/"+agent+"/ws")
	readInit(t, fresh)
	require.NoError(t, fresh.WriteJSON(map[string]any{"type": "stop", "request_id": "r2"}))
	assert.Equal(t, "ack", wsReply(t, fresh, "r2")["type"])
}
