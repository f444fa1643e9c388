package sapbackend

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

// inFlight counts the requests SAP works on at once (SOAP RFC, ADT) and keeps the peak. A
// request counts until SAP starts its answer: the connector may send its next call as soon as
// it has read the answer, before the handler has returned.
type inFlight struct{ now, peak atomic.Int64 }

func (f *inFlight) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := f.now.Add(1)
		for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
		}
		time.Sleep(2 * time.Millisecond) // a busy system: the calls overlap
		aw := &answering{ResponseWriter: w, done: func() { f.now.Add(-1) }}
		defer aw.answer()
		next.ServeHTTP(aw, r)
	})
}

// answering calls done once, when the answer starts (or the handler returns without one).
type answering struct {
	http.ResponseWriter
	done func()
	once sync.Once
}

func (a *answering) answer() { a.once.Do(a.done) }

func (a *answering) WriteHeader(status int) {
	a.answer()
	a.ResponseWriter.WriteHeader(status)
}

func (a *answering) Write(b []byte) (int, error) {
	a.answer()
	return a.ResponseWriter.Write(b)
}

// The protocol calls, their parallel reads and the pages read ahead share the system's
// max_concurrent_calls: SAP never answers more calls of the connector at once, whether a sync
// pages alone or other calls come in between its pages.
func TestSimSAPNeverGetsMoreThanMaxConcurrentCalls(t *testing.T) {
	const limit = 2
	f := &inFlight{}
	h := startSimBehind(t, "ECC", sapsim.Options{}, f.wrap, "    max_concurrent_calls: 2\n")
	h.sys.Info() // the simulator builds its landscape now, not within the first call's timeout
	syncOnce := func() {
		for _, endpoint := range []string{sap.EndpointIndexCatalogContext, sap.EndpointIndexRelationships} {
			pageAll(t, h, endpoint, 20, 0)
		}
	}
	syncOnce()
	if p := f.peak.Load(); p > limit {
		t.Fatalf("a sync alone: SAP answered %d calls at once, max_concurrent_calls is %d", p, limit)
	}

	done := make(chan struct{})
	errs := make(chan error, limit)
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				var rows sap.ReadTableResponse
				if err := h.call(t, "", "", sap.EndpointReadTable, sap.ReadTableRequest{Table: "T000"}, &rows); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	syncOnce()
	close(done)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	if p := f.peak.Load(); p > limit {
		t.Fatalf("a sync among other calls: SAP answered %d calls at once, max_concurrent_calls is %d", p, limit)
	}
}
