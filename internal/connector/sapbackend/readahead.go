package sapbackend

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
)

// Read-ahead of index pages: the platform asks for a phase's pages one after the other and
// writes each page before it asks for the next, so SAP sits idle while the platform writes.
// After serving a page the connector already reads the next one in the background and keeps it
// for the request that sends that next_cursor. This is valid against any SAP system: the page
// is exactly what the same request would read a moment later (the cursor's row check and
// relocation handle a table that moves in between either way). It runs under one of the
// system's call slots (max_concurrent_calls, shared with the protocol calls), only when one is
// free as the page is served, so it never adds a call beyond the limit; at most one page per
// system is being read ahead at a time.

const (
	// aheadTTL: a page read ahead and not asked for within this long is dropped (the platform
	// asks within seconds; a sync that stopped never asks).
	aheadTTL = time.Minute
	// aheadPages bounds the pages kept per system (one being read, one waiting to be asked for).
	aheadPages = 2
)

// aheadKey is everything that decides a page: a different user, limit or cursor never gets
// another request's page (the password only as a hash, so it is not kept in the clear).
type aheadKey struct {
	endpoint, cursor, user string
	password               [32]byte
	limit                  int
}

type aheadPage struct {
	done   chan struct{} // closed when page or err is set
	page   *sap.IndexPage
	err    error
	at     time.Time
	cancel context.CancelFunc
}

// readAhead is a system's buffer of pages read ahead, keyed by the request that will ask.
type readAhead struct {
	mu    sync.Mutex
	pages map[aheadKey]*aheadPage
	busy  chan struct{} // one read-ahead at a time per system
	ttl   time.Duration
	// timeout bounds one page read in the background (the system's call timeout).
	timeout time.Duration
	// off: max_concurrent_calls is 1, SAP's work processes are kept for the platform's calls.
	off bool
}

func newReadAhead(sys connector.System) *readAhead {
	timeout := time.Duration(sys.Timeouts.Call)
	if timeout <= 0 { // a System not from ParseConfig
		timeout = connector.DefaultCallTimeout
	}
	return &readAhead{pages: map[aheadKey]*aheadPage{}, busy: make(chan struct{}, 1), ttl: aheadTTL,
		timeout: timeout, off: sys.MaxConcurrentCalls < 2}
}

func aheadKeyOf(endpoint string, cred connector.Credentials, req sap.IndexRequest) aheadKey {
	return aheadKey{endpoint: endpoint, cursor: req.Cursor, user: cred.User, password: sha256.Sum256([]byte(cred.Password)), limit: req.Limit}
}

// take removes and returns the page kept for k, if one is and it has not expired.
func (ra *readAhead) take(k aheadKey) (*aheadPage, bool) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	ra.dropExpiredLocked(time.Now())
	p, ok := ra.pages[k]
	if ok {
		delete(ra.pages, k)
	}
	return p, ok
}

func (ra *readAhead) dropExpiredLocked(now time.Time) {
	for k, p := range ra.pages {
		if now.Sub(p.at) > ra.ttl {
			p.cancel()
			delete(ra.pages, k)
		}
	}
}

// kept is how many pages the buffer holds (tests).
func (ra *readAhead) kept() int {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return len(ra.pages)
}

// start reads the page k asks for in the background with read under a free slot of calls,
// unless none is free, a read-ahead is already running on the system or that page is already
// kept. The oldest page makes room when full.
func (ra *readAhead) start(k aheadKey, calls *connector.CallSlots, read func(ctx context.Context) (*sap.IndexPage, error)) {
	if ra.off {
		return
	}
	select {
	case ra.busy <- struct{}{}:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ra.timeout)
	ctx, release, ok := calls.TryHold(ctx)
	if !ok {
		cancel()
		<-ra.busy
		return
	}
	p := &aheadPage{done: make(chan struct{}), at: time.Now(), cancel: cancel}
	ra.mu.Lock()
	ra.dropExpiredLocked(p.at)
	if _, ok := ra.pages[k]; ok {
		ra.mu.Unlock()
		release()
		cancel()
		<-ra.busy
		return
	}
	for len(ra.pages) >= aheadPages {
		var oldest aheadKey
		var at time.Time
		for ok, op := range ra.pages {
			if at.IsZero() || op.at.Before(at) {
				oldest, at = ok, op.at
			}
		}
		ra.pages[oldest].cancel()
		delete(ra.pages, oldest)
	}
	ra.pages[k] = p
	ra.mu.Unlock()
	go func() {
		defer func() { <-ra.busy }()
		defer release()
		defer cancel()
		p.page, p.err = read(ctx)
		close(p.done)
	}()
}

// indexPage serves one page of a phase: from the read-ahead buffer when the previous page's
// request already read it, else from SAP; then it reads the following page ahead. Deltas
// (after_seq > 0) are short and poll the change log per page, so they are not read ahead.
func (b *Backend) indexPage(ctx context.Context, cred connector.Credentials, ph *phase, req sap.IndexRequest) (*sap.IndexPage, error) {
	if req.AfterSeq != 0 {
		return b.readIndexPage(ctx, cred, ph, req)
	}
	var page *sap.IndexPage
	var err error
	if p, ok := b.ahead.take(aheadKeyOf(ph.endpoint, cred, req)); ok {
		select {
		case <-p.done:
			page, err = p.page, p.err
		case <-ctx.Done():
			p.cancel()
			return nil, ctx.Err()
		}
	} else {
		page, err = b.readIndexPage(ctx, cred, ph, req)
	}
	if err == nil && page.NextCursor != "" {
		next := req
		next.Cursor = page.NextCursor
		b.ahead.start(aheadKeyOf(ph.endpoint, cred, next), b.calls, func(ctx context.Context) (*sap.IndexPage, error) {
			return b.readIndexPage(ctx, cred, ph, next)
		})
	}
	return page, err
}
