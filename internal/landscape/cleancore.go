package landscape

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/sapagent/sapagent/internal/store"
)

// LevelShare is one Clean Core level's objects and their share of all analysed objects.
type LevelShare struct {
	Level   string  `json:"level"`
	Objects int64   `json:"objects"`
	Share   float64 `json:"share"` // 0–1; 0 when nothing was analysed
}

// CleanCoreSummary is the distribution of a connection's custom objects over the levels.
type CleanCoreSummary struct {
	Objects int64        `json:"objects"`
	Levels  []LevelShare `json:"levels"` // A, B, C, D in that order
}

// CleanCoreSummary counts the connection's analysed objects per level (optionally of one package).
func (r Reader) CleanCoreSummary(ctx context.Context, g Graph, pkg string) (CleanCoreSummary, error) {
	counts, err := r.levelCounts(ctx, g.ConnectionID, g.Generation, pkg)
	if err != nil {
		return CleanCoreSummary{}, err
	}
	s := CleanCoreSummary{Levels: make([]LevelShare, 0, len(Levels))}
	for _, l := range Levels {
		s.Objects += counts[l]
	}
	for _, l := range Levels {
		ls := LevelShare{Level: l, Objects: counts[l]}
		if s.Objects > 0 {
			ls.Share = float64(counts[l]) / float64(s.Objects)
		}
		s.Levels = append(s.Levels, ls)
	}
	return s, nil
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

func findingKeys(f Finding) []string { return []string{f.Type, f.Name} }

// FindingFilter narrows the list of objects with findings. Empty fields do not filter.
type FindingFilter struct {
	Level   string // A–D
	Package string
}

// Findings pages through the objects with at least one reason, in (type, name) order.
func (r Reader) Findings(ctx context.Context, g Graph, f FindingFilter, cur *Cursor, limit int) (Page[Finding], error) {
	k := after(cur, 2)
	rows, err := r.DB.Query(ctx, `SELECT a.object_type, a.object_name, a.package, a.level, jsonb_array_length(a.findings),
			(SELECT COALESCE(jsonb_agg(t.r ORDER BY t.n), '[]') FROM (
				SELECT r, row_number() OVER (ORDER BY r->>'level' DESC, ord) AS n
				FROM jsonb_array_elements(a.findings) WITH ORDINALITY AS x(r, ord)) t WHERE t.n <= $7),
			(SELECT COALESCE(jsonb_agg(DISTINCT s), '[]') FROM jsonb_array_elements(a.findings) AS x(r),
				jsonb_array_elements(CASE WHEN jsonb_typeof(x.r->'successors') = 'array' THEN x.r->'successors' ELSE '[]' END) AS s)
		FROM clean_core_analysis a
		WHERE a.connection_id = $1 AND a.generation = $2 AND ($3 = '' OR a.level = $3) AND ($4 = '' OR a.package = $4)
			AND (a.object_type, a.object_name) > ($5, $6) AND CASE WHEN jsonb_typeof(a.findings) = 'array' THEN jsonb_array_length(a.findings) > 0 ELSE false END
		ORDER BY a.object_type, a.object_name LIMIT $8`,
		g.ConnectionID, g.Generation, f.Level, f.Package, k[0], k[1], TopReasons, limit+1)
	if err != nil {
		return Page[Finding]{}, err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Finding])
	if err != nil {
		return Page[Finding]{}, err
	}
	return pageOf(items, limit, findingKeys), nil
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
func (r Reader) CleanCoreObject(ctx context.Context, g Graph, objType, name string) (CleanCoreObject, error) {
	o := CleanCoreObject{Generation: g.Generation}
	err := r.DB.QueryRow(ctx, `SELECT object_type, object_name, package, level, findings, conversion FROM clean_core_analysis
		WHERE connection_id = $1 AND generation = $2 AND object_type = $3 AND object_name = $4`,
		g.ConnectionID, g.Generation, objType, name).Scan(&o.Type, &o.Name, &o.Package, &o.Level, &o.Reasons, &o.Conversion)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, store.ErrNotFound
	}
	return o, err
}
