// Package landscape answers the read routes of the SAP landscape (dashboard, diff, object
// inventory, Clean Core, generated docs, indexed source) from the index tables of migration 012.
//
// Every query is scoped twice: to the workspace (a connection of another workspace is not
// found) and to the connection's current generation in workspace_sap_graph, so a reader never
// sees the rows of a build in progress or of one being deleted. Lists page by keyset over the
// tables' primary-key order, so a page costs the same at one thousand and one million entries.
package landscape

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
)

// Reader reads the index tables.
type Reader struct {
	DB    *pgxpool.Pool
	Cache *Cache // figures over whole indexes, per index version (nil: computed every time)
	// DiffWindow: how many objects a diff page walks at most (0: DefaultDiffWindow).
	DiffWindow int
}

// DocCategory is the sap_search_entries category of generated docs: they are search entries
// but not SAP objects, so the inventory, the dashboard and the diff leave them out.
const DocCategory = "doc"

// ErrNoIndex means the connection has no index yet (no sync has finished).
var ErrNoIndex = errors.New("the connection has no index yet")

// Graph is a connection and the state of its index.
type Graph struct {
	WorkspaceID     uuid.UUID       `json:"-"` // whose cache share the graph's figures use
	ConnectionID    uuid.UUID       `json:"connection_id"`
	Name            string          `json:"name"`
	SystemType      string          `json:"system_type"`
	Status          string          `json:"status"`      // "ready" when an index can be read, else "none"
	SyncStatus      string          `json:"sync_status"` // workspace_sap_graph.status (none, syncing, ready, failed)
	Generation      int64           `json:"generation"`  // 0: no index
	ChangeSeq       int64           `json:"change_seq"`  // the connector change-log position the index reflects
	LastFullSyncAt  *time.Time      `json:"last_full_sync_at"`
	LastDeltaSyncAt *time.Time      `json:"last_delta_sync_at"`
	Counts          sapindex.Counts `json:"counts"`
}

// IndexedAt is when the index last changed (the later of its last full and delta sync).
func (g Graph) IndexedAt() *time.Time {
	switch {
	case g.LastFullSyncAt == nil:
		return g.LastDeltaSyncAt
	case g.LastDeltaSyncAt != nil && g.LastDeltaSyncAt.After(*g.LastFullSyncAt):
		return g.LastDeltaSyncAt
	}
	return g.LastFullSyncAt
}

const graphColumns = `c.id, c.name, c.system_type, COALESCE(g.status, 'none'), COALESCE(g.generation, 0), COALESCE(g.change_seq, 0),
	g.last_full_sync_at, g.last_delta_sync_at, COALESCE(g.counts, '{}')`

func scanGraph(row pgx.Row) (Graph, error) {
	var g Graph
	var counts []byte
	if err := row.Scan(&g.ConnectionID, &g.Name, &g.SystemType, &g.SyncStatus, &g.Generation, &g.ChangeSeq,
		&g.LastFullSyncAt, &g.LastDeltaSyncAt, &counts); err != nil {
		return g, err
	}
	if err := json.Unmarshal(counts, &g.Counts); err != nil {
		return g, fmt.Errorf("graph counts: %w", err)
	}
	if g.Counts.CleanCore == nil {
		g.Counts.CleanCore = map[string]int64{}
	}
	g.Status = "none"
	if g.Generation > 0 {
		g.Status = "ready"
	}
	return g, nil
}

// Graph loads a connection of the workspace with its index state; store.ErrNotFound when the
// workspace has no such connection.
func (r Reader) Graph(ctx context.Context, workspaceID, connectionID uuid.UUID) (Graph, error) {
	g, err := scanGraph(r.DB.QueryRow(ctx, `SELECT `+graphColumns+` FROM workspace_connections c
		LEFT JOIN workspace_sap_graph g ON g.connection_id = c.id
		WHERE c.id = $1 AND c.workspace_id = $2`, connectionID, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return g, store.ErrNotFound
	}
	g.WorkspaceID = workspaceID
	return g, err
}

// Graphs lists every connection of the workspace with its index state, by name.
func (r Reader) Graphs(ctx context.Context, workspaceID uuid.UUID) ([]Graph, error) {
	rows, err := r.DB.Query(ctx, `SELECT `+graphColumns+` FROM workspace_connections c
		LEFT JOIN workspace_sap_graph g ON g.connection_id = c.id
		WHERE c.workspace_id = $1 ORDER BY c.name, c.id`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Graph, error) {
		g, err := scanGraph(row)
		g.WorkspaceID = workspaceID
		return g, err
	})
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

// likeContains is a LIKE pattern matching s anywhere, with LIKE's wildcards in s taken literally
// (SAP names are full of underscores).
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}
