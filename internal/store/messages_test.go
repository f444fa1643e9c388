package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Scrolling back from the newest messages: each page is the newest below its seq, in order,
// and only the agent's own.
func TestListMessagesBeforePagesBackwardsInOrder(t *testing.T) {
	st, _ := testStore(t)
	ctx := context.Background()
	agent := testAgent(t, st)
	other := testAgent(t, st)
	saveTurns(t, st, agent, 1, 25)
	saveTurns(t, st, other, 1, 30)

	page, err := st.ListMessagesBefore(ctx, agent, 21, 10)
	require.NoError(t, err)
	require.Len(t, page, 10)
	assert.Equal(t, int64(11), page[0].Seq)
	assert.Equal(t, int64(20), page[9].Seq)
	for _, m := range page {
		assert.Equal(t, agent, m.AgentID)
	}

	page, err = st.ListMessagesBefore(ctx, agent, 4, 10)
	require.NoError(t, err)
	require.Len(t, page, 3)
	assert.Equal(t, "message 1", page[0].Content)
	assert.Equal(t, "message 3", page[2].Content)

	page, err = st.ListMessagesBefore(ctx, agent, 1, 10)
	require.NoError(t, err)
	assert.Empty(t, page)
}
