package landscape

import (
	"context"
	"fmt"
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

func diffKeys(d DiffItem) []string { return []string{d.Type, d.Name} }

// DiffCounts counts what differs between two indexed connections under f. The comparison of
// both indexes is made once per pair of index versions and cached (in the left connection's
// workspace share); every filter, ?q= included, is counted from it in memory.
func (r Reader) DiffCounts(ctx context.Context, left, right Graph, f ObjectFilter) (DiffCounts, error) {
	cmp, err := cached(r.Cache, left.WorkspaceID, "comparison", version(left)+"|"+version(right),
		func() (*comparison, error) { return r.compare(ctx, left, right) })
	if err != nil {
		return DiffCounts{}, err
	}
	return cmp.count(f), nil
}

// DefaultDiffWindow is how many objects of one index a diff page walks at most.
const DefaultDiffWindow = 50_000

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
	x := r.Index
	// The walk's upper bound: the window-th key of the listed side (nil: fewer follow).
	bound, err := x.WindowEnd(ctx, listed, f, k, window)
	if err != nil {
		return Page[DiffItem]{}, nil, err
	}
	var items []DiffItem
	switch kind {
	case DiffOnlyLeft:
		items, err = x.OnlyIn(ctx, left, right, f, k, bound, limit+1)
	case DiffOnlyRight:
		items, err = x.OnlyIn(ctx, right, left, f, k, bound, limit+1)
		for i := range items {
			items[i].Left, items[i].Right = nil, items[i].Left
		}
	case DiffChanged:
		items, err = x.Changed(ctx, left, right, f, k, bound, limit+1)
	default:
		return Page[DiffItem]{}, nil, fmt.Errorf("unknown diff kind %q", kind)
	}
	if err != nil {
		return Page[DiffItem]{}, nil, err
	}
	return pageOf(items, limit, diffKeys), bound, nil
}
