package landscape

import (
	"context"
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
	id, gen := g.ConnectionID, g.Generation
	// One pass over the connection's entries for the per-type figures; the PK's leading
	// (connection_id, generation) bounds it to this index.
	rows, err := r.DB.Query(ctx, `SELECT object_type, count(*), count(*) FILTER (WHERE custom)
		FROM sap_search_entries WHERE connection_id = $1 AND generation = $2 AND category <> $3
		GROUP BY object_type ORDER BY count(*) DESC, object_type`, id, gen, DocCategory)
	if err != nil {
		return d, err
	}
	if d.ByType, err = pgx.CollectRows(rows, pgx.RowToStructByPos[TypeCount]); err != nil {
		return d, err
	}
	for _, t := range d.ByType {
		d.Objects += t.Objects
		d.CustomObjects += t.Custom
	}
	rows, err = r.DB.Query(ctx, `SELECT package, count(*), count(*) FILTER (WHERE custom)
		FROM sap_search_entries WHERE connection_id = $1 AND generation = $2 AND category <> $3 AND package <> ''
		GROUP BY package ORDER BY count(*) DESC, package LIMIT $4`, id, gen, DocCategory, topPackages)
	if err != nil {
		return d, err
	}
	if d.ByPackage, err = pgx.CollectRows(rows, pgx.RowToStructByPos[PackageCount]); err != nil {
		return d, err
	}
	// Components come only from custom objects (tens of thousands, not the whole landscape).
	rows, err = r.DB.Query(ctx, `SELECT comp, count(*), count(*) FROM (
			SELECT COALESCE(NULLIF(data->>'application_component', ''), data->>'component') AS comp
			FROM workspace_sap_index WHERE connection_id = $1 AND generation = $2 AND phase = 'custom_objects') o
		WHERE comp <> '' GROUP BY comp ORDER BY count(*) DESC, comp LIMIT $3`, id, gen, topPackages)
	if err != nil {
		return d, err
	}
	if d.ByComponent, err = pgx.CollectRows(rows, pgx.RowToStructByPos[PackageCount]); err != nil {
		return d, err
	}
	levels, err := r.levelCounts(ctx, id, gen, "")
	if err != nil {
		return d, err
	}
	for l, n := range levels {
		d.CleanCore[l] = n
	}
	err = r.DB.QueryRow(ctx, `SELECT count(*) FROM workspace_sap_index
		WHERE connection_id = $1 AND generation = $2 AND phase = 'relationships'`, id, gen).Scan(&d.Relationships)
	return d, err
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
