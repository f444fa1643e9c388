package landscape

import "context"

func objectKeys(o Object) []string { return []string{o.Type, o.Name} }

// Objects pages through the connection's object inventory in (type, name) order.
func (r Reader) Objects(ctx context.Context, g Graph, f ObjectFilter, cur *Cursor, limit int) (Page[Object], error) {
	items, err := r.Index.Objects(ctx, g, f, after(cur, 2), limit+1)
	if err != nil {
		return Page[Object]{}, err
	}
	return pageOf(items, limit, objectKeys), nil
}
