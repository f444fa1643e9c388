package landscape

import (
	"context"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Dashboard is one connection's analytics.
type Dashboard struct {
	Graph
	Objects       int64            `json:"objects"`        // SAP objects in the index (search entries without docs)
	CustomObjects int64            `json:"custom_objects"` // of which custom
	ByType        []TypeCount      `json:"by_type"`
	ByPackage     []PackageCount   `json:"by_package"`   // the largest packages, most objects first
	ByComponent   []PackageCount   `json:"by_component"` // custom objects per application component, when the connector names one
	CustomCode    CustomCode       `json:"custom_code"`
	CleanCore     map[string]int64 `json:"clean_core"` // custom objects per level A–D (every level present)
	Relationships int64            `json:"relationships"`
	LastRuns      []SyncRun        `json:"last_runs"` // the latest run of each mode
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

// CustomCode is the size of the custom code, as the last sync counted it (sapindex.Counts):
// summing lines over the index would read every source.
type CustomCode struct {
	Objects int64 `json:"objects"`
	Lines   int64 `json:"lines"`
}

// SyncRun is a sync run as the dashboard shows it.
type SyncRun struct {
	ID         uuid.UUID  `json:"id"`
	Mode       string     `json:"mode"`
	Trigger    string     `json:"trigger"`
	Status     string     `json:"status"`
	Generation int64      `json:"generation"`
	Error      string     `json:"error"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Levels are the Clean Core levels, best first.
var Levels = []string{"A", "B", "C", "D"}

// Dashboard computes one connection's analytics (g from Graph). A connection without an index
// gets its graph, its last runs and empty figures.
func (r Reader) Dashboard(ctx context.Context, g Graph, topPackages int) (Dashboard, error) {
	d := Dashboard{Graph: g, ByType: []TypeCount{}, ByPackage: []PackageCount{}, ByComponent: []PackageCount{},
		CleanCore: map[string]int64{}, CustomCode: CustomCode{Objects: g.Counts.CustomCode, Lines: g.Counts.CodeLines}}
	for _, l := range Levels {
		d.CleanCore[l] = 0
	}
	var err error
	if d.LastRuns, err = r.lastRuns(ctx, g.ConnectionID); err != nil {
		return d, err
	}
	if g.Generation == 0 {
		return d, nil
	}
	fig, err := cached(r.Cache, g.WorkspaceID, "figures", g.version(), func() (figures, error) { return r.figures(ctx, g) })
	if err != nil {
		return d, err
	}
	d.Objects, d.CustomObjects, d.Relationships = fig.Objects, fig.CustomObjects, fig.Relationships
	d.ByType = fig.ByType
	d.ByPackage = fig.ByPackage[:min(topPackages, len(fig.ByPackage))]
	d.ByComponent = fig.ByComponent[:min(topPackages, len(fig.ByComponent))]
	levels, err := r.levelCounts(ctx, g.ConnectionID, g.Generation, "")
	for l, n := range levels {
		d.CleanCore[l] = n
	}
	return d, err
}

// MaxTop is the most packages (and components) a dashboard lists.
const MaxTop = 100

// figures are the dashboard's figures over the whole index: they change only when a sync
// changes the index, so they are cached under the graph's version (see Cache).
type figures struct {
	Objects, CustomObjects, Relationships int64
	ByType                                []TypeCount
	ByPackage, ByComponent                []PackageCount // the MaxTop largest
}

// bytes estimates the figures' size in the cache.
func (f figures) bytes() int64 {
	return 64 + int64(len(f.ByType))*48 + int64(len(f.ByPackage)+len(f.ByComponent))*64
}

func (r Reader) figures(ctx context.Context, g Graph) (figures, error) {
	id, gen := g.ConnectionID, g.Generation
	f := figures{ByType: []TypeCount{}, ByPackage: []PackageCount{}}
	// One pass over the connection's entries for both the per-type and the per-package
	// figures (GROUPING SETS); the PK's leading (connection_id, generation) bounds it to this
	// index. Packages number thousands, so ranking them here is cheap.
	rows, err := r.DB.Query(ctx, `SELECT GROUPING(object_type), COALESCE(object_type, ''), COALESCE(package, ''), count(*), count(*) FILTER (WHERE custom)
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
	sortCounts(f.ByType, func(t TypeCount) (int64, string) { return t.Objects, t.Type })
	sortCounts(f.ByPackage, func(p PackageCount) (int64, string) { return p.Objects, p.Name })
	f.ByPackage = f.ByPackage[:min(MaxTop, len(f.ByPackage))]
	// Components come only from custom objects (tens of thousands, not the whole landscape).
	rows, err = r.DB.Query(ctx, `SELECT comp, count(*), count(*) FROM (
			SELECT COALESCE(NULLIF(data->>'application_component', ''), data->>'component') AS comp
			FROM workspace_sap_index WHERE connection_id = $1 AND generation = $2 AND phase = 'custom_objects') o
		WHERE comp <> '' GROUP BY comp ORDER BY count(*) DESC, comp LIMIT $3`, id, gen, MaxTop)
	if err != nil {
		return f, err
	}
	if f.ByComponent, err = pgx.CollectRows(rows, pgx.RowToStructByPos[PackageCount]); err != nil {
		return f, err
	}
	if f.ByComponent == nil {
		f.ByComponent = []PackageCount{}
	}
	err = r.DB.QueryRow(ctx, `SELECT count(*) FROM workspace_sap_index
		WHERE connection_id = $1 AND generation = $2 AND phase = 'relationships'`, id, gen).Scan(&f.Relationships)
	return f, err
}

// sortCounts orders by count, most first, then by name.
func sortCounts[T any](s []T, key func(T) (int64, string)) {
	sort.Slice(s, func(i, j int) bool {
		ni, si := key(s[i])
		nj, sj := key(s[j])
		if ni != nj {
			return ni > nj
		}
		return si < sj
	})
}

// lastRuns returns the latest run of each mode of a connection.
func (r Reader) lastRuns(ctx context.Context, connectionID uuid.UUID) ([]SyncRun, error) {
	rows, err := r.DB.Query(ctx, `SELECT id, mode, trigger, status, generation, error, started_at, finished_at FROM (
			SELECT DISTINCT ON (mode) * FROM sap_sync_runs WHERE connection_id = $1 ORDER BY mode, started_at DESC, id DESC) last
		ORDER BY started_at DESC`, connectionID)
	if err != nil {
		return nil, err
	}
	runs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[SyncRun])
	if runs == nil {
		runs = []SyncRun{}
	}
	return runs, err
}

// levelCounts counts custom objects per Clean Core level (optionally of one package).
func (r Reader) levelCounts(ctx context.Context, connectionID uuid.UUID, gen int64, pkg string) (map[string]int64, error) {
	rows, err := r.DB.Query(ctx, `SELECT level, count(*) FROM clean_core_analysis
		WHERE connection_id = $1 AND generation = $2 AND ($3 = '' OR package = $3) GROUP BY level`, connectionID, gen, pkg)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	var level string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&level, &n}, func() error { out[level] = n; return nil })
	return out, err
}
