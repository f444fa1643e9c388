package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkerRestartMidStreamCompletesTheTurnOnce(t *testing.T) {
	t.Parallel()
	e := startEnv(t, scriptedTools)
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "tell me a long story"}, nil))
	ws.until(30*time.Second, func(ev event) bool { return ev.Type == "stream" })
	require.NoError(t, e.stack.RestartWorker())

	evs := ws.until(90*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	assert.Equal(t, 1, countType(evs, "retry"), "clients are told to drop the partial text")
	assert.Zero(t, countType(evs, "stopped"), "a restart is not a user stop")
	// The text streamed after the retry marker assembles into the stored reply.
	var after strings.Builder
	retried := false
	var final *messageJSON
	for _, ev := range evs {
		switch {
		case ev.Type == "retry":
			retried, after = true, strings.Builder{}
		case ev.Type == "stream" && retried:
			after.WriteString(ev.Delta)
		case isAssistantMessage(ev):
			final = ev.Message
		}
	}
	require.NotNil(t, final)
	assert.Equal(t, final.Content, after.String())

	msgs := e.messages(agent.ID)
	require.Len(t, msgs, 2, "the final assistant message exists exactly once")
	assert.Equal(t, "complete", msgs[1].Status)
	var n int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM messages WHERE agent_id = $1 AND role = 'assistant'`, agent.ID).Scan(&n))
	assert.Equal(t, 1, n)
}
