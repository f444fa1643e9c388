package landscape

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

type blob int64

func (b blob) bytes() int64 { return int64(b) }

// One workspace filling the cache evicts only its own entries: the others' stay.
func TestCacheKeepsOneWorkspaceFromEvictingAnother(t *testing.T) {
	c := &Cache{Budget: 10_000, Share: 4_000}
	victim, flooder := uuid.New(), uuid.New()
	put := func(ws uuid.UUID, key string, size int64) {
		_, err := cached(c, ws, "k", key, func() (blob, error) { return blob(size), nil })
		assert.NoError(t, err)
	}
	put(victim, "dashboard", 1_000)
	for i := range 500 {
		put(flooder, string(rune('a'+i%26))+string(rune('a'+i/26)), 300)
	}
	assert.LessOrEqual(t, c.WorkspaceBytes(flooder), int64(4_000), "a workspace holds at most its share")
	before := c.Stats().Hits
	put(victim, "dashboard", 1_000)
	assert.Equal(t, before+1, c.Stats().Hits, "the victim's entry survived the flood")

	// Past the budget the workspace holding the most gives way, not the small one.
	others := []uuid.UUID{uuid.New(), uuid.New()}
	for _, ws := range others {
		for i := range 20 {
			put(ws, string(rune('a'+i)), 300)
		}
	}
	assert.LessOrEqual(t, c.Stats().Bytes, int64(10_000))
	before = c.Stats().Hits
	put(victim, "dashboard", 1_000)
	assert.Equal(t, before+1, c.Stats().Hits, "the smallest workspace keeps its entry when the cache is full")

	// A value larger than a share is computed but not kept.
	put(victim, "huge", 5_000)
	assert.Zero(t, c.WorkspaceBytes(victim)-1_000)
}
