package sapindex

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// The reads behind the landscape diff of two indexes (internal/landscape caches the comparison
// and pages the lists).

// ComparedEntry is one object of either of two indexes: its package and custom flag on each
// side, and whether both sides have the same content.
type ComparedEntry struct {
	Type, Name                string
	LeftPackage, RightPackage string
	InLeft, InRight           bool
	LeftCustom, RightCustom   bool
	Same                      bool
}

// CompareEntries merges the SAP objects of two indexes (one full join, streamed) and calls fn
// for each; an error from fn stops it.
func (x *Index) CompareEntries(ctx context.Context, left, right Graph, fn func(ComparedEntry) error) error {
	rows, err := x.Pool.Query(ctx, `SELECT COALESCE(l.object_type, r.object_type), COALESCE(l.object_name, r.object_name),
			COALESCE(l.package, ''), COALESCE(r.package, ''), l.object_name IS NOT NULL, r.object_name IS NOT NULL,
			COALESCE(l.custom, false), COALESCE(r.custom, false), COALESCE(l.content_hash = r.content_hash, false)
		FROM (SELECT object_type, object_name, package, custom, content_hash FROM sap_search_entries
			WHERE connection_id = $1 AND generation = $2 AND category <> $5) l
		FULL JOIN (SELECT object_type, object_name, package, custom, content_hash FROM sap_search_entries
			WHERE connection_id = $3 AND generation = $4 AND category <> $5) r
		ON l.object_type = r.object_type AND l.object_name = r.object_name`,
		left.ConnectionID, left.Generation, right.ConnectionID, right.Generation, DocCategory)
	if err != nil {
		return err
	}
	var e ComparedEntry
	_, err = pgx.ForEachRow(rows, []any{&e.Type, &e.Name, &e.LeftPackage, &e.RightPackage, &e.InLeft, &e.InRight,
		&e.LeftCustom, &e.RightCustom, &e.Same}, func() error { return fn(e) })
	return err
}

// Side is an object as one connection has it.
type Side struct {
	Package      string `json:"package"`
	Title        string `json:"title"`
	ReleaseState string `json:"release_state"`
}

// DiffItem is one object of a diff list. Left or Right is nil when the object is only in the
// other connection; Fields names what differs for changed objects (package, title,
// release_state, body; for custom objects also source).
type DiffItem struct {
	Type   string   `json:"object_type"`
	Name   string   `json:"object_name"`
	Custom bool     `json:"custom"`
	Left   *Side    `json:"left"`
	Right  *Side    `json:"right"`
	Fields []string `json:"fields,omitempty"`
}

// entriesOf is the FROM of one side's entries under the filter; args continue from args.
func entriesOf(g Graph, alias string, f ObjectFilter, args []any) (string, []any) {
	args = append(args, g.ConnectionID, g.Generation, DocCategory)
	n := len(args)
	cond, args := f.where(alias, args)
	return fmt.Sprintf(`SELECT %[1]s.* FROM sap_search_entries %[1]s WHERE %[1]s.connection_id = $%[2]d AND %[1]s.generation = $%[3]d AND %[1]s.category <> $%[4]d%[5]s`,
		alias, n-2, n-1, n, cond), args
}

// WindowEnd is the key of the window-th object of g after the key given, or nil when fewer
// follow. Only the type filter narrows the window (it is a range of the primary key); the count
// runs on the key alone, an index-only scan.
func (x *Index) WindowEnd(ctx context.Context, g Graph, f ObjectFilter, after []string, window int) ([]string, error) {
	args := []any{g.ConnectionID, g.Generation, after[0], after[1], window - 1}
	typ := ""
	if f.Type != "" {
		args = append(args, f.Type)
		typ = " AND object_type = $6"
	}
	rows, err := x.Pool.Query(ctx, `SELECT object_type, object_name FROM sap_search_entries
		WHERE connection_id = $1 AND generation = $2 AND (object_type, object_name) > ($3, $4)`+typ+`
		ORDER BY object_type, object_name OFFSET $5 LIMIT 2`, args...)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([]string, error) {
		var t, n string
		err := row.Scan(&t, &n)
		return []string{t, n}, err
	})
	if err != nil || len(keys) < 2 { // the window's last object is the side's last: no bound
		return nil, err
	}
	return keys[0], nil
}

// within limits a walk to keys up to bound (nil: no bound), numbering its arguments after args.
func within(alias string, bound []string, args []any) (string, []any) {
	if bound == nil {
		return "", args
	}
	args = append(args, bound[0], bound[1])
	return fmt.Sprintf(" AND (%[1]s.object_type, %[1]s.object_name) <= ($%[2]d, $%[3]d)", alias, len(args)-1, len(args)), args
}

// OnlyIn returns up to limit objects of from under f that other lacks, after the key given and
// up to bound (nil: none), in (type, name) order; the side is set in Left.
func (x *Index) OnlyIn(ctx context.Context, from, other Graph, f ObjectFilter, after, bound []string, limit int) ([]DiffItem, error) {
	args := []any{after[0], after[1]}
	// A scalar subquery, not NOT EXISTS: the planner would turn that into an anti-join that
	// hashes the whole other index before the first row; this probes its primary key for each
	// row in order and stops at the page's end.
	fs, args := entriesOf(from, "e", f, args)
	args = append(args, other.ConnectionID, other.Generation, limit)
	n := len(args)
	win, args := within("e", bound, args)
	rows, err := x.Pool.Query(ctx, `SELECT e.object_type, e.object_name, e.custom, e.package, e.title, e.release_state FROM (`+fs+`) e
		WHERE (e.object_type, e.object_name) > ($1, $2)`+win+` AND (SELECT true FROM sap_search_entries o
			WHERE o.connection_id = $`+strconv.Itoa(n-2)+` AND o.generation = $`+strconv.Itoa(n-1)+`
			AND o.object_type = e.object_type AND o.object_name = e.object_name) IS NULL
		ORDER BY e.object_type, e.object_name LIMIT $`+strconv.Itoa(n), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (DiffItem, error) {
		var d DiffItem
		var s Side
		err := row.Scan(&d.Type, &d.Name, &d.Custom, &s.Package, &s.Title, &s.ReleaseState)
		d.Left = &s
		return d, err
	})
}

// Changed returns up to limit objects of left under f whose content differs in right, after
// the key given and up to bound (nil: none), in (type, name) order, with what differs.
func (x *Index) Changed(ctx context.Context, left, right Graph, f ObjectFilter, after, bound []string, limit int) ([]DiffItem, error) {
	args := []any{after[0], after[1]}
	ls, args := entriesOf(left, "l", f, args)
	args = append(args, right.ConnectionID, right.Generation, limit)
	n := len(args)
	rc, rg := "$"+strconv.Itoa(n-2), "$"+strconv.Itoa(n-1)
	win, args := within("l", bound, args)
	lc, lg := "$3", "$4" // entriesOf put the left connection and generation right after the cursor
	// Source is compared only for custom objects: a few hash lookups per row of the page.
	sources := func(conn, gen string) string {
		return `(SELECT array_agg(s.content_hash ORDER BY s.item_key) FROM workspace_sap_index s WHERE s.connection_id = ` + conn +
			` AND s.generation = ` + gen + ` AND s.phase = 'custom_code' AND s.object_type = l.object_type AND s.object_name = l.object_name)`
	}
	rows, err := x.Pool.Query(ctx, `SELECT l.object_type, l.object_name, l.custom OR r.custom, l.package, l.title, l.release_state, r.package, r.title, r.release_state,
			l.body IS DISTINCT FROM r.body,
			(l.custom OR r.custom) AND `+sources(lc, lg)+` IS DISTINCT FROM `+sources(rc, rg)+`
		FROM (`+ls+`) l JOIN sap_search_entries r ON r.connection_id = `+rc+` AND r.generation = `+rg+`
			AND r.object_type = l.object_type AND r.object_name = l.object_name
		WHERE (l.object_type, l.object_name) > ($1, $2)`+win+` AND l.content_hash <> r.content_hash
		ORDER BY l.object_type, l.object_name LIMIT $`+strconv.Itoa(n), args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (DiffItem, error) {
		var d DiffItem
		var a, b Side
		var body, source bool
		err := row.Scan(&d.Type, &d.Name, &d.Custom, &a.Package, &a.Title, &a.ReleaseState, &b.Package, &b.Title, &b.ReleaseState, &body, &source)
		d.Left, d.Right, d.Fields = &a, &b, []string{}
		for _, fd := range []struct {
			name string
			diff bool
		}{{"package", a.Package != b.Package}, {"title", a.Title != b.Title}, {"release_state", a.ReleaseState != b.ReleaseState}, {"body", body}, {"source", source}} {
			if fd.diff {
				d.Fields = append(d.Fields, fd.name)
			}
		}
		return d, err
	})
}
