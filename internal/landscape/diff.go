package landscape

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Diff kinds: objects only in the left connection, only in the right one, in both with
// different content.
const (
	DiffOnlyLeft  = "only_left"
	DiffOnlyRight = "only_right"
	DiffChanged   = "changed"
)

// ValidDiffKind reports whether k is a diff kind.
func ValidDiffKind(k string) bool { return k == DiffOnlyLeft || k == DiffOnlyRight || k == DiffChanged }

// DiffCounts counts the objects of each kind (and those that are the same in both).
type DiffCounts struct {
	OnlyLeft  int64 `json:"only_left"`
	OnlyRight int64 `json:"only_right"`
	Changed   int64 `json:"changed"`
	Same      int64 `json:"same"`
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

func diffKeys(d DiffItem) []string { return []string{d.Type, d.Name} }

// entriesOf is the FROM of one side's entries under the filter; args continue from args.
func entriesOf(g Graph, alias string, f ObjectFilter, args []any) (string, []any) {
	args = append(args, g.ConnectionID, g.Generation, DocCategory)
	n := len(args)
	cond, args := f.where(alias, args)
	return fmt.Sprintf(`SELECT %[1]s.* FROM sap_search_entries %[1]s WHERE %[1]s.connection_id = $%[2]d AND %[1]s.generation = $%[3]d AND %[1]s.category <> $%[4]d%[5]s`,
		alias, n-2, n-1, n, cond), args
}

// DiffCounts counts what differs between two indexed connections under f. The comparison of
// both indexes is made once per pair of index versions and cached (in the left connection's
// workspace share); every filter, ?q= included, is counted from it in memory.
func (r Reader) DiffCounts(ctx context.Context, left, right Graph, f ObjectFilter) (DiffCounts, error) {
	cmp, err := cached(r.Cache, left.WorkspaceID, "comparison", left.version()+"|"+right.version(),
		func() (*comparison, error) { return r.compare(ctx, left, right) })
	if err != nil {
		return DiffCounts{}, err
	}
	return cmp.count(f), nil
}

// DefaultDiffWindow is how many objects of one index a diff page walks at most.
const DefaultDiffWindow = 50_000

// windowEnd is the key of the window-th object after k on the listed side g, or nil when fewer
// follow: the page then needs no upper bound. Only the type filter narrows the window (it is a
// range of the primary key); the count runs on the key alone, an index-only scan.
func (r Reader) windowEnd(ctx context.Context, g Graph, f ObjectFilter, k []string, window int) ([]string, error) {
	args := []any{g.ConnectionID, g.Generation, k[0], k[1], window - 1}
	typ := ""
	if f.Type != "" {
		args = append(args, f.Type)
		typ = " AND object_type = $6"
	}
	rows, err := r.DB.Query(ctx, `SELECT object_type, object_name FROM sap_search_entries
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

// Diff pages through the objects of one kind in (type, name) order. A page walks at most
// r.DiffWindow keys (DefaultDiffWindow when 0) of the side it lists (left for changed), so
// where such objects are sparse it holds fewer than limit, even none, and its cursor continues
// after the walked window: a request costs the same however far apart the differences lie.
func (r Reader) Diff(ctx context.Context, left, right Graph, kind string, f ObjectFilter, cur *Cursor, limit int) (Page[DiffItem], error) {
	p, bound, err := r.diff(ctx, left, right, kind, f, cur, limit)
	if err == nil && p.Next == nil && bound != nil {
		p.Next = &Cursor{Keys: bound}
	}
	return p, err
}

func (r Reader) diff(ctx context.Context, left, right Graph, kind string, f ObjectFilter, cur *Cursor, limit int) (Page[DiffItem], []string, error) {
	k := after(cur, 2)
	window := r.DiffWindow
	if window <= 0 {
		window = DefaultDiffWindow
	}
	listed := left
	if kind == DiffOnlyRight {
		listed = right
	}
	bound, err := r.windowEnd(ctx, listed, f, k, window)
	if err != nil {
		return Page[DiffItem]{}, nil, err
	}
	// within limits the walk to the window (after the query's other arguments).
	within := func(alias string, args []any) (string, []any) {
		if bound == nil {
			return "", args
		}
		args = append(args, bound[0], bound[1])
		return fmt.Sprintf(" AND (%[1]s.object_type, %[1]s.object_name) <= ($%[2]d, $%[3]d)", alias, len(args)-1, len(args)), args
	}
	args := []any{k[0], k[1]}
	var q string
	switch kind {
	case DiffOnlyLeft, DiffOnlyRight:
		from, other := left, right
		if kind == DiffOnlyRight {
			from, other = right, left
		}
		// A scalar subquery, not NOT EXISTS: the planner would turn that into an anti-join
		// that hashes the whole other index before the first row; this probes its primary key
		// for each row in order and stops at the page's end.
		var fs string
		fs, args = entriesOf(from, "e", f, args)
		args = append(args, other.ConnectionID, other.Generation, limit+1)
		n := len(args)
		var win string
		win, args = within("e", args)
		q = `SELECT e.object_type, e.object_name, e.custom, e.package, e.title, e.release_state FROM (` + fs + `) e
			WHERE (e.object_type, e.object_name) > ($1, $2)` + win + ` AND (SELECT true FROM sap_search_entries o
				WHERE o.connection_id = $` + strconv.Itoa(n-2) + ` AND o.generation = $` + strconv.Itoa(n-1) + `
				AND o.object_type = e.object_type AND o.object_name = e.object_name) IS NULL
			ORDER BY e.object_type, e.object_name LIMIT $` + strconv.Itoa(n)
		rows, err := r.DB.Query(ctx, q, args...)
		if err != nil {
			return Page[DiffItem]{}, nil, err
		}
		items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DiffItem, error) {
			var d DiffItem
			var s Side
			err := row.Scan(&d.Type, &d.Name, &d.Custom, &s.Package, &s.Title, &s.ReleaseState)
			if kind == DiffOnlyLeft {
				d.Left = &s
			} else {
				d.Right = &s
			}
			return d, err
		})
		if err != nil {
			return Page[DiffItem]{}, nil, err
		}
		return pageOf(items, limit, diffKeys), bound, nil
	case DiffChanged:
		var ls string
		ls, args = entriesOf(left, "l", f, args)
		args = append(args, right.ConnectionID, right.Generation, limit+1)
		n := len(args)
		rc, rg := "$"+strconv.Itoa(n-2), "$"+strconv.Itoa(n-1)
		var win string
		win, args = within("l", args)
		lc, lg := "$3", "$4" // entriesOf put the left connection and generation right after the cursor
		// Source is compared only for custom objects: a few hash lookups per row of the page.
		sources := func(conn, gen string) string {
			return `(SELECT array_agg(s.content_hash ORDER BY s.item_key) FROM workspace_sap_index s WHERE s.connection_id = ` + conn +
				` AND s.generation = ` + gen + ` AND s.phase = 'custom_code' AND s.object_type = l.object_type AND s.object_name = l.object_name)`
		}
		q = `SELECT l.object_type, l.object_name, l.custom OR r.custom, l.package, l.title, l.release_state, r.package, r.title, r.release_state,
				l.body IS DISTINCT FROM r.body,
				(l.custom OR r.custom) AND ` + sources(lc, lg) + ` IS DISTINCT FROM ` + sources(rc, rg) + `
			FROM (` + ls + `) l JOIN sap_search_entries r ON r.connection_id = ` + rc + ` AND r.generation = ` + rg + `
				AND r.object_type = l.object_type AND r.object_name = l.object_name
			WHERE (l.object_type, l.object_name) > ($1, $2)` + win + ` AND l.content_hash <> r.content_hash
			ORDER BY l.object_type, l.object_name LIMIT $` + strconv.Itoa(n)
		rows, err := r.DB.Query(ctx, q, args...)
		if err != nil {
			return Page[DiffItem]{}, nil, err
		}
		items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DiffItem, error) {
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
		if err != nil {
			return Page[DiffItem]{}, nil, err
		}
		return pageOf(items, limit, diffKeys), bound, nil
	}
	return Page[DiffItem]{}, nil, fmt.Errorf("unknown diff kind %q", kind)
}
