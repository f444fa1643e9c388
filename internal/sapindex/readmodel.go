package sapindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sapagent/sapagent/internal/store"
)

// The landscape read model: what the landscape routes show (internal/landscape pages, caches
// and compares over these reads). Every query is scoped twice: to the workspace (a connection
// of another workspace is not found) and to the connection's current generation in
// workspace_sap_graph, so a reader never sees the rows of a build in progress or of one being
// deleted. Lists are read by keyset over the tables' primary-key order (after: the last key of
// the previous page, empty strings before the first), so a page costs the same at one thousand
// and one million entries.

// DocCategory is the sap_search_entries category of generated docs: they are search entries
// but not SAP objects, so the inventory, the dashboard and the diff leave them out.
const DocCategory = "doc"

// Graph is a connection and the state of its index.
type Graph struct {
	WorkspaceID     uuid.UUID  `json:"-"` // whose cache share the graph's figures use
	ConnectionID    uuid.UUID  `json:"connection_id"`
	Name            string     `json:"name"`
	SystemType      string     `json:"system_type"`
	Status          string     `json:"status"`      // "ready" when an index can be read, else "none"
	SyncStatus      string     `json:"sync_status"` // workspace_sap_graph.status (none, syncing, ready, failed)
	Generation      int64      `json:"generation"`  // 0: no index
	ChangeSeq       int64      `json:"change_seq"`  // the connector change-log position the index reflects
	LastFullSyncAt  *time.Time `json:"last_full_sync_at"`
	LastDeltaSyncAt *time.Time `json:"last_delta_sync_at"`
	Counts          Counts     `json:"counts"`
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

func scanGraph(row pgx.Row, workspaceID uuid.UUID) (Graph, error) {
	g := Graph{WorkspaceID: workspaceID}
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
func (x *Index) Graph(ctx context.Context, workspaceID, connectionID uuid.UUID) (Graph, error) {
	g, err := scanGraph(x.Pool.QueryRow(ctx, `SELECT `+graphColumns+` FROM workspace_connections c
		LEFT JOIN workspace_sap_graph g ON g.connection_id = c.id
		WHERE c.id = $1 AND c.workspace_id = $2`, connectionID, workspaceID), workspaceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return g, store.ErrNotFound
	}
	return g, err
}

// Graphs lists every connection of the workspace with its index state, by name.
func (x *Index) Graphs(ctx context.Context, workspaceID uuid.UUID) ([]Graph, error) {
	rows, err := x.Pool.Query(ctx, `SELECT `+graphColumns+` FROM workspace_connections c
		LEFT JOIN workspace_sap_graph g ON g.connection_id = c.id
		WHERE c.workspace_id = $1 ORDER BY c.name, c.id`, workspaceID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Graph, error) { return scanGraph(row, workspaceID) })
}

// TypeCount counts the objects of one type.
type TypeCount struct {
	Type    string `json:"type"`
	Objects int64  `json:"objects"`
	Custom  int64  `json:"custom"`
}

// PackageCount counts the objects of one package (or application component).
type PackageCount struct {
	Name    string `json:"name"`
	Objects int64  `json:"objects"`
	Custom  int64  `json:"custom"`
}

// Figures are the dashboard's counts over a whole index.
type Figures struct {
	Objects, CustomObjects, Relationships int64
	ByType                                []TypeCount    // unordered
	ByPackage                             []PackageCount // every package, unordered
	ByComponent                           []PackageCount // the largest components, most custom objects first
}

// Figures counts the index of g: objects per type and package, custom objects per application
// component (the topComponents largest), relationships.
func (x *Index) Figures(ctx context.Context, g Graph, topComponents int) (Figures, error) {
	id, gen := g.ConnectionID, g.Generation
	f := Figures{ByType: []TypeCount{}, ByPackage: []PackageCount{}}
	// One pass over the connection's entries for both the per-type and the per-package
	// figures (GROUPING SETS); the PK's leading (connection_id, generation) bounds it to this
	// index.
	rows, err := x.Pool.Query(ctx, `SELECT GROUPING(object_type), COALESCE(object_type, ''), COALESCE(package, ''), count(*), count(*) FILTER (WHERE custom)
		FROM sap_search_entries WHERE connection_id = $1 AND generation = $2 AND category <> $3
		GROUP BY GROUPING SETS ((object_type), (package))`, id, gen, DocCategory)
	if err != nil {
		return f, err
	}
	var byType int
	var typ, pkg string
	var objects, custom int64
	_, err = pgx.ForEachRow(rows, []any{&byType, &typ, &pkg, &objects, &custom}, func() error {
		if byType == 0 {
			f.ByType = append(f.ByType, TypeCount{Type: typ, Objects: objects, Custom: custom})
			f.Objects += objects
			f.CustomObjects += custom
		} else if pkg != "" {
			f.ByPackage = append(f.ByPackage, PackageCount{Name: pkg, Objects: objects, Custom: custom})
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	// Components come only from custom objects (tens of thousands, not the whole landscape).
	rows, err = x.Pool.Query(ctx, `SELECT comp, count(*), count(*) FROM (
			SELECT COALESCE(NULLIF(data->>'application_component', ''), data->>'component') AS comp
			FROM workspace_sap_index WHERE connection_id = $1 AND generation = $2 AND phase = 'custom_objects') o
		WHERE comp <> '' GROUP BY comp ORDER BY count(*) DESC, comp LIMIT $3`, id, gen, topComponents)
	if err != nil {
		return f, err
	}
	if f.ByComponent, err = pgx.CollectRows(rows, pgx.RowToStructByPos[PackageCount]); err != nil {
		return f, err
	}
	if f.ByComponent == nil {
		f.ByComponent = []PackageCount{}
	}
	err = x.Pool.QueryRow(ctx, `SELECT count(*) FROM workspace_sap_index
		WHERE connection_id = $1 AND generation = $2 AND phase = 'relationships'`, id, gen).Scan(&f.Relationships)
	return f, err
}

// RunSummary is a sync run as the dashboard shows it.
type RunSummary struct {
	ID         uuid.UUID  `json:"id"`
	Mode       string     `json:"mode"`
	Trigger    string     `json:"trigger"`
	Status     string     `json:"status"`
	Generation int64      `json:"generation"`
	Error      string     `json:"error"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// LastRuns returns the latest run of each mode of a connection, newest first.
func (x *Index) LastRuns(ctx context.Context, connectionID uuid.UUID) ([]RunSummary, error) {
	rows, err := x.Pool.Query(ctx, `SELECT id, mode, trigger, status, generation, error, started_at, finished_at FROM (
			SELECT DISTINCT ON (mode) * FROM sap_sync_runs WHERE connection_id = $1 ORDER BY mode, started_at DESC, id DESC) last
		ORDER BY started_at DESC`, connectionID)
	if err != nil {
		return nil, err
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RunSummary])
	if runs == nil {
		runs = []RunSummary{}
	}
	return runs, err
}

// LevelCounts counts g's analysed custom objects per Clean Core level (optionally of one
// package); levels without objects are absent.
func (x *Index) LevelCounts(ctx context.Context, g Graph, pkg string) (map[string]int64, error) {
	rows, err := x.Pool.Query(ctx, `SELECT level, count(*) FROM clean_core_analysis
		WHERE connection_id = $1 AND generation = $2 AND ($3 = '' OR package = $3) GROUP BY level`, g.ConnectionID, g.Generation, pkg)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	var level string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&level, &n}, func() error { out[level] = n; return nil })
	return out, err
}

// Object is one SAP object of the inventory (a search entry).
type Object struct {
	Type         string `json:"object_type"`
	Name         string `json:"object_name"`
	Category     string `json:"category"`
	Custom       bool   `json:"custom"`
	Package      string `json:"package"`
	Title        string `json:"title"`
	ReleaseState string `json:"release_state"`
}

// ObjectFilter narrows the inventory. Empty fields do not filter.
type ObjectFilter struct {
	Type    string // exact object type (PROG, CLAS, TABL…)
	Package string // exact package
	Custom  *bool  // only custom (true) or only standard (false) objects
	Query   string // part of the object name, case-insensitive
}

// where appends the filter's conditions on alias a, numbering its arguments after args.
func (f ObjectFilter) where(a string, args []any) (string, []any) {
	var sb strings.Builder
	add := func(cond string, v any) {
		args = append(args, v)
		sb.WriteString(" AND ")
		sb.WriteString(strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Type != "" {
		add(a+".object_type = ?", f.Type)
	}
	if f.Package != "" {
		add(a+".package = ?", f.Package)
	}
	if f.Custom != nil {
		add(a+".custom = ?", *f.Custom)
	}
	if f.Query != "" {
		// SAP names are upper case; the trigram index serves the LIKE.
		add(a+".object_name LIKE ?", likeContains(strings.ToUpper(f.Query)))
	}
	return sb.String(), args
}

// likeContains is a LIKE pattern matching s anywhere, with LIKE's wildcards in s taken literally
// (SAP names are full of underscores).
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// Objects returns up to limit objects of g's inventory after the key (type, name) under f.
func (x *Index) Objects(ctx context.Context, g Graph, f ObjectFilter, after []string, limit int) ([]Object, error) {
	args := []any{g.ConnectionID, g.Generation, DocCategory, after[0], after[1]}
	cond, args := f.where("e", args)
	args = append(args, limit)
	rows, err := x.Pool.Query(ctx, `SELECT e.object_type, e.object_name, e.category, e.custom, e.package, e.title, e.release_state
		FROM sap_search_entries e WHERE e.connection_id = $1 AND e.generation = $2 AND e.category <> $3
		AND (e.object_type, e.object_name) > ($4, $5)`+cond+`
		ORDER BY e.object_type, e.object_name LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Object])
}

// Finding is an object with findings as the list shows it: its level, its worst reasons and
// every successor SAP names for what it uses.
type Finding struct {
	Type       string          `json:"object_type"`
	Name       string          `json:"object_name"`
	Package    string          `json:"package"`
	Level      string          `json:"level"`
	Reasons    int             `json:"reasons"`     // how many reasons the object has
	TopReasons json.RawMessage `json:"top_reasons"` // up to TopReasons cleancore.Reason, worst level first
	Successors json.RawMessage `json:"successors"`  // distinct cleancore.Object successors over all reasons
}

// TopReasons is how many reasons a list entry carries.
const TopReasons = 3

// FindingFilter narrows the list of objects with findings. Empty fields do not filter.
type FindingFilter struct {
	Level   string // A–D
	Package string
}

// Findings returns up to limit objects of g with at least one reason after the key (type, name).
func (x *Index) Findings(ctx context.Context, g Graph, f FindingFilter, after []string, limit int) ([]Finding, error) {
	rows, err := x.Pool.Query(ctx, `SELECT a.object_type, a.object_name, a.package, a.level, jsonb_array_length(a.findings),
			(SELECT COALESCE(jsonb_agg(t.r ORDER BY t.n), '[]') FROM (
				SELECT r, row_number() OVER (ORDER BY r->>'level' DESC, ord) AS n
				FROM jsonb_array_elements(a.findings) WITH ORDINALITY AS x(r, ord)) t WHERE t.n <= $7),
			(SELECT COALESCE(jsonb_agg(DISTINCT s), '[]') FROM jsonb_array_elements(a.findings) AS x(r),
				jsonb_array_elements(CASE WHEN jsonb_typeof(x.r->'successors') = 'array' THEN x.r->'successors' ELSE '[]' END) AS s)
		FROM clean_core_analysis a
		WHERE a.connection_id = $1 AND a.generation = $2 AND ($3 = '' OR a.level = $3) AND ($4 = '' OR a.package = $4)
			AND (a.object_type, a.object_name) > ($5, $6) AND CASE WHEN jsonb_typeof(a.findings) = 'array' THEN jsonb_array_length(a.findings) > 0 ELSE false END
		ORDER BY a.object_type, a.object_name LIMIT $8`,
		g.ConnectionID, g.Generation, f.Level, f.Package, after[0], after[1], TopReasons, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Finding])
}

// CleanCoreObject is one analysed object with every reason and its conversion items.
type CleanCoreObject struct {
	Type       string          `json:"object_type"`
	Name       string          `json:"object_name"`
	Package    string          `json:"package"`
	Level      string          `json:"level"`
	Reasons    json.RawMessage `json:"reasons"`    // every cleancore.Reason as the analysis stored it
	Conversion json.RawMessage `json:"conversion"` // cleancore.ConversionItem list (ECC: deprecated usages and successors)
	Generation int64           `json:"generation"`
}

// CleanCoreObject loads one object's analysis; store.ErrNotFound when it has none.
func (x *Index) CleanCoreObject(ctx context.Context, g Graph, objType, name string) (CleanCoreObject, error) {
	o := CleanCoreObject{Generation: g.Generation}
	err := x.Pool.QueryRow(ctx, `SELECT object_type, object_name, package, level, findings, conversion FROM clean_core_analysis
		WHERE connection_id = $1 AND generation = $2 AND object_type = $3 AND object_name = $4`,
		g.ConnectionID, g.Generation, objType, name).Scan(&o.Type, &o.Name, &o.Package, &o.Level, &o.Reasons, &o.Conversion)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, store.ErrNotFound
	}
	return o, err
}

// Doc is a generated doc; Markdown is empty in lists.
type Doc struct {
	Kind       string    `json:"kind"`
	Subject    string    `json:"subject"`
	Title      string    `json:"title"`
	Model      string    `json:"model"`
	Generation int64     `json:"generation"`
	UpdatedAt  time.Time `json:"updated_at"`
	Markdown   string    `json:"markdown,omitempty"`
}

// docsVisible are the docs a reader sees: those confirmed for the current generation or an
// earlier one. A doc written for a build that has not been switched to yet stays hidden until it is.
const docsVisible = `connection_id = $1 AND generation <= $2`

// Docs returns up to limit of g's docs (optionally of one kind) after the key (kind, subject).
func (x *Index) Docs(ctx context.Context, g Graph, kind string, after []string, limit int) ([]Doc, error) {
	rows, err := x.Pool.Query(ctx, `SELECT kind, subject, title, model, generation, updated_at, '' FROM sap_generated_docs
		WHERE `+docsVisible+` AND ($3 = '' OR kind = $3) AND (kind, subject) > ($4, $5)
		ORDER BY kind, subject LIMIT $6`, g.ConnectionID, g.Generation, kind, after[0], after[1], limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Doc])
}

// Doc loads one doc with its Markdown; store.ErrNotFound when there is none.
func (x *Index) Doc(ctx context.Context, g Graph, kind, subject string) (Doc, error) {
	var d Doc
	err := x.Pool.QueryRow(ctx, `SELECT kind, subject, title, model, generation, updated_at, markdown FROM sap_generated_docs
		WHERE `+docsVisible+` AND kind = $3 AND subject = $4`, g.ConnectionID, g.Generation, kind, subject).
		Scan(&d.Kind, &d.Subject, &d.Title, &d.Model, &d.Generation, &d.UpdatedAt, &d.Markdown)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, store.ErrNotFound
	}
	return d, err
}

// Source is a custom object's source as the index holds it.
type Source struct {
	Type   string `json:"object_type"`
	Name   string `json:"name"`
	Source string `json:"source"`
	Lines  int64  `json:"lines"`
}

// Source loads a custom object's source from g's custom_code phase; objType may be empty (the
// first type with that name). ok is false when the index has none.
func (x *Index) Source(ctx context.Context, g Graph, objType, name string) (Source, bool, error) {
	var s Source
	if g.Generation == 0 {
		return s, false, nil
	}
	err := x.Pool.QueryRow(ctx, `SELECT object_type, object_name, COALESCE(data->>'source', ''),
			COALESCE(CASE WHEN jsonb_typeof(data->'lines') = 'number' THEN (data->>'lines')::numeric::bigint END, 0)
		FROM workspace_sap_index
		WHERE connection_id = $1 AND generation = $2 AND phase = 'custom_code' AND ($3 = '' OR object_type = $3) AND object_name = $4
		ORDER BY object_type, item_key LIMIT 1`, g.ConnectionID, g.Generation, objType, name).Scan(&s.Type, &s.Name, &s.Source, &s.Lines)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}
