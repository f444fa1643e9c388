package landscape

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"
)

// Cache keeps figures that cost a pass over a whole index (the dashboard's per-type and
// per-package counts, the comparison of two indexes behind a diff: over a second at a million
// entries) until a sync changes that index. Keys carry the graph's version (generation, change
// position and sync times), so a new generation or a merged delta is a miss and every API
// process recomputes on its own; nothing needs invalidating.
//
// The cache is shared by every tenant of the process, so it is partitioned by workspace: each
// workspace may hold at most Share bytes (its own least recently used entries make room), and
// when the whole cache is over Budget the workspace holding the most gives way. One tenant's
// requests can therefore never evict another tenant's entries while it holds more than they
// do. The zero value is ready (DefaultCacheBudget, DefaultCacheShare); a nil *Cache caches
// nothing.
type Cache struct {
	Budget int64 // bytes of all entries (0: DefaultCacheBudget)
	Share  int64 // bytes of one workspace's entries (0: DefaultCacheShare)

	mu      sync.Mutex
	entries map[string]*cacheEntry
	used    map[uuid.UUID]int64 // bytes per workspace
	total   int64
	tick    uint64             // the recency clock
	flight  singleflight.Group // one computation per key at a time, however many requests wait

	hits, misses atomic.Int64
}

// DefaultCacheBudget and DefaultCacheShare size a Cache whose fields are zero: a comparison of
// two indexes of a million objects each takes about 40 MB, the dashboard figures a few KB.
const (
	DefaultCacheBudget = 256 << 20
	DefaultCacheShare  = 64 << 20
)

type cacheEntry struct {
	workspace uuid.UUID
	value     any
	size      int64
	used      uint64
}

// CacheStats says how the cache serves: hits and misses since the start, what it holds.
type CacheStats struct {
	Hits, Misses int64
	Entries      int
	Bytes        int64
}

// Stats reports the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: len(c.entries), Bytes: c.total}
}

// WorkspaceBytes is how many bytes of the cache hold workspace's entries.
func (c *Cache) WorkspaceBytes(workspace uuid.UUID) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used[workspace]
}

func (c *Cache) limits() (budget, share int64) {
	budget, share = c.Budget, c.Share
	if budget <= 0 {
		budget = DefaultCacheBudget
	}
	if share <= 0 {
		share = DefaultCacheShare
	}
	return budget, min(budget, share)
}

// version identifies the state of a connection's index: what changes when a sync changes it.
func version(g Graph) string {
	return fmt.Sprintf("%s/%d/%d/%v/%v", g.ConnectionID, g.Generation, g.ChangeSeq, g.LastFullSyncAt, g.LastDeltaSyncAt)
}

// sized is a cached value that knows roughly how many bytes it holds.
type sized interface{ bytes() int64 }

// cached returns the value of kind under key for workspace, computing it (once for concurrent
// callers) on a miss.
func cached[T sized](c *Cache, workspace uuid.UUID, kind, key string, compute func() (T, error)) (T, error) {
	if c == nil {
		return compute()
	}
	key = workspace.String() + "|" + kind + "|" + key
	if v, ok := c.get(key); ok {
		c.hits.Add(1)
		return v.(T), nil
	}
	c.misses.Add(1)
	v, err, _ := c.flight.Do(key, func() (any, error) {
		v, err := compute()
		if err != nil {
			return v, err
		}
		c.put(workspace, key, v, v.bytes())
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

func (c *Cache) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.tick++
	e.used = c.tick
	return e.value, true
}

// put stores an entry, first evicting the workspace's own least recently used entries past
// its share, then, past the budget, those of the workspace that holds the most. A value larger
// than the share is not kept.
func (c *Cache) put(workspace uuid.UUID, key string, v any, size int64) {
	size = max(size, 64)
	budget, share := c.limits()
	if size > share {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries, c.used = map[string]*cacheEntry{}, map[uuid.UUID]int64{}
	}
	if old, ok := c.entries[key]; ok {
		c.remove(key, old)
	}
	for c.used[workspace]+size > share && c.evictOldest(workspace) {
	}
	for c.total+size > budget && c.evictOldest(c.largest()) {
	}
	c.tick++
	c.entries[key] = &cacheEntry{workspace: workspace, value: v, size: size, used: c.tick}
	c.used[workspace] += size
	c.total += size
}

// largest is the workspace holding the most bytes. A scan: the cache holds hundreds of entries.
func (c *Cache) largest() uuid.UUID {
	var ws uuid.UUID
	most := int64(-1)
	for w, n := range c.used {
		if n > most {
			ws, most = w, n
		}
	}
	return ws
}

// evictOldest removes the workspace's least recently used entry; false when it has none.
func (c *Cache) evictOldest(workspace uuid.UUID) bool {
	var oldestKey string
	var oldest *cacheEntry
	for k, e := range c.entries {
		if e.workspace == workspace && (oldest == nil || e.used < oldest.used) {
			oldestKey, oldest = k, e
		}
	}
	if oldest == nil {
		return false
	}
	c.remove(oldestKey, oldest)
	return true
}

func (c *Cache) remove(key string, e *cacheEntry) {
	delete(c.entries, key)
	c.total -= e.size
	if c.used[e.workspace] -= e.size; c.used[e.workspace] <= 0 {
		delete(c.used, e.workspace)
	}
}
