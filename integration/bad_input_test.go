package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

type errorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func TestBadInputGetsAClearErrorAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(cfg *config.Config, _ *devstack.Options) { cfg.MaxMessageBytes = 1000 })
	agent := e.createAgent("")
	msgPath := "/api/agents/" + agent.ID + "/message"
	unknown := uuid.NewString()

	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		code   string
	}{
		{"empty message", "POST", msgPath, map[string]any{"content": ""}, 400, "empty_message"},
		{"blank message", "POST", msgPath, map[string]any{"content": "  \n\t "}, 400, "empty_message"},
		{"oversized message", "POST", msgPath, map[string]any{"content": strings.Repeat("x", 1001)}, 400, "message_too_large"},
		{"malformed JSON", "POST", msgPath, `{"content": "hi"`, 400, "invalid_json"},
		{"not an object", "POST", msgPath, `["hi"]`, 400, "invalid_json"},
		{"wrong type", "POST", msgPath, `{"content": 42}`, 400, "invalid_json"},
		{"unknown field", "POST", msgPath, map[string]any{"content": "hi", "role": "system"}, 400, "unknown_field"},
		{"trailing data", "POST", msgPath, `{"content": "hi"} {"content": "again"}`, 400, "invalid_json"},
		{"empty body", "POST", msgPath, ``, 400, "invalid_json"},
		{"bad client message id", "POST", msgPath, map[string]any{"content": "hi", "client_message_id": "abc"}, 400, "invalid_id"},
		{"unknown agent", "POST", "/api/agents/" + unknown + "/message", map[string]any{"content": "hi"}, 404, "not_found"},
		{"agent id not a UUID", "POST", "/api/agents/nope/message", map[string]any{"content": "hi"}, 400, "invalid_id"},
		{"messages of unknown agent", "GET", "/api/agents/" + unknown + "/messages", nil, 404, "not_found"},
		{"bad limit", "GET", "/api/agents/" + agent.ID + "/messages?limit=0", nil, 400, "invalid_limit"},
		{"bad cursor", "GET", "/api/agents/" + agent.ID + "/messages?cursor=x", nil, 400, "invalid_cursor"},
		{"bad before", "GET", "/api/agents/" + agent.ID + "/messages?before=0", nil, 400, "invalid_cursor"},
		{"before with cursor", "GET", "/api/agents/" + agent.ID + "/messages?before=5&cursor=2", nil, 400, "invalid_cursor"},
		{"unknown agent get", "GET", "/api/agents/" + unknown, nil, 404, "not_found"},
		{"over-long agent name", "POST", "/api/agents", map[string]any{"name": strings.Repeat("n", 201), "workspace_id": e.ws}, 400, "invalid_name"},
		{"bad workspace id", "POST", "/api/agents", map[string]any{"workspace_id": "w1"}, 400, "invalid_id"},
		{"missing workspace id", "POST", "/api/agents", map[string]any{"name": "x"}, 400, "missing_field"},
		{"NUL in message", "POST", msgPath, map[string]any{"content": "a\u0000b"}, 400, "invalid_text"},
		{"unknown route", "GET", "/api/nothing-here", nil, 404, "not_found"},
		{"wrong method", "DELETE", "/api/health", nil, 405, "method_not_allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got errorJSON
			status := e.do(tc.method, tc.path, tc.body, &got)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.code, got.Code)
			assert.NotEmpty(t, got.Error)
		})
	}

	// Nothing above reached the conversation: no message rows, one agent.
	assert.Empty(t, e.messages(agent.ID))
	var agents int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agents`).Scan(&agents))
	assert.Equal(t, 1, agents)
}

func TestSocketForUnknownAgentFailsBeforeUpgrade(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + "/api/agents/" + uuid.NewString() + "/ws"
	hdr := http.Header{"Authorization": {"Bearer " + e.token}}
	_, resp, err := websocket.DefaultDialer.Dial(u, hdr)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	_ = resp.Body.Close()

	agent := e.createAgent("")
	_, resp, err = websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(e.stack.APIURL, "http")+"/api/agents/"+agent.ID+"/ws?after=-3", hdr)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	_ = resp.Body.Close()
}

func TestHealthReportsEveryDependency(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	var got struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/health", nil, &got))
	assert.Equal(t, "ok", got.Status)
	assert.Equal(t, map[string]string{"postgres": "ok", "redis": "ok", "temporal": "ok"}, got.Checks)
}
