package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/workflows"
)

// hostileConnector answers index pages itself: page n (cursor "p<n>") holds three items and
// points at page n+1 (the phase ends after page 5 unless endless), except that poison(n) may
// answer instead.
type hostileConnector struct {
	poison  func(w http.ResponseWriter, page int) bool
	endless bool
	calls   atomic.Int64
}

func (h *hostileConnector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	var req sap.IndexRequest
	_ = json.Unmarshal(body, &req)
	page, _ := strconv.Atoi(strings.TrimPrefix(req.Cursor, "p"))
	if h.poison != nil && h.poison(w, page) {
		return
	}
	items := []map[string]any{}
	for i := range 3 {
		items = append(items, map[string]any{"type": "PROG", "name": fmt.Sprintf("ZP%d_%d", page, i), "package": "ZPKG"})
	}
	next := fmt.Sprintf("p%d", page+1)
	if page == 5 && !h.endless {
		next = ""
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": sap.IndexPage{Items: items, NextCursor: next, Total: 18}})
}

func writeJSON(w http.ResponseWriter, raw string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, raw)
}

// Finding 6 of issue 18: a connector answering an index phase with something no retry can
// make usable had the sync retry forever. Each poison now fails the phase at once, not
// retryable, with a reason a reader understands, after asking for the poisoned page once.
func TestIndexPhaseFailsAtOnceOnAPoisonedPage(t *testing.T) {
	deep := `{"data":{"items":[{"type":"PROG","name":"ZDEEP","x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}],"next_cursor":"p3"}}`
	cases := []struct {
		name   string
		poison func(w http.ResponseWriter, page int) bool
		reason string
	}{
		{"deep JSON", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, deep)
			}
			return page == 2
		}, "nested more than 64 levels deep"},
		{"very deep JSON", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, `{"data":`+strings.Repeat(`{"a":`, 20_000)+`1`+strings.Repeat("}", 20_000)+`}`)
			}
			return page == 2
		}, "nested more than 64 levels deep"},
		{"NUL in an item", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, `{"data":{"items":[{"type":"PROG","name":"ZNUL\u0000X","package":"ZPKG"}],"next_cursor":"p3"}}`)
			}
			return page == 2
		}, "contains a NUL character"},
		{"NUL in a key", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, `{"data":{"items":[{"type":"PROG","name":"ZK","extra":{"k\u0000":"v"}}],"next_cursor":"p3"}}`)
			}
			return page == 2
		}, "contains a NUL character"},
		{"more than 64 MiB", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"data":{"items":[{"type":"PROG","name":"ZBIG","title":"`)
				chunk := strings.Repeat("x", 1<<20)
				for range 65 {
					_, _ = io.WriteString(w, chunk)
				}
				_, _ = io.WriteString(w, `"}],"next_cursor":"p3"}}`)
			}
			return page == 2
		}, "larger than 64 MiB"},
		{"a cursor loop", func(w http.ResponseWriter, page int) bool {
			if page == 3 { // p1 → p2 → p3 → p1 again
				writeJSON(w, `{"data":{"items":[{"type":"PROG","name":"ZLOOP","package":"ZPKG"}],"next_cursor":"p1"}}`)
			}
			return page == 3
		}, "cursor loop"},
		{"the same cursor again", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, `{"data":{"items":[{"type":"PROG","name":"ZSAME","package":"ZPKG"}],"next_cursor":"p2"}}`)
			}
			return page == 2
		}, "cursor loop"},
		{"not the protocol's shape", func(w http.ResponseWriter, page int) bool {
			if page == 2 {
				writeJSON(w, `{"data":{"items":"all of them","next_cursor":"p3"}}`)
			}
			return page == 2
		}, "unexpected answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newSyncFixture(t, sapsim.Options{})
			h := &hostileConnector{poison: tc.poison}
			f.pages.next = h
			began := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a loop would run on
			defer cancel()
			_, err := f.a.IndexPhase(ctx, f.input(sapindex.PhaseCustomObjects))
			requirePoisoned(t, err, tc.reason)
			assert.Less(t, time.Since(began), 20*time.Second)
			assert.LessOrEqual(t, h.calls.Load(), int64(4), "the poisoned page is asked for once, not retried")
		})
	}
}

// Without poison the same connector's phase completes: the failures above are the poison's.
func TestIndexPhaseCompletesAgainstTheHostileConnectorWithoutPoison(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{})
	f.pages.next = &hostileConnector{}
	res, err := f.a.IndexPhase(context.Background(), f.input(sapindex.PhaseCustomObjects))
	require.NoError(t, err)
	assert.Equal(t, int64(18), res.Items)
}

// An endless connector stops at SYNC_MAX_ITEMS_PER_PHASE (a connector pushed 1.09 M rows in 90 s).
func TestIndexPhaseStopsAtTheItemCap(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{})
	f.a.Sync.MaxItemsPerPhase = 50
	h := &hostileConnector{endless: true}
	f.pages.next = h
	_, err := f.a.IndexPhase(context.Background(), f.input(sapindex.PhaseCustomObjects))
	requirePoisoned(t, err, "more than 50 items (SYNC_MAX_ITEMS_PER_PHASE)")
	rows, _ := f.rows(t, sapindex.PhaseCustomObjects)
	assert.LessOrEqual(t, rows, int64(50))
	assert.Greater(t, DefaultMaxItemsPerPhase, 1_000_000, "comfortably above the largest simulated landscape")
}

func requirePoisoned(t *testing.T, err error, reason string) {
	t.Helper()
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "an application error, got %v", err)
	assert.True(t, app.NonRetryable(), "not retried: %v", err)
	assert.Equal(t, workflows.ErrTypeSyncRefused, app.Type())
	assert.Contains(t, app.Message(), reason)
	assert.True(t, strings.HasPrefix(app.Message(), "index custom_objects: "), app.Message())
}

// A change log that answers the same changes again with more: true would page forever.
func TestProbeChangesFailsAtOnceOnALoop(t *testing.T) {
	f := newSyncFixture(t, sapsim.Options{})
	var calls atomic.Int64
	f.pages.next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		writeJSON(w, `{"data":{"latest_seq":100,"more":true,"changes":[{"seq":3,"object_type":"PROG","object_name":"ZX","change_type":"modified"}]}}`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := f.a.ProbeChanges(ctx, workflows.ProbeInput{RunID: f.runID.String(), WorkspaceID: f.ws.String(), ConnectionID: f.conn.String(), AfterSeq: 3})
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "an application error, got %v", err)
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Message(), "probe changes: the connector's change log did not move past the position asked for")
	assert.Equal(t, int64(1), calls.Load())
}
