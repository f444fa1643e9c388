package sapbackend

import (
	"hash/crc32"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// adtSources watches the ADT source reads SAP gets: how many, how many at once at most, and
// refuses the source of one object when told.
type adtSources struct {
	reads, inFlight, peak atomic.Int64
	searches              atomic.Int64 // quick searches (a function module's URI without its group)
	delay                 time.Duration
	mu                    sync.Mutex
	refuse                string // a path part whose source SAP refuses (no authorization)
}

func (a *adtSources) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("operation") == "quickSearch" {
			a.searches.Add(1)
		}
		if !strings.HasSuffix(r.URL.Path, "/source/main") {
			next.ServeHTTP(w, r)
			return
		}
		a.reads.Add(1)
		n := a.inFlight.Add(1)
		defer a.inFlight.Add(-1)
		for p := a.peak.Load(); n > p && !a.peak.CompareAndSwap(p, n); p = a.peak.Load() {
		}
		// Answers come back in another order than asked: the page must keep its own.
		time.Sleep(a.delay * time.Duration(crc32.ChecksumIEEE([]byte(r.URL.Path))%4))
		a.mu.Lock()
		refuse := a.refuse != "" && strings.Contains(r.URL.Path, a.refuse)
		a.mu.Unlock()
		if refuse {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><exc:exception xmlns:exc="http://www.sap.com/abapxml/types/communicationframework">` +
				`<type id="ExceptionResourceNoAccess"/><message>No authorization to display the object</message></exc:exception>`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func startWatched(t *testing.T, maxCalls string, delay time.Duration) (*simHarness, *adtSources) {
	a := &adtSources{delay: delay}
	return startSimBehind(t, "ECC", sapsim.Options{}, a.wrap, "    max_concurrent_calls: "+maxCalls+"\n"), a
}

func TestSimIndexSourcesReadInParallelKeepOrderAndBound(t *testing.T) {
	one, _ := startWatched(t, "1", 5*time.Millisecond)
	want, _ := pageAll(t, one, sap.EndpointIndexCustomCode, 100, 0)
	h, a := startWatched(t, "3", 5*time.Millisecond)
	got, _ := pageAll(t, h, sap.EndpointIndexCustomCode, 100, 0)
	if g, w := keys(got, "type", "name", "source"), keys(want, "type", "name", "source"); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("items read in parallel differ from the sequential ones:\n%v\nwant\n%v", g, w)
	}
	if a.reads.Load() < 6 {
		t.Fatalf("only %d source reads: too few to see parallelism", a.reads.Load())
	}
	if p := a.peak.Load(); p < 2 || p > 3 {
		t.Fatalf("at most %d source reads at once, want 2..3 (max_concurrent_calls 3)", p)
	}
}

func TestSimIndexSourceErrorSurfaces(t *testing.T) {
	h, a := startWatched(t, "4", 0)
	a.refuse = "/zcl_po_helper/"
	var page sap.IndexPage
	err := h.call(t, "", "", sap.EndpointIndexCustomCode, sap.IndexRequest{Limit: 100}, &page)
	if se := protoCode(t, err); se.Code != sap.ErrAuthorization || !strings.Contains(se.Message, "No authorization") {
		t.Fatalf("want SAP's refusal as %s, got %s: %s", sap.ErrAuthorization, se.Code, se.Message)
	}
}

// sourceOf is the source custom_code serves for an object.
func sourceOf(t *testing.T, h *simHarness, name string, after int64) string {
	t.Helper()
	items, _ := pageAll(t, h, sap.EndpointIndexCustomCode, 100, after)
	for _, it := range items {
		if it["name"] == name {
			return it["source"].(string)
		}
	}
	t.Fatalf("custom_code after %d lacks %s", after, name)
	return ""
}

func TestSimIndexSourceCacheValidUntilTheNextProbe(t *testing.T) {
	h, a := startWatched(t, "4", 0)
	pageAll(t, h, sap.EndpointIndexRelationships, 100, 0)
	if a.reads.Load() == 0 {
		t.Fatal("relationships read no source")
	}
	before := a.reads.Load()
	if src := sourceOf(t, h, "ZCL_PO_HELPER", 0); !strings.Contains(strings.ToUpper(src), "CLASS ZCL_PO_HELPER") {
		t.Fatalf("source of ZCL_PO_HELPER: %q", src)
	}
	if n := a.reads.Load() - before; n != 0 {
		t.Fatalf("custom_code read %d sources again right after relationships read them", n)
	}

	activate := func(marker string) {
		t.Helper()
		src := "CLASS zcl_po_helper DEFINITION PUBLIC.\n  PUBLIC SECTION.\n    METHODS run. \" " + marker + "\nENDCLASS.\nCLASS zcl_po_helper IMPLEMENTATION.\n  METHOD run.\n  ENDMETHOD.\nENDCLASS.\n"
		if err := h.sys.ActivateObject("CLAS", "ZCL_PO_HELPER", "", "", src); err != nil {
			t.Fatal(err)
		}
	}
	// A full sync: its probe (system_info with full_sync) clears the cache.
	activate("version 2")
	var si sap.SystemInfo
	if err := h.call(t, "", "", sap.EndpointSystemInfo, sap.SystemInfoRequest{FullSync: true}, &si); err != nil {
		t.Fatal(err)
	}
	if src := sourceOf(t, h, "ZCL_PO_HELPER", 0); !strings.Contains(src, "version 2") {
		t.Fatalf("after a full sync's system_info custom_code serves the cached source: %q", src)
	}
	// A delta: its probe evicts the changed object; the others stay cached.
	seq := probe(t, h, si.ChangeSeq).LatestSeq
	activate("version 3")
	res := probe(t, h, seq)
	if len(res.Changes) == 0 {
		t.Fatal("the probe saw no change")
	}
	before = a.reads.Load()
	if src := sourceOf(t, h, "ZCL_PO_HELPER", 0); !strings.Contains(src, "version 3") {
		t.Fatalf("after a probe reporting the change custom_code serves the cached source: %q", src)
	}
	if n := a.reads.Load() - before; n != 1 {
		t.Fatalf("after the probe custom_code read %d sources, want only the changed one", n)
	}
}

// A health check (system_info without full_sync) between two pages of a sync leaves the source
// cache: custom_code still reuses every source relationships read.
func TestSimHealthCheckDuringASyncKeepsTheSourceCache(t *testing.T) {
	h, a := startWatched(t, "4", 0)
	var si sap.SystemInfo
	healthCheck := func() {
		t.Helper()
		if err := h.call(t, "", "", sap.EndpointSystemInfo, struct{}{}, &si); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.call(t, "", "", sap.EndpointSystemInfo, sap.SystemInfoRequest{FullSync: true}, &si); err != nil {
		t.Fatal(err)
	}
	pageAll(t, h, sap.EndpointIndexRelationships, 100, 0)
	read := a.reads.Load()
	if read == 0 {
		t.Fatal("relationships read no source")
	}
	healthCheck()
	cursor, pages := "", 0
	for {
		var page sap.IndexPage
		if err := h.call(t, "", "", sap.EndpointIndexCustomCode, sap.IndexRequest{Cursor: cursor, Limit: 3}, &page); err != nil {
			t.Fatal(err)
		}
		pages++
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
		healthCheck()
	}
	if pages < 2 {
		t.Fatalf("custom_code had %d page: too few to check between pages", pages)
	}
	if n := a.reads.Load() - read; n != 0 {
		t.Fatalf("custom_code read %d sources again after health checks between its pages", n)
	}
}

func TestSourceCacheBoundEvictsOldest(t *testing.T) {
	c := newSourceCache(10)
	gen := c.generation()
	c.put(gen, "a", "A", "aaaa", true)
	c.put(gen, "b", "B", "bbbb", true)
	c.put(gen, "c", "C", "cccc", true) // 12 bytes: a goes
	if _, _, hit := c.get("a"); hit {
		t.Fatal("the oldest source stayed beyond the bound")
	}
	if src, _, hit := c.get("c"); !hit || src != "cccc" {
		t.Fatal("the newest source was not kept")
	}
	if c.size != 8 {
		t.Fatalf("size %d, want 8", c.size)
	}
	// A read that began before an eviction is not stored.
	c.evict([]sap.Change{{ObjectType: "PROG", ObjectName: "B"}})
	c.put(gen, "b", "B", "bbbb", true)
	if _, _, hit := c.get("b"); hit {
		t.Fatal("a read begun before the eviction was stored")
	}
}

// Function modules' sources are read by their group's URI (TFDIR names the group): no quick search.
func TestSimIndexFunctionModuleSourcesNeedNoSearch(t *testing.T) {
	h, a := startWatched(t, "4", 0)
	items, _ := pageAll(t, h, sap.EndpointIndexCustomCode, 100, 0)
	funcs := 0
	for _, it := range items {
		if it["type"] == "FUNC" {
			funcs++
		}
	}
	if funcs == 0 {
		t.Fatal("custom_code has no function module")
	}
	if n := a.searches.Load(); n != 0 {
		t.Fatalf("%d quick searches for %d function modules' sources", n, funcs)
	}
}
