package sapbackend

import (
	"container/list"
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/adt"
)

// The index phases read sources through ADT, one request per object: relationships reads every
// source, custom_code the same ones again. The source cache lets custom_code (and
// s4_extensions' CDS views) reuse what relationships read, and parallel reads within a page
// hide ADT's round trips. The agent's abap_source tool never uses the cache: a user asking
// for a source gets SAP's current one.
//
// Correctness rule: an entry is valid until the next sync's probe.
//   - a full sync's probe (system_info with full_sync) and probe_changes from seq 0 clear the
//     cache: the change tables do not show every change (changes.go: CDS and tables outside
//     transports, $TMP deletions), so a full sync never reads a source cached before it began.
//     Other system_info calls (health checks, connection tests) leave it: one between two pages
//     of a sync would make the sync read every source again.
//   - every poll of SAP's change tables (probe_changes, a delta page) evicts the objects it
//     found changed, and probe_changes also those it reports: a delta re-reads exactly them.
//
// A read that began before an invalidation is not stored (generation), so a slow read cannot
// put back a source the probe just evicted.

// maxCachedSourceBytes bounds the cache's source text; the oldest entries go first.
const maxCachedSourceBytes = 64 << 20

type sourceCache struct {
	mu      sync.Mutex
	limit   int
	size    int
	gen     uint64
	entries map[string]*list.Element // by sourceKey
	order   *list.List               // of *cachedSource, oldest first
}

type cachedSource struct {
	key, name string
	src       string
	ok        bool // ADT has a source for the object
}

func newSourceCache(limit int) *sourceCache {
	return &sourceCache{limit: limit, entries: map[string]*list.Element{}, order: list.New()}
}

// sourceKey names a source as read by a user: SAP's authorizations are the user's, so one
// user's read is never served to another.
func sourceKey(cred connector.Credentials, typ, name string) string {
	return strings.ToUpper(cred.User) + "\x00" + typ + "/" + name
}

func (c *sourceCache) get(key string) (src string, ok, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.entries[key]; found {
		s := e.Value.(*cachedSource)
		return s.src, s.ok, true
	}
	return "", false, false
}

// generation is taken before a read; put stores the read only if nothing was invalidated since.
func (c *sourceCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *sourceCache) put(gen uint64, key, name, src string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || len(src) > c.limit {
		return
	}
	if e, found := c.entries[key]; found {
		c.remove(e)
	}
	c.entries[key] = c.order.PushBack(&cachedSource{key: key, name: name, src: src, ok: ok})
	c.size += len(src)
	for c.size > c.limit {
		c.remove(c.order.Front())
	}
}

func (c *sourceCache) remove(e *list.Element) {
	s := c.order.Remove(e).(*cachedSource)
	delete(c.entries, s.key)
	c.size -= len(s.src)
}

func (c *sourceCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries, c.size = map[string]*list.Element{}, 0
	c.order.Init()
}

// evict drops the changed objects' sources, whatever the type they were cached under: a
// change names an include's program as PROG, the index may have read it as INCL.
func (c *sourceCache) evict(changes []sap.Change) {
	if len(changes) == 0 {
		return
	}
	names := make(map[string]bool, len(changes))
	for _, ch := range changes {
		names[ch.ObjectName] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for e := c.order.Front(); e != nil; {
		next := e.Next()
		if names[e.Value.(*cachedSource).name] {
			c.remove(e)
		}
		e = next
	}
}

// source reads an object's source for an index phase: from the cache, else through ADT under
// one of the system's call slots. An object ADT does not have (or cannot show) has none.
func (b *Backend) source(ctx context.Context, cred connector.Credentials, o objRef) (string, bool, error) {
	a, err := b.adtClient(sap.EndpointABAPSource)
	if err != nil {
		return "", false, nil
	}
	key := sourceKey(cred, o.typ, o.name)
	if src, ok, hit := b.sources.get(key); hit {
		return src, ok, nil
	}
	gen := b.sources.generation()
	release, err := b.calls.Take(ctx)
	if err != nil {
		return "", false, err
	}
	var src string
	if o.typ == "FUNC" && o.group != "" {
		// The group from TFDIR spares the quick search that finds a function module's URI.
		src, err = a.FunctionModuleSource(ctx, adtCred(cred), o.group, o.name)
	}
	if o.typ != "FUNC" || o.group == "" || errors.Is(err, adt.ErrNotSupported) {
		src, err = a.Source(ctx, adtCred(cred), o.typ, o.name)
	}
	release()
	var ae *adt.Error
	if errors.As(err, &ae) && (ae.Kind == adt.ErrNotFound || ae.Kind == adt.ErrNotSupported) {
		b.sources.put(gen, key, o.name, "", false)
		return "", false, nil
	}
	if err != nil {
		return "", false, protoErr(err)
	}
	b.sources.put(gen, key, o.name, src, src != "")
	return src, src != "", nil
}

// fetchedSource is one object's source as a page read it.
type fetchedSource struct {
	src string
	ok  bool
}

// readSources reads the sources of refs[i] for each i in idx in parallel, each ADT request under
// one of the system's call slots (b.calls). Results keep refs' positions; the first error wins
// and cancels the reads still running.
func (b *Backend) readSources(ctx context.Context, cred connector.Credentials, refs []objRef, idx []int) ([]fetchedSource, error) {
	out := make([]fetchedSource, len(refs))
	err := b.parallel(ctx, len(idx), func(ctx context.Context, j int) error {
		src, ok, err := b.source(ctx, cred, refs[idx[j]])
		out[idx[j]] = fetchedSource{src, ok}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parallel runs f(ctx, i) for i in [0, n) on at most max_concurrent_calls goroutines (each f
// takes a slot of b.calls around its SAP request: the calling protocol call's own, or a free
// one, so the system never gets more than max_concurrent_calls calls). The first error wins
// and cancels the calls still running.
func (b *Backend) parallel(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		first error
		once  sync.Once
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range min(n, b.calls.Cap()) {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// slot runs f holding one of the system's call slots.
func (b *Backend) slot(ctx context.Context, f func() error) error {
	release, err := b.calls.Take(ctx)
	if err != nil {
		return err
	}
	defer release()
	return f()
}
