package sapenrich

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// TextEmbedder turns texts into vectors, one request per call (*llm.Embedder is one).
type TextEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedOptions tune EmbedEntries.
type EmbedOptions struct {
	Embedder TextEmbedder // required
	// BatchSize is the number of texts per embeddings request (default 128; OpenAI accepts
	// up to 2,048 inputs per request, local servers often far fewer).
	BatchSize int
	// Concurrency is the number of requests in flight (default 2).
	Concurrency int
	// MaxTextChars caps each embedded text (default 2,000 characters: name, title and the
	// start of the body carry what search needs, and it stays under every model's input limit).
	MaxTextChars int
}

// EmbedResult counts the entries EmbedEntries filled.
type EmbedResult struct {
	Copied   int64 `json:"copied"`   // from another generation's entry with the same content hash
	Embedded int64 `json:"embedded"` // through the embeddings endpoint
	Requests int64 `json:"requests"`
}

// copyChunk is how many entries one copy statement looks at.
const copyChunk = 5000

// EmbedEntries fills the embedding of every search entry of the generation that has none:
// first from other generations' entries with the same (object_type, object_name,
// content_hash) and an embedding of the model's dimension (the cache by content hash), then
// through the embeddings endpoint in batches. Only NULL embeddings are written, so a retry
// resumes where the last attempt stopped. Scope.RunID is not needed: a delta's new or
// changed entries are exactly the ones without an embedding.
func EmbedEntries(ctx context.Context, db DB, s Scope, opts EmbedOptions, progress Progress) (EmbedResult, error) {
	var res EmbedResult
	if err := s.check(); err != nil {
		return res, err
	}
	if opts.Embedder == nil {
		return res, errors.New("sapenrich: an embedder is required")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 128
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 2
	}
	if opts.MaxTextChars <= 0 {
		opts.MaxTextChars = 2000
	}
	total, err := db.CountMissingEmbeddings(ctx, s.scoped())
	if err != nil {
		return res, fmt.Errorf("count entries to embed: %w", err)
	}
	report(progress, 0, total)
	if total == 0 {
		return res, nil
	}
	// The model's dimension: a cached vector of another dimension came from another model.
	probe, err := opts.Embedder.Embed(ctx, []string{"SAP"})
	if err != nil {
		return res, fmt.Errorf("embeddings endpoint: %w", err)
	}
	res.Requests++
	if len(probe) != 1 || len(probe[0]) == 0 {
		return res, errors.New("embeddings endpoint returned no vector")
	}
	if res.Copied, err = copyEmbeddings(ctx, db, s, len(probe[0]), func(n int64) { report(progress, n, total) }); err != nil {
		return res, err
	}
	report(progress, res.Copied, total)
	if err := embedMissing(ctx, db, s, opts, &res, func() { report(progress, res.Copied+res.Embedded, total) }); err != nil {
		return res, err
	}
	return res, nil
}

// copyEmbeddings reuses embeddings of identical entries in other generations, a chunk of
// entries per statement so no statement holds a landscape's worth of row locks.
func copyEmbeddings(ctx context.Context, db DB, s Scope, dim int, progress func(int64)) (int64, error) {
	gens, err := db.OtherGenerations(ctx, s.scoped())
	if err != nil {
		return 0, fmt.Errorf("list generations: %w", err)
	}
	if len(gens) == 0 {
		return 0, nil
	}
	var copied int64
	var last sapindex.EntryKey
	for {
		chunk, err := db.CachedEmbeddings(ctx, s.scoped(), last, copyChunk, gens, dim)
		if err != nil {
			return copied, ctxErr(ctx, fmt.Errorf("find cached embeddings: %w", err))
		}
		var found []pendingEntry
		var embs [][]byte
		for _, c := range chunk {
			if c.Embedding != nil {
				found = append(found, pendingEntry{typ: c.ObjectType, name: c.ObjectName})
				embs = append(embs, c.Embedding)
			}
		}
		n, err := updateEmbeddings(ctx, db, s, found, embs)
		if err != nil {
			return copied, err
		}
		copied += n
		progress(copied)
		if len(chunk) < copyChunk {
			return copied, nil
		}
		last = chunk[len(chunk)-1].EntryKey
	}
}

type pendingEntry struct {
	typ, name, text string
}

// embedMissing pages through the entries still without an embedding (keyset, so each page
// is a short query) and embeds them with bounded concurrency.
func embedMissing(ctx context.Context, db DB, s Scope, opts EmbedOptions, res *EmbedResult, progress func()) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pages := make(chan []pendingEntry)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards res and progress
	for range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for page := range pages {
				texts := make([]string, len(page))
				for i, e := range page {
					texts[i] = e.text
				}
				vecs, err := opts.Embedder.Embed(ctx, texts)
				if err != nil {
					cancel(fmt.Errorf("embeddings endpoint: %w", err))
					return
				}
				if err := storeEmbeddings(ctx, db, s, page, vecs); err != nil {
					cancel(err)
					return
				}
				mu.Lock()
				res.Embedded += int64(len(page))
				res.Requests++
				progress()
				mu.Unlock()
			}
		}()
	}
	readErr := func() error {
		defer close(pages)
		var last sapindex.EntryKey
		for {
			entries, err := db.EntriesWithoutEmbedding(ctx, s.scoped(), last, opts.BatchSize, opts.MaxTextChars)
			if err != nil {
				return err
			}
			page := make([]pendingEntry, len(entries))
			for i, e := range entries {
				page[i] = pendingEntry{typ: e.ObjectType, name: e.ObjectName, text: EntryText(e.ObjectType, e.ObjectName, e.Title, e.Body, opts.MaxTextChars)}
			}
			if len(page) == 0 {
				return nil
			}
			select {
			case pages <- page:
			case <-ctx.Done():
				return nil
			}
			if len(page) < opts.BatchSize {
				return nil
			}
			last = entries[len(entries)-1].EntryKey
		}
	}()
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	if readErr != nil {
		return fmt.Errorf("read entries to embed: %w", readErr)
	}
	return nil
}

func storeEmbeddings(ctx context.Context, db DB, s Scope, page []pendingEntry, vecs [][]float32) error {
	embs := make([][]byte, len(page))
	for i := range page {
		embs[i] = sapindex.EncodeEmbedding(vecs[i])
	}
	_, err := updateEmbeddings(ctx, db, s, page, embs)
	return err
}

// updateEmbeddings sets entries' embeddings where they are still NULL.
func updateEmbeddings(ctx context.Context, db DB, s Scope, entries []pendingEntry, embs [][]byte) (int64, error) {
	keys := make([]sapindex.EntryKey, len(entries))
	for i, e := range entries {
		keys[i] = sapindex.EntryKey{ObjectType: e.typ, ObjectName: e.name}
	}
	n, err := db.SetMissingEmbeddings(ctx, s.scoped(), keys, embs)
	if err != nil {
		return n, ctxErr(ctx, fmt.Errorf("store embeddings: %w", err))
	}
	return n, nil
}

// EntryText is what is embedded for a search entry: its name and type, title and the start
// of its body, at most max bytes (cut at a character boundary). Search embeds its queries
// against these.
func EntryText(objectType, objectName, title, body string, max int) string {
	t := objectName + " (" + objectType + ")"
	if title != "" {
		t += ": " + title
	}
	if body != "" {
		t += "\n" + body
	}
	if len(t) <= max {
		return t
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut]
}
