package chat

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// logOf numbers events of one epoch from seq `first`.
func logOf(epoch string, first int64, bodies ...string) []events.Raw {
	out := make([]events.Raw, len(bodies))
	for i, b := range bodies {
		seq := first + int64(i)
		out[i] = events.Raw{Seq: seq, Epoch: epoch, JSON: []byte(fmt.Sprintf(`{"seq":%d,"epoch":%q,%s}`, seq, epoch, b))}
	}
	return out
}

func TestPartialsSayWhenTheirBeginningIsMissing(t *testing.T) {
	const user = `"type":"message","message":{"role":"user"}`
	delta := func(id, text string) string {
		return fmt.Sprintf(`"type":"stream","message_id":%q,"delta":%q`, id, text)
	}
	head := func(seq int64) events.Cursor { return events.Cursor{Epoch: "e2", Seq: seq} }

	// The log reaches back to the turn's start: the text is whole.
	got := partialsOf(logOf("e2", 1, user, `"type":"status","status":"active"`, delta("m", "Hel"), delta("m", "lo")), head(4))
	assert.Equal(t, []partial{{MessageID: "m", Text: "Hello"}}, got)

	// Redis lost its data mid-reply: the new epoch starts with a delta (and the title, which is
	// published while the first reply streams, proves nothing).
	got = partialsOf(logOf("e2", 1, delta("m", "lo"), `"type":"title_update","title":"Greeting"`, delta("m", " there")), head(3))
	assert.Equal(t, []partial{{MessageID: "m", Text: "lo there", Incomplete: true}}, got)

	// A later step of the same turn began inside the window: whole, even though the window
	// starts in the middle of the previous step.
	got = partialsOf(logOf("e2", 1, delta("m1", "x"), `"type":"stream_end","message_id":"m1"`,
		`"type":"tool_update","tool_call_id":"c","tool":"t","status":"done"`, delta("m2", "All done")), head(4))
	assert.Equal(t, []partial{{MessageID: "m2", Text: "All done"}}, got)

	// A retry starts the message over: what follows it is whole, and listed once.
	got = partialsOf(logOf("e2", 1, delta("m", "Hel"), `"type":"retry","message_id":"m","attempt":2`, delta("m", "Hi")), head(3))
	assert.Equal(t, []partial{{MessageID: "m", Text: "Hi"}}, got)

	// Reasoning that began before the window makes the partial incomplete too.
	got = partialsOf(logOf("e2", 1, `"type":"thinking","message_id":"m","delta":"ledger"`,
		`"type":"thinking_end","message_id":"m","size":6`, delta("m", "Use 0L")), head(3))
	assert.Equal(t, []partial{{MessageID: "m", Text: "Use 0L", Reasoning: "ledger", Incomplete: true}}, got)

	// Events past the head, or of another epoch, are not part of the snapshot.
	got = partialsOf(append(logOf("e1", 1, user), logOf("e2", 1, delta("m", "new"))...), head(1))
	assert.Equal(t, []partial{{MessageID: "m", Text: "new", Incomplete: true}}, got)
	got = partialsOf(logOf("e2", 1, user, delta("m", "a"), delta("m", "b")), head(2))
	assert.Equal(t, []partial{{MessageID: "m", Text: "a"}}, got)

	// After a lost log the publisher sends a reset with the whole text: the partial is whole
	// again, and later deltas append to it.
	reset := func(id, text string) string {
		return fmt.Sprintf(`"type":"stream","message_id":%q,"delta":"","text":%q`, id, text)
	}
	got = partialsOf(logOf("e2", 1, delta("m", "lo"), reset("m", "Hello"), delta("m", " there")), head(3))
	assert.Equal(t, []partial{{MessageID: "m", Text: "Hello there"}}, got)

	// A frame that timed out in a hung Redis lands after the reset that followed it: its n says
	// it is older, and its text is already in the reset.
	numbered := func(n int, body string) string { return fmt.Sprintf(`%s,"n":%d`, body, n) }
	got = partialsOf(logOf("e1", 1, user, numbered(1, delta("m", "Hel")), numbered(3, reset("m", "Hello wor")),
		numbered(2, delta("m", "lo wor")), numbered(4, delta("m", "ld"))), events.Cursor{Epoch: "e1", Seq: 5})
	assert.Equal(t, []partial{{MessageID: "m", Text: "Hello world", Reset: 3}}, got)
}

// Issue 10: init sent the oldest 500 messages, so a client reconnecting to a long conversation
// did not see its latest messages. It sends the newest, in order.
func TestInitSnapshotHoldsTheNewestMessages(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.New(t)

	agent := storetest.Agent(t, st)
	var msgs []store.Message
	for i := 1; i <= initMessageLimit+120; i++ {
		msgs = append(msgs, store.Message{ID: uuid.New(), AgentID: agent.ID, Seq: int64(i), Role: "user", Content: fmt.Sprint("message ", i)})
	}
	require.NoError(t, st.SaveMessages(ctx, msgs))

	// An idle agent's snapshot needs neither Temporal nor the event log.
	s := &Streams{Store: st, Deps: httpx.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	init, err := s.snapshot(ctx, agent, events.AgentTopic(agent.ID.String()), events.Cursor{})
	require.NoError(t, err)
	got := init.Messages
	require.Len(t, got, initMessageLimit)
	assert.Equal(t, "message 121", got[0].Content)
	assert.Equal(t, fmt.Sprint("message ", initMessageLimit+120), got[len(got)-1].Content)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].Seq, got[i].Seq, "in seq order")
	}
}
