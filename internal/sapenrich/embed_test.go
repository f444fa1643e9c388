package sapenrich

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/sapindex"
)

var _ TextEmbedder = (*llm.Embedder)(nil)

// modelServer is the offline model server behind a recorder: the test sees every request
// body and can make the server fail from some request on.
type modelServer struct {
	url        string
	registry   *llm.Registry
	embedCalls atomic.Int64
	chatCalls  atomic.Int64
	failFrom   atomic.Int64 // embeddings requests from this number on answer 503 (0: never)
	failChat   atomic.Bool
	mu         sync.Mutex
	bodies     []string
}

func newModelServer(t testing.TB, rules ...offlinellm.Rule) *modelServer {
	t.Helper()
	ms := &modelServer{}
	h := offlinellm.New(offlinellm.Options{Rules: rules}).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		switch r.URL.Path {
		case "/v1/embeddings":
			n := ms.embedCalls.Add(1)
			if f := ms.failFrom.Load(); f > 0 && n >= f {
				http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
				return
			}
		case "/v1/chat/completions":
			ms.chatCalls.Add(1)
			ms.mu.Lock()
			ms.bodies = append(ms.bodies, string(body))
			ms.mu.Unlock()
			if ms.failChat.Load() {
				http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ms.url = srv.URL + "/v1"
	ms.registry = llm.NewRegistry(llm.Provider{Name: "offline", BaseURL: ms.url, APIKey: "offline"})
	return ms
}

func (ms *modelServer) embedder(t testing.TB) *llm.Embedder {
	e, err := ms.registry.Embedder("offline:" + offlinellm.ModelName)
	require.NoError(t, err)
	return e
}

type entry struct {
	typ, name, title, body string
}

func (l *landscape) entries(gen int64, es []entry) {
	l.t.Helper()
	rows := make([][]any, len(es))
	for i, e := range es {
		h := sha256.Sum256([]byte(e.title + "\x00" + e.body))
		rows[i] = []any{l.scope.ConnectionID, l.scope.WorkspaceID, gen, "table", e.typ, e.name, e.title, e.body, h[:]}
	}
	_, err := l.st.Pool.CopyFrom(context.Background(), pgx.Identifier{"sap_search_entries"},
		[]string{"connection_id", "workspace_id", "generation", "category", "object_type", "object_name", "title", "body", "content_hash"},
		pgx.CopyFromRows(rows))
	require.NoError(l.t, err)
}

func genEntries(n int, bodyOf func(i int) string) []entry {
	es := make([]entry, n)
	for i := range es {
		es[i] = entry{typ: "TABL", name: fmt.Sprintf("ZTAB%05d", i), title: fmt.Sprintf("Custom table %d", i), body: bodyOf(i)}
	}
	return es
}

func (l *landscape) embeddings(gen int64) map[string][]byte {
	l.t.Helper()
	rows, err := l.st.Pool.Query(context.Background(), `SELECT object_name, embedding FROM sap_search_entries WHERE connection_id = $1 AND generation = $2`,
		l.scope.ConnectionID, gen)
	require.NoError(l.t, err)
	out := map[string][]byte{}
	var name string
	var emb []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &emb}, func() error { out[name] = append([]byte(nil), emb...); return nil })
	require.NoError(l.t, err)
	return out
}

func TestEmbedEntriesBatchesAndCachesByContentHash(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "S4HANA")
	ms := newModelServer(t)
	es := genEntries(300, func(i int) string { return fmt.Sprintf("Holds sales bonus data, version %d", i) })
	l.entries(1, es)

	var lastDone, lastTotal int64
	res, err := EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(t), BatchSize: 64},
		func(done, total int64) { lastDone, lastTotal = done, total })
	require.NoError(t, err)
	assert.Equal(t, EmbedResult{Embedded: 300, Requests: 1 + 5}, res, "a probe, then 300 texts in 5 batches of ≤ 64")
	assert.EqualValues(t, 6, ms.embedCalls.Load())
	assert.EqualValues(t, 300, lastDone)
	assert.EqualValues(t, 300, lastTotal)
	got := l.embeddings(1)
	require.Len(t, got, 300)
	e := es[17]
	assert.Equal(t, sapindex.EncodeEmbedding(offlinellm.Embed(EntryText(e.typ, e.name, e.title, e.body, 2000))), got[e.name],
		"the stored vector is the model's answer for the entry's text")

	// Nothing left: a second call is a no-op without a model call.
	res, err = EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(t)}, nil)
	require.NoError(t, err)
	assert.Equal(t, EmbedResult{}, res)
	assert.EqualValues(t, 6, ms.embedCalls.Load())

	// Generation 2: ten entries changed, five are new; the rest come from generation 1.
	es2 := genEntries(305, func(i int) string {
		if i%30 == 0 {
			return fmt.Sprintf("Changed: holds sales bonus data, version %d", i)
		}
		return fmt.Sprintf("Holds sales bonus data, version %d", i)
	})
	l.entries(2, es2)
	s2 := l.scope
	s2.Generation = 2
	res, err = EmbedEntries(ctx, l.x(), s2, EmbedOptions{Embedder: ms.embedder(t), BatchSize: 64}, nil)
	require.NoError(t, err)
	assert.Equal(t, EmbedResult{Copied: 290, Embedded: 15, Requests: 2}, res)
	got2 := l.embeddings(2)
	assert.Equal(t, got[es[1].name], got2[es[1].name])
	assert.NotEqual(t, got[es[30].name], got2[es[30].name], "a changed entry is embedded anew")
	assert.Equal(t, sapindex.EncodeEmbedding(offlinellm.Embed(EntryText("TABL", es2[30].name, es2[30].title, es2[30].body, 2000))), got2[es[30].name])
	for name, v := range got2 {
		require.NotNil(t, v, name)
	}
}

func TestEmbedEntriesResumesAfterAnOutage(t *testing.T) {
	ctx := context.Background()
	l := newLandscape(t, "ECC")
	ms := newModelServer(t)
	l.entries(1, genEntries(200, func(i int) string { return fmt.Sprintf("Row %d", i) }))

	ms.failFrom.Store(4) // the probe and two batches succeed, then the endpoint is down
	_, err := EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(t), BatchSize: 50, Concurrency: 1}, nil)
	require.Error(t, err)
	var missing int
	for _, v := range l.embeddings(1) {
		if v == nil {
			missing++
		}
	}
	assert.Equal(t, 100, missing, "what was embedded before the outage is kept")

	ms.failFrom.Store(0)
	calls := ms.embedCalls.Load()
	res, err := EmbedEntries(ctx, l.x(), l.scope, EmbedOptions{Embedder: ms.embedder(t), BatchSize: 50}, nil)
	require.NoError(t, err)
	assert.Equal(t, EmbedResult{Embedded: 100, Requests: 3}, res, "the retry embeds only the rest")
	assert.EqualValues(t, calls+3, ms.embedCalls.Load())
}

func TestEntryTextCutsAtCharacterBoundary(t *testing.T) {
	assert.Equal(t, "MARA (TABL): General Material Data\nbody", EntryText("TABL", "MARA", "General Material Data", "body", 100))
	s := EntryText("TABL", "X", "", strings.Repeat("ä", 20), 12)
	assert.LessOrEqual(t, len(s), 12)
	assert.True(t, strings.HasPrefix(s, "X (TABL)\n"))
	assert.True(t, strings.ToValidUTF8(s, "?") == s)
}
