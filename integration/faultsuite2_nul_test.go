package integration

// Fault suite (issue 18): NUL characters in a tool result and in a model reply, on the split
// topology. Postgres stores no NUL; before the fix such a turn never ended (the conversation
// answered 503 to Stop and to new messages, and a reply was asked of the model again and again).
// Now the turn ends cleanly, Stop answers, and the next message is answered.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultNULInToolResultAndModelReply(t *testing.T) {
	t.Parallel()
	tp := startTopology(t, topoOptions{apis: 2, workers: 1, rules: nulRules()})
	conn := tp.connectECC()
	agent := tp.newAgent()
	c := tp.watch("watcher", 0, agent, -1)
	tp.warmUp(agent)

	for _, prompt := range []string{
		"read the NUL table on " + conn, // a helper call's arguments: refused, the script's error is the result
		"print a NUL",                   // a script's output and error hold NUL: the result is stored with U+FFFD
		"answer with a NUL",             // the model's reply and reasoning hold NUL
	} {
		from := len(c.snapshot())
		tp.sendOK(agent, prompt)
		tp.mustSettle(agent, 45*time.Second)
		// Stop answers (through the other api process), and the next message is answered.
		stop := tp.doWithin(10*time.Second, 1, "POST", "/api/agents/"+agent+"/stop", nil, nil)
		assert.Equal(t, http.StatusOK, stop.status, "%q: stop after the turn: %+v", prompt, stop)
		tp.sendOK(agent, "hello")
		tp.mustSettle(agent, 45*time.Second)
		for _, f := range c.snapshot()[from:] {
			assert.NotEqual(t, "retry", f.Type, "%q: the model was not asked again", prompt)
		}
	}

	msgs := tp.storedMessages(agent)
	var replies, results []string
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			replies = append(replies, m.Content)
		case "tool":
			results = append(results, m.Content)
		}
	}
	require.Len(t, results, 2, "one result per script")
	assert.Contains(t, results[0], "NUL character")
	assert.Contains(t, results[1], "broken\uFFFDscript")
	assert.Contains(t, replies, "A reply with a NUL \uFFFD inside.")
	assert.Equal(t, "Hello, ready when you are.", replies[len(replies)-1], "the last message was answered")
	for _, r := range append(replies, results...) {
		assert.False(t, strings.ContainsRune(r, 0))
	}
	tp.checkInvariants([]string{agent}, nil)
}
