package landscape

import (
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Cache keeps figures that cost a pass over a whole index (the dashboard's per-type and
// per-package counts, a diff's counts: over a second at a million entries) until a sync
// changes that index. Keys carry the graph's version (generation, change position and sync
// times), so a new generation or a merged delta is a miss and every API process recomputes
// on its own; nothing needs invalidating. The zero value is ready; a nil *Cache caches nothing.
type Cache struct {
	mu      sync.Mutex
	entries map[string]any
	flight  singleflight.Group // one computation per key at a time, however many requests wait
}

// maxCacheEntries bounds the cache: past it the cache starts over (entries of old versions
// are never read again anyway).
const maxCacheEntries = 512

// version identifies the state of a connection's index: what changes when a sync changes it.
func (g Graph) version() string {
	return fmt.Sprintf("%s/%d/%d/%v/%v", g.ConnectionID, g.Generation, g.ChangeSeq, g.LastFullSyncAt, g.LastDeltaSyncAt)
}

// cached returns the value of kind under key, computing it (once for concurrent callers) on a miss.
func cached[T any](c *Cache, kind, key string, compute func() (T, error)) (T, error) {
	if c == nil {
		return compute()
	}
	key = kind + "|" + key
	c.mu.Lock()
	v, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return v.(T), nil
	}
	v, err, _ := c.flight.Do(key, func() (any, error) {
		v, err := compute()
		if err != nil {
			return v, err
		}
		c.mu.Lock()
		if c.entries == nil || len(c.entries) >= maxCacheEntries {
			c.entries = map[string]any{}
		}
		c.entries[key] = v
		c.mu.Unlock()
		return v, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}
