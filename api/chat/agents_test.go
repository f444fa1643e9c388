package chat

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
)

// Attachments must be distinct files of the agent's workspace the sender can see; anything
// else is 400 invalid_attachment, decided before Temporal is asked.
func TestAttachmentsAreCheckedBeforeDelivery(t *testing.T) {
	ctx := context.Background()
	st := accessTestStore(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	other, err := st.CreateWorkspace(ctx, org.ID, "Sales", "alice")
	require.NoError(t, err)
	file := func(wsID uuid.UUID) uuid.UUID {
		id := uuid.New()
		_, err := st.CreateFile(ctx, store.File{ID: id, WorkspaceID: wsID, UploadedBy: "alice", Name: "a.txt", ContentType: "text/plain",
			Size: 1, SHA256: "00", StorageKey: wsID.String() + "/" + id.String()}, 0)
		require.NoError(t, err)
		return id
	}
	mine, elsewhere := file(ws.ID), file(other.ID)
	s := &Conversations{Store: st, Deps: httpx.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	agent := store.Agent{ID: uuid.New(), WorkspaceID: ws.ID}

	ids, o := s.checkAttachments(ctx, agent, "alice", []string{mine.String()})
	require.Zero(t, o.status)
	assert.Equal(t, []string{mine.String()}, ids)

	tooMany := make([]string, 11)
	for i := range tooMany {
		tooMany[i] = uuid.NewString()
	}
	for name, list := range map[string][]string{
		"not a uuid":      {"report.pdf"},
		"twice":           {mine.String(), mine.String()},
		"other workspace": {elsewhere.String()},
		"unknown":         {uuid.NewString()},
		"eleven":          tooMany,
	} {
		_, o := s.checkAttachments(ctx, agent, "alice", list)
		assert.Equal(t, http.StatusBadRequest, o.status, name)
		assert.Equal(t, "invalid_attachment", o.body.(httpx.Error).Code, name)
	}
	// A user who cannot see the workspace cannot attach its files (same answer as unknown).
	_, o = s.checkAttachments(ctx, agent, "mallory", []string{mine.String()})
	assert.Equal(t, http.StatusBadRequest, o.status)
}
