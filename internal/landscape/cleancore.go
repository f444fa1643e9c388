package landscape

import "context"

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
	counts, err := r.Index.LevelCounts(ctx, g, pkg)
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

func findingKeys(f Finding) []string { return []string{f.Type, f.Name} }

// Findings pages through the objects with at least one reason, in (type, name) order.
func (r Reader) Findings(ctx context.Context, g Graph, f FindingFilter, cur *Cursor, limit int) (Page[Finding], error) {
	items, err := r.Index.Findings(ctx, g, f, after(cur, 2), limit+1)
	if err != nil {
		return Page[Finding]{}, err
	}
	return pageOf(items, limit, findingKeys), nil
}

// CleanCoreObject loads one object's analysis; store.ErrNotFound when it has none.
func (r Reader) CleanCoreObject(ctx context.Context, g Graph, objType, name string) (CleanCoreObject, error) {
	return r.Index.CleanCoreObject(ctx, g, objType, name)
}
