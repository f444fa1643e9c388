package landscape

import (
	"context"
	"sort"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// Dashboard is one connection's analytics.
type Dashboard struct {
	Graph
	Objects       int64            `json:"objects"`        // SAP objects in the index (search entries without docs)
	CustomObjects int64            `json:"custom_objects"` // of which custom
	ByType        []TypeCount      `json:"by_type"`
	ByPackage     []PackageCount   `json:"by_package"`   // the largest packages, most objects first
	ByComponent   []PackageCount   `json:"by_component"` // custom objects per application component, when the connector names one
	CustomCode    CustomCode       `json:"custom_code"`
	CleanCore     map[string]int64 `json:"clean_core"` // custom objects per level A–D (every level present)
	Relationships int64            `json:"relationships"`
	LastRuns      []SyncRun        `json:"last_runs"` // the latest run of each mode
}

// CustomCode is the size of the custom code, as the last sync counted it (sapindex.Counts):
// summing lines over the index would read every source.
type CustomCode struct {
	Objects int64 `json:"objects"`
	Lines   int64 `json:"lines"`
}

// Levels are the Clean Core levels, best first.
var Levels = []string{"A", "B", "C", "D"}

// Dashboard computes one connection's analytics (g from Graph). A connection without an index
// gets its graph, its last runs and empty figures.
func (r Reader) Dashboard(ctx context.Context, g Graph, topPackages int) (Dashboard, error) {
	d := Dashboard{Graph: g, ByType: []TypeCount{}, ByPackage: []PackageCount{}, ByComponent: []PackageCount{},
		CleanCore: map[string]int64{}, CustomCode: CustomCode{Objects: g.Counts.CustomCode, Lines: g.Counts.CodeLines}}
	for _, l := range Levels {
		d.CleanCore[l] = 0
	}
	var err error
	if d.LastRuns, err = r.Index.LastRuns(ctx, g.ConnectionID); err != nil {
		return d, err
	}
	if g.Generation == 0 {
		return d, nil
	}
	fig, err := cached(r.Cache, g.WorkspaceID, "figures", version(g), func() (figures, error) { return r.figures(ctx, g) })
	if err != nil {
		return d, err
	}
	d.Objects, d.CustomObjects, d.Relationships = fig.Objects, fig.CustomObjects, fig.Relationships
	d.ByType = fig.ByType
	d.ByPackage = fig.ByPackage[:min(topPackages, len(fig.ByPackage))]
	d.ByComponent = fig.ByComponent[:min(topPackages, len(fig.ByComponent))]
	levels, err := r.Index.LevelCounts(ctx, g, "")
	for l, n := range levels {
		d.CleanCore[l] = n
	}
	return d, err
}

// MaxTop is the most packages (and components) a dashboard lists.
const MaxTop = 100

// figures are the dashboard's figures over the whole index, packages ranked and cut to MaxTop:
// they change only when a sync changes the index, so they are cached under the graph's version
// (see Cache).
type figures struct{ sapindex.Figures }

// bytes estimates the figures' size in the cache.
func (f figures) bytes() int64 {
	return 64 + int64(len(f.ByType))*48 + int64(len(f.ByPackage)+len(f.ByComponent))*64
}

func (r Reader) figures(ctx context.Context, g Graph) (figures, error) {
	f, err := r.Index.Figures(ctx, g, MaxTop)
	if err != nil {
		return figures{}, err
	}
	// Packages number thousands, so ranking them here is cheap.
	sortCounts(f.ByType, func(t TypeCount) (int64, string) { return t.Objects, t.Type })
	sortCounts(f.ByPackage, func(p PackageCount) (int64, string) { return p.Objects, p.Name })
	f.ByPackage = f.ByPackage[:min(MaxTop, len(f.ByPackage))]
	return figures{f}, nil
}

// sortCounts orders by count, most first, then by name.
func sortCounts[T any](s []T, key func(T) (int64, string)) {
	sort.Slice(s, func(i, j int) bool {
		ni, si := key(s[i])
		nj, sj := key(s[j])
		if ni != nj {
			return ni > nj
		}
		return si < sj
	})
}
