package sapbackend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// aheadSAP is the simulator behind a counter of SOAP RFC calls that can fail the offset reads
// skipping failSkip rows (HTTP 503, as SAP's ICM answers when no work process is free).
type aheadSAP struct {
	calls    atomic.Int64
	failSkip atomic.Value // string: "<ROWSKIPS>n<"; "" none
}

func newAheadBackend(t *testing.T, systemYAML string) (*Backend, *aheadSAP) {
	t.Helper()
	land := sapsim.NewLandscape(sapsim.Options{GeneratedObjects: 2000})
	s := &aheadSAP{}
	s.failSkip.Store("")
	inner := land.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sap/bc/soap/rfc") {
			s.calls.Add(1)
			body, _ := io.ReadAll(r.Body)
			if f := s.failSkip.Load().(string); f != "" && bytes.Contains(body, []byte(f)) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, "<html>Service unavailable</html>")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg, err := connector.ParseConfig([]byte("connector_keys: ["+connectorKey+"]\nsystems:\n  - id: ECC\n    url: "+srv.URL+"/ECC\n    client: \"100\"\n"+systemYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg.Systems[0], connector.NewHTTPClient(cfg.Systems[0])).(*Backend), s
}

var developer = connector.Credentials{User: "DEVELOPER", Password: sapsim.DefaultUsers()["DEVELOPER"]}

func catalogPage(t *testing.T, b *Backend, cred connector.Credentials, cursor string, limit int) *sap.IndexPage {
	t.Helper()
	p, err := b.IndexCatalogContext(context.Background(), cred, sap.IndexRequest{Cursor: cursor, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// idle waits until no page is being read ahead.
func idle(t *testing.T, b *Backend) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(b.ahead.busy) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the read-ahead did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReadAheadServesTheSamePagesAsReadingEachOnRequest(t *testing.T) {
	walk := func(b *Backend) []map[string]any {
		var items []map[string]any
		for cursor := ""; ; {
			p := catalogPage(t, b, developer, cursor, 150)
			items = append(items, p.Items...)
			if cursor = p.NextCursor; cursor == "" {
				return items
			}
		}
	}
	ahead, _ := newAheadBackend(t, "")
	plain, _ := newAheadBackend(t, "    max_concurrent_calls: 1\n")
	if !plain.ahead.off || ahead.ahead.off {
		t.Fatal("read-ahead must be on with the default max_concurrent_calls and off with 1")
	}
	got, want := walk(ahead), walk(plain)
	if len(want) < 1000 || !reflect.DeepEqual(got, want) {
		t.Fatalf("the walk with read-ahead served %d items, without %d, or different ones", len(got), len(want))
	}
	idle(t, ahead)
	if n := ahead.ahead.kept(); n != 0 {
		t.Fatalf("%d pages kept after the last page, want none", n)
	}
}

func TestReadAheadPageAskedForTwiceIsReadAgain(t *testing.T) {
	b, s := newAheadBackend(t, "")
	p1 := catalogPage(t, b, developer, "", 100)
	idle(t, b)
	b.ahead.off = true // no further read-ahead: each SAP call below is the request's own
	before := s.calls.Load()
	p2 := catalogPage(t, b, developer, p1.NextCursor, 100)
	if s.calls.Load() != before {
		t.Fatalf("page 2 cost %d SAP calls; it had been read ahead", s.calls.Load()-before)
	}
	again := catalogPage(t, b, developer, p1.NextCursor, 100)
	if s.calls.Load() == before {
		t.Fatal("page 2 asked for a second time was served from the buffer again, not read from SAP")
	}
	if !reflect.DeepEqual(p2, again) {
		t.Fatal("page 2 read ahead and page 2 read on request differ")
	}
}

func TestReadAheadPageOnlyForTheSameUserAndLimit(t *testing.T) {
	b, s := newAheadBackend(t, "")
	p1 := catalogPage(t, b, developer, "", 100)
	idle(t, b)
	b.ahead.off = true
	before := s.calls.Load()
	_ = catalogPage(t, b, developer, p1.NextCursor, 50)
	other := connector.Credentials{User: "RESTRICTED", Password: sapsim.DefaultUsers()["RESTRICTED"]}
	_, _ = b.IndexCatalogContext(context.Background(), other, sap.IndexRequest{Cursor: p1.NextCursor, Limit: 100})
	afterOthers := s.calls.Load()
	if afterOthers == before {
		t.Fatal("another limit or another user was served the page read ahead for DEVELOPER")
	}
	_ = catalogPage(t, b, developer, p1.NextCursor, 100)
	if s.calls.Load() != afterOthers {
		t.Fatal("the page read ahead for DEVELOPER was gone after other requests for its cursor")
	}
}

func TestReadAheadPageNeverAskedForIsDropped(t *testing.T) {
	b, s := newAheadBackend(t, "")
	// Walks that stop after their first page leave pages nobody asks for: the buffer stays small.
	for _, limit := range []int{10, 20, 30, 40, 50} {
		_ = catalogPage(t, b, developer, "", limit)
		idle(t, b)
		if n := b.ahead.kept(); n > aheadPages {
			t.Fatalf("%d pages kept, at most %d", n, aheadPages)
		}
	}
	b.ahead.ttl = 20 * time.Millisecond
	p1 := catalogPage(t, b, developer, "", 100)
	idle(t, b)
	time.Sleep(50 * time.Millisecond)
	b.ahead.off = true
	before := s.calls.Load()
	_ = catalogPage(t, b, developer, p1.NextCursor, 100)
	if s.calls.Load() == before {
		t.Fatal("a page read ahead longer ago than the TTL was served instead of read again")
	}
	if n := b.ahead.kept(); n != 0 {
		t.Fatalf("%d expired pages still kept", n)
	}
}

func TestReadAheadErrorSurfacesOnTheRequestForThatPage(t *testing.T) {
	plain, _ := newAheadBackend(t, "    max_concurrent_calls: 1\n")
	cur, _ := decodeCursor(catalogPage(t, plain, developer, "", 100).NextCursor, sap.EndpointIndexCatalogContext, 0)
	b, s := newAheadBackend(t, "")
	s.failSkip.Store("<ROWSKIPS>" + strconv.Itoa(cur.Skip) + "<") // page 2's offset read
	p1 := catalogPage(t, b, developer, "", 100)
	idle(t, b)
	b.ahead.off = true
	before := s.calls.Load()
	_, err := b.IndexCatalogContext(context.Background(), developer, sap.IndexRequest{Cursor: p1.NextCursor, Limit: 100})
	var se *sap.Error
	if !errors.As(err, &se) || se.Code != sap.ErrSystemUnavailable {
		t.Fatalf("page 2, whose read-ahead met SAP's 503: %v, want SYSTEM_UNAVAILABLE", err)
	}
	if s.calls.Load() != before {
		t.Fatal("page 2 was read again on request: the read-ahead's error was not the one served")
	}
	s.failSkip.Store("")
	if p2 := catalogPage(t, b, developer, p1.NextCursor, 100); len(p2.Items) == 0 {
		t.Fatal("page 2 asked again after the error served nothing")
	}
}
