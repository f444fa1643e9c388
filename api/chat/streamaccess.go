package chat

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

// Close codes for a stream whose caller lost access while it was open (docs/events.md).
const (
	CloseTokenExpired  = 4001 // the token's exp passed; reconnect with a fresh token
	CloseAccessRevoked = 4003 // the caller is no longer a member of the workspace
)

// DefaultAccessCheckEvery is how often open streams re-check membership when
// Server.AccessCheckEvery is unset (STREAM_ACCESS_CHECK_INTERVAL).
const DefaultAccessCheckEvery = 15 * time.Second

// accessCheckTimeout bounds one membership query of the periodic check.
const accessCheckTimeout = 5 * time.Second

// accessEnd is why a stream must close: its close code and reason text.
type accessEnd struct {
	code   int
	reason string
}

var (
	endExpired = accessEnd{CloseTokenExpired, "token expired; reconnect with a fresh token"}
	endRevoked = accessEnd{CloseAccessRevoked, "access revoked: you are no longer a member of this workspace"}
)

// accessKey is what a stream's access depends on: one user in one workspace (an agent's
// stream is its workspace's).
type accessKey struct {
	workspace uuid.UUID
	user      string
}

// streamGuard ends one open stream when its caller's access does: at the token's expiry, when
// the periodic check finds the membership gone, or when a command is refused for either.
type streamGuard struct {
	key     accessKey
	expires time.Time
	ended   chan accessEnd // holds the first reason; the relay closes the stream with it
	timer   *time.Timer
}

func (g *streamGuard) end(e accessEnd) {
	select {
	case g.ended <- e:
	default: // already ending
	}
}

// guardStream starts watching a stream's access; the caller releases it when the stream ends.
func (s *Streams) guardStream(workspace uuid.UUID, user string, expires time.Time) *streamGuard {
	g := &streamGuard{key: accessKey{workspace, user}, expires: expires, ended: make(chan accessEnd, 1)}
	// A token accepted within auth.Leeway of its exp ends at once: the client refreshes it.
	g.timer = time.AfterFunc(time.Until(expires), func() { g.end(endExpired) })
	s.access.add(s, g)
	return g
}

func (s *Streams) releaseStream(g *streamGuard) {
	g.timer.Stop()
	s.access.remove(g)
}

// commandAccess re-checks, before a WebSocket command runs, what the REST route would check
// on its request: an unexpired token and (with a fresh query) membership. It returns the
// refusal (zero when allowed) and, when access is gone, how the stream must end.
func (s *Streams) commandAccess(ctx context.Context, g *streamGuard) (outcome, accessEnd) {
	if !time.Now().Before(g.expires) {
		return failure(http.StatusUnauthorized, "unauthorized", "token has expired; reconnect with a fresh token"), endExpired
	}
	ok, err := s.isMember(ctx, g.key)
	if err != nil {
		s.Log.Warn("command access check", "error", err)
		return failure(http.StatusServiceUnavailable, "unavailable", "the database is unavailable, try again shortly"), accessEnd{}
	}
	if !ok {
		return failure(http.StatusForbidden, "forbidden", "you are no longer a member of this workspace"), endRevoked
	}
	return outcome{}, accessEnd{}
}

// isMember is the REST routes' membership check (a direct workspace member, or an org owner or
// admin): one query on primary keys. A deleted workspace is no membership.
func (s *Streams) isMember(ctx context.Context, k accessKey) (bool, error) {
	w, err := s.Store.WorkspaceAccess(ctx, k.workspace, k.user)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return w.Role != "", nil
}

// accessWatch is the process's register of open streams by (workspace, user). One goroutine,
// running while streams are open, re-checks each distinct pair once per period, however many
// streams (tabs, topics) share it.
type accessWatch struct {
	mu      sync.Mutex
	streams map[accessKey]map[*streamGuard]struct{}
	running bool
}

func (w *accessWatch) add(s *Streams, g *streamGuard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.streams == nil {
		w.streams = map[accessKey]map[*streamGuard]struct{}{}
	}
	set := w.streams[g.key]
	if set == nil {
		set = map[*streamGuard]struct{}{}
		w.streams[g.key] = set
	}
	set[g] = struct{}{}
	if !w.running {
		w.running = true
		go s.watchAccess()
	}
}

func (w *accessWatch) remove(g *streamGuard) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if set := w.streams[g.key]; set != nil {
		delete(set, g)
		if len(set) == 0 {
			delete(w.streams, g.key)
		}
	}
}

// keys lists the watched pairs; with none it stops the watcher (running false) and returns nil.
func (w *accessWatch) keys() []accessKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.streams) == 0 {
		w.running = false
		return nil
	}
	keys := make([]accessKey, 0, len(w.streams))
	for k := range w.streams {
		keys = append(keys, k)
	}
	return keys
}

func (w *accessWatch) revoke(k accessKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for g := range w.streams[k] {
		g.end(endRevoked)
	}
}

// watchAccess re-checks every watched pair each period until no stream is open. A failing
// database closes nothing (the streams were authorised and a reconnect would fail too); the
// next period checks again.
func (s *Streams) watchAccess() {
	every := s.AccessCheckEvery
	if every <= 0 {
		every = DefaultAccessCheckEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for range tick.C {
		keys := s.access.keys()
		if keys == nil {
			return
		}
		for _, k := range keys {
			ctx, cancel := context.WithTimeout(context.Background(), accessCheckTimeout)
			ok, err := s.isMember(ctx, k)
			cancel()
			switch {
			case err != nil:
				s.Log.Warn("stream access check", "error", err)
			case !ok:
				s.access.revoke(k)
			}
		}
	}
}
