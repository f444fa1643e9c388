package prompt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPromptGrowsWithTheConnections(t *testing.T) {
	none := Build(Input{})
	assert.Contains(t, none, "no SAP connection yet")
	assert.NotContains(t, none, "BAPI verification rules")

	one := Build(Input{Connections: []Connection{{ID: "c1", Name: "ECC prod", SystemType: "ECC", Simulated: true}}})
	assert.Contains(t, one, `c1: "ECC prod", ECC (simulated system)`)
	assert.Contains(t, one, "BAPI verification rules")
	assert.Contains(t, one, "not built yet")
	assert.NotContains(t, one, "extract_transform_load")

	two := Build(Input{Connections: []Connection{{ID: "c1", Name: "ECC", SystemType: "ECC"}, {ID: "c2", Name: "S4", SystemType: "S4HANA"}},
		Index: []Fingerprint{{Connection: "ECC", Tables: 40, Functions: 12, BAPIs: 5, CustomObjects: 17, CleanCore: map[string]int64{"A": 3, "B": 4, "C": 6, "D": 4},
			IndexedAt: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)}}})
	assert.Contains(t, two, "reconcile_migration")
	assert.Contains(t, two, "value_map")
	assert.Contains(t, two, "ECC: 40 tables, 12 function modules (5 BAPIs), 17 custom objects; Clean Core levels of custom objects: A 3, B 4, C 6, D 4 (indexed 2026-11-01 03:00 UTC)")
	assert.Contains(t, two, "sap_search_index")
}

func TestInvalidateDropsAWorkspacesPrompts(t *testing.T) {
	c := &Cache{}
	builds := 0
	in := func() Input { builds++; return Input{} }
	c.Get("w1|c1", in)
	c.Get("w2|c1", in)
	c.Invalidate("w1")
	c.Get("w1|c1", in)
	c.Get("w2|c1", in)
	assert.Equal(t, 3, builds, "only w1's prompt is built again")
}

func TestCacheRebuildsAfterTTL(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := &Cache{TTL: 5 * time.Minute, Now: func() time.Time { return now }}
	builds := 0
	in := func() Input { builds++; return Input{} }
	c.Get("ws1", in)
	c.Get("ws1", in)
	assert.Equal(t, 1, builds)
	now = now.Add(5*time.Minute + time.Second)
	c.Get("ws1", in)
	assert.Equal(t, 2, builds)
	c.Get("ws2", in)
	assert.Equal(t, 3, builds)
}
