// Package landscape answers the read routes of the SAP landscape (dashboard, diff, object
// inventory, Clean Core, generated docs, indexed source) over the read model of internal/sapindex,
// which owns the index tables' SQL (docs/sap-index.md).
//
// Every read is scoped twice: to the workspace (a connection of another workspace is not
// found) and to the connection's current generation, so a reader never sees the rows of a build
// in progress or of one being deleted. Lists page by keyset over the tables' primary-key order
// (Cursor), so a page costs the same at one thousand and one million entries; figures over a
// whole index are cached per index version (Cache).
package landscape

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// Reader answers the landscape's read routes. sapindex runs every query (the read model's SQL
// and result types are there); the Reader pages, caches and compares over its reads.
type Reader struct {
	Index *sapindex.Index // the index's tables and read model
	Cache *Cache          // figures over whole indexes, per index version (nil: computed every time)
	// DiffWindow: how many objects a diff page walks at most (0: DefaultDiffWindow).
	DiffWindow int
}

// The read model's types, named here for the API.
type (
	Graph           = sapindex.Graph
	Object          = sapindex.Object
	ObjectFilter    = sapindex.ObjectFilter
	TypeCount       = sapindex.TypeCount
	PackageCount    = sapindex.PackageCount
	SyncRun         = sapindex.RunSummary
	Finding         = sapindex.Finding
	FindingFilter   = sapindex.FindingFilter
	CleanCoreObject = sapindex.CleanCoreObject
	Doc             = sapindex.Doc
	Source          = sapindex.Source
	Side            = sapindex.Side
	DiffItem        = sapindex.DiffItem
)

// DocCategory is the search entry category of generated docs, which the inventory, the
// dashboard and the diff leave out.
const DocCategory = sapindex.DocCategory

// TopReasons is how many reasons a Findings entry carries.
const TopReasons = sapindex.TopReasons

// ErrNoIndex means the connection has no index yet (no sync has finished).
var ErrNoIndex = errors.New("the connection has no index yet")

// Graph loads a connection of the workspace with its index state; store.ErrNotFound when the
// workspace has no such connection.
func (r Reader) Graph(ctx context.Context, workspaceID, connectionID uuid.UUID) (Graph, error) {
	return r.Index.Graph(ctx, workspaceID, connectionID)
}

// Graphs lists every connection of the workspace with its index state, by name.
func (r Reader) Graphs(ctx context.Context, workspaceID uuid.UUID) ([]Graph, error) {
	return r.Index.Graphs(ctx, workspaceID)
}

// Indexed loads a connection that has an index: store.ErrNotFound or ErrNoIndex otherwise.
func (r Reader) Indexed(ctx context.Context, workspaceID, connectionID uuid.UUID) (Graph, error) {
	g, err := r.Graph(ctx, workspaceID, connectionID)
	if err == nil && g.Generation == 0 {
		err = ErrNoIndex
	}
	return g, err
}

// Cursor is a keyset position in a list ordered by up to three text keys (for objects: type
// and name). Clients see it as an opaque string.
type Cursor struct {
	Keys []string `json:"k"`
}

// ErrBadCursor means a cursor string was not produced by this package (or for another list).
var ErrBadCursor = errors.New("cursor is not valid; use next_cursor from the previous page")

// Encode renders the cursor for a response's next_cursor.
func (c Cursor) Encode() string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodeCursor parses a cursor of a list with n keys; "" is the first page (nil).
func DecodeCursor(s string, n int) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	var c Cursor
	if err := json.Unmarshal(raw, &c); err != nil || len(c.Keys) != n {
		return nil, ErrBadCursor
	}
	return &c, nil
}

// after returns the keys to compare with: past a cursor, or before every key on the first page.
func after(c *Cursor, n int) []string {
	if c == nil {
		return make([]string, n) // "" sorts before every non-empty key; names are never empty
	}
	return c.Keys
}

// Page is one page of a list: the items and the cursor of the next page (nil on the last).
type Page[T any] struct {
	Items []T
	Next  *Cursor
}

// pageOf trims a limit+1 result to limit items and sets Next from the last one kept.
func pageOf[T any](items []T, limit int, keys func(T) []string) Page[T] {
	p := Page[T]{Items: items}
	if items == nil {
		p.Items = []T{}
	}
	if len(items) > limit {
		p.Items = items[:limit]
		p.Next = &Cursor{Keys: keys(p.Items[limit-1])}
	}
	return p
}
