package landscape

import "context"

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

func docKeys(d Doc) []string { return []string{d.Kind, d.Subject} }

// Docs pages through the connection's docs (optionally of one kind) in (kind, subject) order:
// those confirmed for the current generation or an earlier one.
func (r Reader) Docs(ctx context.Context, g Graph, kind string, cur *Cursor, limit int) (Page[Doc], error) {
	items, err := r.Index.Docs(ctx, g, kind, after(cur, 2), limit+1)
	if err != nil {
		return Page[Doc]{}, err
	}
	return pageOf(items, limit, docKeys), nil
}

// Doc loads one doc with its Markdown; store.ErrNotFound when there is none.
func (r Reader) Doc(ctx context.Context, g Graph, kind, subject string) (Doc, error) {
	return r.Index.Doc(ctx, g, kind, subject)
}

// Source loads a custom object's source from the custom_code phase; objType may be empty (the
// first type with that name). ok is false when the index has none.
func (r Reader) Source(ctx context.Context, g Graph, objType, name string) (Source, bool, error) {
	return r.Index.Source(ctx, g, objType, name)
}
