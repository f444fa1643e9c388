package chat

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

func accessTestStore(t *testing.T) *store.Store {
	st, _ := storetest.New(t)
	return st
}

func ended(g *streamGuard) (accessEnd, bool) {
	select {
	case e := <-g.ended:
		return e, true
	default:
		return accessEnd{}, false
	}
}

// Every stream of a removed member ends within one check period; other users' streams and the
// expiry timer are untouched; the watcher stops once no stream is open.
func TestRemovedMembersStreamsEndWithinOnePeriod(t *testing.T) {
	ctx := context.Background()
	st := accessTestStore(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	_, _, err = st.SetOrgMember(ctx, org.ID, "bob", store.RoleMember)
	require.NoError(t, err)
	_, err = st.SetWorkspaceMember(ctx, ws.ID, "bob", store.RoleMember, "alice")
	require.NoError(t, err)

	period := 200 * time.Millisecond
	s := &Streams{Store: st, Deps: httpx.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, AccessCheckEvery: period}
	later := time.Now().Add(time.Hour)
	bobs := []*streamGuard{s.guardStream(ws.ID, "bob", later), s.guardStream(ws.ID, "bob", later), s.guardStream(ws.ID, "bob", later)}
	alices := s.guardStream(ws.ID, "alice", later)
	s.access.mu.Lock()
	assert.Len(t, s.access.streams, 2, "one entry per user and workspace")
	s.access.mu.Unlock()

	time.Sleep(2 * period)
	for _, g := range append(bobs, alices) {
		_, done := ended(g)
		assert.False(t, done, "members keep their streams")
	}
	_, err = st.RemoveWorkspaceMember(ctx, ws.ID, "bob", "alice")
	require.NoError(t, err)
	time.Sleep(period + 100*time.Millisecond)
	for _, g := range bobs {
		e, done := ended(g)
		require.True(t, done)
		assert.Equal(t, CloseAccessRevoked, e.code)
	}
	_, done := ended(alices)
	assert.False(t, done)

	for _, g := range append(bobs, alices) {
		s.releaseStream(g)
	}
	time.Sleep(2 * period)
	s.access.mu.Lock()
	assert.False(t, s.access.running, "the watcher stops with the last stream")
	s.access.mu.Unlock()
}

func TestTokenExpiryEndsStreamsAndRefusesCommands(t *testing.T) {
	s := &Streams{Deps: httpx.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, AccessCheckEvery: time.Hour}
	g := s.guardStream(uuid.New(), "bob", time.Now().Add(50*time.Millisecond))
	defer s.releaseStream(g)
	select {
	case e := <-g.ended:
		assert.Equal(t, CloseTokenExpired, e.code)
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived its token")
	}
	// An expired token is refused before the store is asked (this Server has none).
	refusal, end := s.commandAccess(context.Background(), g)
	assert.Equal(t, http.StatusUnauthorized, refusal.status)
	assert.Equal(t, CloseTokenExpired, end.code)
}
