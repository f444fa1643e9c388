package sapbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// pageAll pages a phase through the connector and returns its items and the pages it took.
func pageAll(t *testing.T, h *simHarness, endpoint string, limit int, after int64) ([]map[string]any, int) {
	t.Helper()
	var items []map[string]any
	cursor, pages := "", 0
	seen := map[string]bool{}
	for {
		var page sap.IndexPage
		if err := h.call(t, "", "", endpoint, sap.IndexRequest{Cursor: cursor, Limit: limit, AfterSeq: after}, &page); err != nil {
			t.Fatalf("%s page %d: %v", endpoint, pages+1, err)
		}
		pages++
		if len(page.Items) > limit {
			t.Fatalf("%s: a page of %d items, limit %d", endpoint, len(page.Items), limit)
		}
		items = append(items, page.Items...)
		if page.NextCursor == "" {
			if page.Total != len(items) {
				t.Fatalf("%s: total %d on the last page, %d items served", endpoint, page.Total, len(items))
			}
			return items, pages
		}
		if seen[page.NextCursor] {
			t.Fatalf("%s: cursor repeated", endpoint)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// simItems is the simulator's own protocol answer for a phase, all pages.
func simItems(t *testing.T, s *sapsim.System, endpoint string, after int64) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		body, _ := json.Marshal(sap.IndexRequest{Cursor: cursor, Limit: 1000, AfterSeq: after})
		res, err := s.Call(context.Background(), endpoint, sapsim.Credentials{ConnectorKey: sapsim.ECCConnectorKey}, body)
		if err != nil {
			t.Fatal(err)
		}
		page := res.(sap.IndexPage)
		out = append(out, page.Items...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

func keys(items []map[string]any, fields ...string) []string {
	var out []string
	for _, it := range items {
		k := ""
		for _, f := range fields {
			k += fmt.Sprint(it[f]) + "|"
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestSimIndexCustomObjectsPages(t *testing.T) {
	h := startSim(t, sapsim.Options{}, "")
	got, pages := pageAll(t, h, sap.EndpointIndexCustomObjects, 4, 0)
	if pages < 4 {
		t.Fatalf("%d pages", pages)
	}
	want := simItems(t, h.sys, sap.EndpointIndexCustomObjects, 0)
	t.Logf("connector: %v", keys(got, "type", "name", "package", "created_by", "changed_at", "description"))
	t.Logf("simulator: %v", keys(want, "type", "name", "package", "created_by", "changed_at", "description"))
}
