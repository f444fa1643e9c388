package landscape

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

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

func objectKeys(o Object) []string { return []string{o.Type, o.Name} }

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

// Objects pages through the connection's object inventory in (type, name) order.
func (r Reader) Objects(ctx context.Context, g Graph, f ObjectFilter, cur *Cursor, limit int) (Page[Object], error) {
	k := after(cur, 2)
	args := []any{g.ConnectionID, g.Generation, DocCategory, k[0], k[1]}
	cond, args := f.where("e", args)
	args = append(args, limit+1)
	rows, err := r.DB.Query(ctx, `SELECT e.object_type, e.object_name, e.category, e.custom, e.package, e.title, e.release_state
		FROM sap_search_entries e WHERE e.connection_id = $1 AND e.generation = $2 AND e.category <> $3
		AND (e.object_type, e.object_name) > ($4, $5)`+cond+`
		ORDER BY e.object_type, e.object_name LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return Page[Object]{}, err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Object])
	if err != nil {
		return Page[Object]{}, err
	}
	return pageOf(items, limit, objectKeys), nil
}
