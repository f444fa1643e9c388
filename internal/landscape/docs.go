package landscape

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sapagent/sapagent/internal/store"
)

// DocKinds are the kinds of generated docs (sap_generated_docs.kind).
var DocKinds = []string{"package", "object", "er_diagram", "business_process"}

// ValidDocKind reports whether k is a doc kind.
func ValidDocKind(k string) bool {
	for _, d := range DocKinds {
		if d == k {
			return true
		}
	}
	return false
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

func docKeys(d Doc) []string { return []string{d.Kind, d.Subject} }

// Docs are the docs a reader sees: those confirmed for the current generation or an earlier
// one. A doc written for a build that has not been switched to yet stays hidden until it is.
const docsVisible = `connection_id = $1 AND generation <= $2`

// Docs pages through the connection's docs (optionally of one kind) in (kind, subject) order.
func (r Reader) Docs(ctx context.Context, g Graph, kind string, cur *Cursor, limit int) (Page[Doc], error) {
	k := after(cur, 2)
	rows, err := r.DB.Query(ctx, `SELECT kind, subject, title, model, generation, updated_at, '' FROM sap_generated_docs
		WHERE `+docsVisible+` AND ($3 = '' OR kind = $3) AND (kind, subject) > ($4, $5)
		ORDER BY kind, subject LIMIT $6`, g.ConnectionID, g.Generation, kind, k[0], k[1], limit+1)
	if err != nil {
		return Page[Doc]{}, err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Doc])
	if err != nil {
		return Page[Doc]{}, err
	}
	return pageOf(items, limit, docKeys), nil
}

// Doc loads one doc with its Markdown; store.ErrNotFound when there is none.
func (r Reader) Doc(ctx context.Context, g Graph, kind, subject string) (Doc, error) {
	var d Doc
	err := r.DB.QueryRow(ctx, `SELECT kind, subject, title, model, generation, updated_at, markdown FROM sap_generated_docs
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

// Source loads a custom object's source from the custom_code phase; objType may be empty (the
// first type with that name). ok is false when the index has none.
func (r Reader) Source(ctx context.Context, g Graph, objType, name string) (Source, bool, error) {
	var s Source
	if g.Generation == 0 {
		return s, false, nil
	}
	err := r.DB.QueryRow(ctx, `SELECT object_type, object_name, COALESCE(data->>'source', ''),
			COALESCE(CASE WHEN jsonb_typeof(data->'lines') = 'number' THEN (data->>'lines')::numeric::bigint END, 0)
		FROM workspace_sap_index
		WHERE connection_id = $1 AND generation = $2 AND phase = 'custom_code' AND ($3 = '' OR object_type = $3) AND object_name = $4
		ORDER BY object_type, item_key LIMIT 1`, g.ConnectionID, g.Generation, objType, name).Scan(&s.Type, &s.Name, &s.Source, &s.Lines)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}
