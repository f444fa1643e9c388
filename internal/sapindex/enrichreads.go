package sapindex

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The reads of the enrichment steps (internal/sapenrich computes from what they return). Every
// query is bounded per row: a page is cut by keyset first, then each of its objects looks up
// what belongs to it by primary key (LATERAL … LIMIT 1 or a correlated aggregate), which stays
// an index probe whatever the planner's statistics say (freshly copied rows have none, and a
// join planned on them degrades to a scan per row).

// Selection is the generation an enrichment step reads; with RunID set, only the objects that
// delta run changed (its sap_sync_changes rows).
type Selection struct {
	Scoped
	RunID uuid.UUID
}

// args are the arguments every selection query takes: $1 connection, $2 workspace,
// $3 generation, $4 run (NULL: the whole generation).
func (s Selection) args(extra ...any) []any {
	a := []any{s.ConnectionID, s.WorkspaceID, s.Generation, nil}
	if s.RunID != uuid.Nil {
		a[3] = s.RunID
	}
	return append(a, extra...)
}

// CountCustomObjects counts the selection's custom objects (custom_objects phase).
func (x *Index) CountCustomObjects(ctx context.Context, s Selection) (int64, error) {
	var n int64
	err := x.Pool.QueryRow(ctx, `SELECT count(*) FROM workspace_sap_index o
		WHERE o.connection_id = $1 AND o.workspace_id = $2 AND o.generation = $3 AND o.phase = 'custom_objects'`+
		ChangedFilter("o"), s.args()...).Scan(&n)
	return n, err
}

// CountCustomPackages counts the packages of the selection's custom objects.
func (x *Index) CountCustomPackages(ctx context.Context, s Selection) (int64, error) {
	var n int64
	err := x.Pool.QueryRow(ctx, `SELECT count(DISTINCT o.package) FROM workspace_sap_index o
		WHERE o.connection_id = $1 AND o.workspace_id = $2 AND o.generation = $3 AND o.phase = 'custom_objects'
			AND o.package <> ''`+ChangedFilter("o"), s.args()...).Scan(&n)
	return n, err
}

// Relationships are an object's relationship items as parallel lists, in item order
// ("" where an item lacks the field).
type Relationships struct {
	ToTypes, Tos, Kinds, Usages, Lines []string
}

// relationshipsOf aggregates the relationships of the object in alias into parallel arrays
// (to_types, tos, kinds, usages, lines): a correlated lookup on the primary key, one index
// probe per object.
func relationshipsOf(alias string) string {
	return `(SELECT
			coalesce(array_agg(coalesce(r.data->>'to_type', '') ORDER BY r.item_key), '{}') AS to_types,
			coalesce(array_agg(coalesce(r.data->>'to', '') ORDER BY r.item_key), '{}') AS tos,
			coalesce(array_agg(coalesce(r.data->>'kind', '') ORDER BY r.item_key), '{}') AS kinds,
			coalesce(array_agg(coalesce(r.data->>'usage', '') ORDER BY r.item_key), '{}') AS usages,
			coalesce(array_agg(coalesce(r.data->>'line', '') ORDER BY r.item_key), '{}') AS lines
		FROM workspace_sap_index r
		WHERE r.connection_id = ` + alias + `.connection_id AND r.generation = ` + alias + `.generation AND r.phase = 'relationships'
			AND r.object_type = ` + alias + `.object_type AND r.object_name = ` + alias + `.object_name)`
}

// ObjectUsages is a custom object with its relationships.
type ObjectUsages struct {
	ObjectType, ObjectName, Package string
	Relationships
}

// CustomObjectUsages calls fn for each custom object of the selection, in (type, name) order,
// with its relationships. The query stays open while fn runs (fn may write through other
// connections of the pool); an error from fn stops it.
func (x *Index) CustomObjectUsages(ctx context.Context, s Selection, fn func(ObjectUsages) error) error {
	rows, err := x.Pool.Query(ctx, `SELECT o.object_type, o.object_name, o.package, rel.to_types, rel.tos, rel.kinds, rel.usages, rel.lines
		FROM workspace_sap_index o
		CROSS JOIN LATERAL `+relationshipsOf("o")+` rel
		WHERE o.connection_id = $1 AND o.workspace_id = $2 AND o.generation = $3 AND o.phase = 'custom_objects'`+
		ChangedFilter("o")+`
		ORDER BY o.object_type, o.object_name`, s.args()...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var o ObjectUsages
		if err := rows.Scan(&o.ObjectType, &o.ObjectName, &o.Package, &o.ToTypes, &o.Tos, &o.Kinds, &o.Usages, &o.Lines); err != nil {
			return err
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	return rows.Err()
}

// OwnObjectNames are the namespaces (/NS/) and the other names not starting with Z or Y of the
// generation's custom objects (the whole generation, also for a delta).
func (x *Index) OwnObjectNames(ctx context.Context, s Scoped) ([]string, error) {
	rows, err := x.Pool.Query(ctx, `SELECT DISTINCT CASE WHEN object_name ~ '^/[^/]+/' THEN substring(object_name from '^/[^/]+/')
			ELSE upper(object_name) END
		FROM workspace_sap_index
		WHERE connection_id = $1 AND workspace_id = $2 AND generation = $3 AND phase = 'custom_objects'
			AND upper(left(object_name, 1)) NOT IN ('Z', 'Y')`, s.ConnectionID, s.WorkspaceID, s.Generation)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// DocInputHash is the input hash a generated doc was last written from (nil: no such doc).
func (x *Index) DocInputHash(ctx context.Context, s Scoped, kind, subject string) ([]byte, error) {
	var h []byte
	err := x.Pool.QueryRow(ctx, `SELECT input_hash FROM sap_generated_docs WHERE connection_id = $1 AND workspace_id = $2
		AND kind = $3 AND subject = $4`, s.ConnectionID, s.WorkspaceID, kind, subject).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return h, err
}

// ObjectDocLimits bound what ObjectDocInputs returns per object.
type ObjectDocLimits struct {
	SourceChars   int // of the source excerpt
	Relationships int
	Findings      int
	Objects       int // per page
}

// ObjectDocInput is what a custom object's doc is written from.
type ObjectDocInput struct {
	ObjectType, ObjectName, Package, Description string
	Fields                                       []byte // JSON, as the connector sent it (nil: none)
	Source                                       string // the first SourceChars characters
	SourceLen                                    int
	Relationships                                []byte // JSON [[kind, to_type, to, usage], …]
	Level                                        string // "" when not analysed
	Findings                                     []byte // JSON array, worst first
	OldHash                                      []byte // input hash of the object's doc (nil: none)
}

// ObjectDocInputs returns a page of the selection's custom objects after (afterType, afterName)
// in (type, name) order, each with its source excerpt, relationships, level and cached doc hash.
func (x *Index) ObjectDocInputs(ctx context.Context, s Selection, afterType, afterName string, lim ObjectDocLimits) ([]ObjectDocInput, error) {
	rows, err := x.Pool.Query(ctx, `WITH page AS (
			SELECT o.connection_id, o.generation, o.object_type, o.object_name, o.package, o.description, o.data->'fields' AS fields
			FROM workspace_sap_index o
			WHERE o.connection_id = $1 AND o.workspace_id = $2 AND o.generation = $3 AND o.phase = 'custom_objects'`+
		ChangedFilter("o")+` AND (o.object_type, o.object_name) > ($5, $6)
			ORDER BY o.object_type, o.object_name LIMIT $10)
		SELECT o.object_type, o.object_name, o.package, o.description, o.fields,
			coalesce(src.excerpt, ''), coalesce(src.len, 0),
			coalesce((SELECT jsonb_agg(jsonb_build_array(x.data->>'kind', x.data->>'to_type', x.data->>'to', x.data->>'usage'))
				FROM (SELECT r.data FROM workspace_sap_index r WHERE r.connection_id = o.connection_id AND r.generation = o.generation
					AND r.phase = 'relationships' AND r.object_type = o.object_type AND r.object_name = o.object_name
					ORDER BY r.item_key LIMIT $8) x), '[]'),
			coalesce(a.level, ''),
			coalesce((SELECT jsonb_agg(f) FROM (SELECT f FROM jsonb_array_elements(a.findings) f LIMIT $9) s), '[]'),
			(SELECT d.input_hash FROM sap_generated_docs d WHERE d.connection_id = o.connection_id AND d.kind = 'object'
				AND d.subject = o.object_type || ' ' || o.object_name)
		FROM page o
		LEFT JOIN LATERAL (SELECT left(c.data->>'source', $7) AS excerpt, length(c.data->>'source') AS len
			FROM workspace_sap_index c WHERE c.connection_id = o.connection_id AND c.generation = o.generation
				AND c.phase = 'custom_code' AND c.object_type = o.object_type AND c.object_name = o.object_name
			ORDER BY c.item_key LIMIT 1) src ON true
		LEFT JOIN LATERAL (SELECT a.level, a.findings FROM clean_core_analysis a WHERE a.connection_id = o.connection_id
			AND a.generation = o.generation AND a.object_type = o.object_type AND a.object_name = o.object_name LIMIT 1) a ON true
		ORDER BY o.object_type, o.object_name`,
		s.args(afterType, afterName, lim.SourceChars, lim.Relationships, lim.Findings, lim.Objects)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ObjectDocInput, error) {
		var o ObjectDocInput
		err := row.Scan(&o.ObjectType, &o.ObjectName, &o.Package, &o.Description, &o.Fields, &o.Source, &o.SourceLen,
			&o.Relationships, &o.Level, &o.Findings, &o.OldHash)
		return o, err
	})
}

// PackageObject is a custom object of a package with its level and relationships.
type PackageObject struct {
	Package, ObjectType, ObjectName, Description string
	Fields                                       []byte // JSON (nil: none)
	Level                                        string // "" when not analysed
	Relationships
}

// PackageObjects returns a page of the custom objects, in (package, type, name) order after
// the key given, of the packages the selection touches (for a delta: every object of a package
// with a changed object). Objects without a package are left out.
func (x *Index) PackageObjects(ctx context.Context, s Selection, afterPkg, afterType, afterName string, limit int) ([]PackageObject, error) {
	rows, err := x.Pool.Query(ctx, `WITH page AS (
			SELECT o.connection_id, o.generation, o.package, o.object_type, o.object_name, o.description, o.data->'fields' AS fields
			FROM workspace_sap_index o
			WHERE o.connection_id = $1 AND o.workspace_id = $2 AND o.generation = $3 AND o.phase = 'custom_objects'
				AND o.package <> '' AND (o.package, o.object_type, o.object_name) > ($5, $6, $7)
				AND ($4::uuid IS NULL OR o.package IN (SELECT c.package FROM sap_sync_changes ch
					JOIN workspace_sap_index c ON c.connection_id = $1 AND c.generation = $3 AND c.phase = 'custom_objects'
						AND c.object_type = ch.object_type AND c.object_name = ch.object_name
					WHERE ch.run_id = $4))
			ORDER BY o.package, o.object_type, o.object_name LIMIT $8)
		SELECT p.package, p.object_type, p.object_name, p.description, p.fields,
			coalesce((SELECT a.level FROM clean_core_analysis a WHERE a.connection_id = p.connection_id
				AND a.generation = p.generation AND a.object_type = p.object_type AND a.object_name = p.object_name), ''),
			rel.to_types, rel.tos, rel.kinds, rel.usages, rel.lines
		FROM page p CROSS JOIN LATERAL `+relationshipsOf("p")+` rel
		ORDER BY p.package, p.object_type, p.object_name`,
		s.args(afterPkg, afterType, afterName, limit)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (PackageObject, error) {
		var o PackageObject
		err := row.Scan(&o.Package, &o.ObjectType, &o.ObjectName, &o.Description, &o.Fields, &o.Level,
			&o.ToTypes, &o.Tos, &o.Kinds, &o.Usages, &o.Lines)
		return o, err
	})
}

// CustomTableFields returns the fields (JSON) of the generation's custom tables among names
// that have them, by name.
func (x *Index) CustomTableFields(ctx context.Context, s Scoped, names []string) (map[string][]byte, error) {
	rows, err := x.Pool.Query(ctx, `SELECT object_name, data->'fields' FROM workspace_sap_index
		WHERE connection_id = $1 AND workspace_id = $2 AND generation = $3 AND phase = 'custom_objects'
			AND object_type = 'TABL' AND object_name = ANY($4) AND data ? 'fields'`,
		s.ConnectionID, s.WorkspaceID, s.Generation, names)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var name string
	var raw []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &raw}, func() error {
		out[name] = append([]byte(nil), raw...)
		return nil
	})
	return out, err
}

// ObjectUsage is one relationship of a custom object to another object.
type ObjectUsage struct {
	Package, ObjectType, ObjectName string // the custom object
	To, Usage, Kind                 string // upper-case name used; lower-case usage
}

// UsagesOf calls fn for every relationship of the generation's custom objects to an object
// named in names or matching one of the LIKE patterns, ordered by (type, name, used object),
// so each object's rows are consecutive.
func (x *Index) UsagesOf(ctx context.Context, s Scoped, names, patterns []string, fn func(ObjectUsage) error) error {
	// Only matching relationships look their object up, by primary key. LIMIT 1 keeps the
	// lookup a per-row probe: without it Postgres pulls the subquery up into a join, and on
	// fresh rows without statistics it plans that join as a scan of every custom object per
	// relationship (11.7 s at 100k entries, see docs/benchmarks.md "SAP landscape sync").
	rows, err := x.Pool.Query(ctx, `SELECT o.package, r.object_type, r.object_name, upper(r.data->>'to'),
			lower(coalesce(r.data->>'usage', '')), coalesce(r.data->>'kind', '')
		FROM workspace_sap_index r
		CROSS JOIN LATERAL (SELECT o.package FROM workspace_sap_index o WHERE o.connection_id = r.connection_id
			AND o.generation = r.generation AND o.phase = 'custom_objects' AND o.object_type = r.object_type
			AND o.object_name = r.object_name LIMIT 1) o
		WHERE r.connection_id = $1 AND r.workspace_id = $2 AND r.generation = $3 AND r.phase = 'relationships'
			AND (upper(r.data->>'to') = ANY($4) OR upper(r.data->>'to') LIKE ANY($5))
		ORDER BY r.object_type, r.object_name, 4`, s.ConnectionID, s.WorkspaceID, s.Generation, names, patterns)
	if err != nil {
		return err
	}
	var u ObjectUsage
	_, err = pgx.ForEachRow(rows, []any{&u.Package, &u.ObjectType, &u.ObjectName, &u.To, &u.Usage, &u.Kind}, func() error { return fn(u) })
	return err
}
