package sapenrich

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/sapindex"
)

// CleanCoreOptions tune AnalyzeCleanCore.
type CleanCoreOptions struct {
	// Classifier classifies usages; nil means the shipped Cloudification Repository with no
	// customer namespaces (Z*, Y* are custom).
	Classifier *cleancore.Classifier
	// BatchSize is how many objects one upsert writes (default 500).
	BatchSize int
}

// CleanCoreResult is what AnalyzeCleanCore wrote: objects analysed and their levels.
type CleanCoreResult struct {
	Objects int64            `json:"objects"`
	Levels  map[string]int64 `json:"levels"`  // A–D, of the objects analysed in this call
	Removed int64            `json:"removed"` // delta: rows of objects that no longer exist
}

// Finding is one SAP usage behind an object's level (clean_core_analysis.findings): the
// classifier's reason and, when the connector gave one, the source line of its first use.
type Finding struct {
	Type             string             `json:"type"` // TADIR type of the used object
	Name             string             `json:"name"`
	Kind             string             `json:"kind"`  // read, write, call, type, enhancement, modification
	State            string             `json:"state"` // in the Cloudification Repository (cleancore.State)
	Level            string             `json:"level"` // the level this usage implies
	Why              string             `json:"why"`
	Deprecated       bool               `json:"deprecated,omitempty"`
	Successors       []cleancore.Object `json:"successors,omitempty"`
	SuccessorConcept string             `json:"successor_concept,omitempty"`
	Line             int                `json:"line,omitempty"`
}

// Conversion is one SAP object an ECC object uses that S/4HANA replaces
// (clean_core_analysis.conversion).
type Conversion struct {
	Type             string             `json:"type"`
	Name             string             `json:"name"`
	State            string             `json:"state"`
	Deprecated       bool               `json:"deprecated,omitempty"`
	Successors       []cleancore.Object `json:"successors,omitempty"`
	SuccessorConcept string             `json:"successor_concept,omitempty"`
}

// AnalyzeCleanCore gives every custom object of the scope (custom_objects phase) its Clean
// Core level from its relationships and writes clean_core_analysis rows (findings worst
// first; on ECC also conversion readiness). An object without SAP usages is A. Upserts make
// a retry rewrite the same rows.
func AnalyzeCleanCore(ctx context.Context, db DB, s Scope, opts CleanCoreOptions, progress Progress) (CleanCoreResult, error) {
	if err := s.check(); err != nil {
		return CleanCoreResult{}, err
	}
	c := opts.Classifier
	if c == nil {
		var err error
		if c, err = cleancore.New(nil, cleancore.Options{}); err != nil {
			return CleanCoreResult{}, fmt.Errorf("clean core repository: %w", err)
		}
	}
	// The system's own code is the customer's whatever its namespace, so a usage of any
	// object in the namespaces (/NS/) and other non-Z/Y names of its custom objects is custom
	// (with CUSTOMER_NAMESPACES and Z*/Y*). The whole generation counts, also in a delta.
	own, err := db.OwnObjectNames(ctx, s.scoped())
	if err != nil {
		return CleanCoreResult{}, fmt.Errorf("read custom namespaces: %w", err)
	}
	c = c.WithCustomObjects(own)
	batchSize := opts.BatchSize
	if batchSize <= 0 {
		batchSize = 500
	}
	res := CleanCoreResult{Levels: map[string]int64{}}
	total, err := db.CountCustomObjects(ctx, s.selection())
	if err != nil {
		return res, fmt.Errorf("count custom objects: %w", err)
	}
	report(progress, 0, total)

	// The objects stream while batches are written on other connections of the pool.
	w := ccWriter{db: db, s: s, size: batchSize}
	var usages []cleancore.Usage
	var lines []int
	err = db.CustomObjectUsages(ctx, s.selection(), func(u sapindex.ObjectUsages) error {
		o := ccObject{typ: u.ObjectType, name: u.ObjectName, pkg: u.Package}
		usages, lines = usages[:0], lines[:0]
		for i := range u.Tos {
			us, ok := UsageOf(u.ToTypes[i], u.Tos[i], u.Kinds[i], u.Usages[i])
			if !ok {
				continue
			}
			n, _ := strconv.Atoi(u.Lines[i])
			usages, lines = append(usages, us), append(lines, n)
		}
		row := classify(c, s.SystemType, o, usages, lines)
		res.Objects++
		res.Levels[row.level]++
		if err := w.add(ctx, row); err != nil {
			return err
		}
		if res.Objects%100 == 0 {
			report(progress, res.Objects, total)
		}
		return nil
	})
	if err != nil {
		return res, ctxErr(ctx, fmt.Errorf("read custom objects: %w", err))
	}
	if err := w.flush(ctx); err != nil {
		return res, err
	}
	if s.delta() {
		removed, err := db.RemoveDeletedCleanCore(ctx, s.scoped(), s.RunID)
		if err != nil {
			return res, fmt.Errorf("remove deleted objects' levels: %w", err)
		}
		res.Removed = removed
	}
	report(progress, res.Objects, total)
	return res, nil
}

// UsageOf turns one relationship item into a Clean Core usage. usage is the relationship's
// "usage" (read, write, call, type, instantiate, include, badi, enhancement, modification);
// when the connector sends none, it is derived from kind. ok is false for items that name
// no object.
func UsageOf(toType, to, kind, usage string) (cleancore.Usage, bool) {
	to = strings.TrimSpace(to)
	if to == "" {
		return cleancore.Usage{}, false
	}
	typ := strings.ToUpper(strings.TrimSpace(toType))
	switch typ {
	case "BADI":
		typ = "BADI_DEF" // the repository keys BAdI definitions so; implementing one is explicit
	case "VIEW", "CDS":
		typ = "DDLS"
	}
	var k cleancore.UsageKind
	switch strings.ToLower(strings.TrimSpace(usage)) {
	case "read", "select":
		k = cleancore.KindRead
	case "write", "insert", "update", "modify", "delete":
		k = cleancore.KindWrite
	case "call", "instantiate", "submit", "transaction":
		k = cleancore.KindCall
	case "type", "include":
		k = cleancore.KindType
	case "badi", "enhancement", "extend", "extends":
		k = cleancore.KindEnhancement
	case "modification", "modify_object":
		k = cleancore.KindModification
	default:
		k = kindOf(kind)
		if kind == "extends" {
			k = extensionKind(typ)
		}
	}
	return cleancore.Usage{Type: typ, Name: to, Kind: k}, true
}

// kindOf derives a usage from the relationship kinds of the connector protocol.
func kindOf(kind string) cleancore.UsageKind {
	switch kind {
	case "calls_function", "uses_class", "submits", "calls_transaction":
		return cleancore.KindCall
	case "includes", "uses_type":
		return cleancore.KindType
	case "implements_badi", "enhances":
		return cleancore.KindEnhancement
	case "writes_table":
		return cleancore.KindWrite
	}
	return cleancore.KindRead // uses_table, uses_view and anything unknown: a read
}

// extensionKind: an append or extension of a table, structure or CDS view depends on that
// object as a type does (its level is the object's state: a released extension include is A,
// an append to an unreleased table C); an extension of anything else is an enhancement.
func extensionKind(typ string) cleancore.UsageKind {
	switch typ {
	case "TABL", "STRU", "DDLS", "CDS_STOB", "DDLX":
		return cleancore.KindType
	}
	return cleancore.KindEnhancement
}

type ccObject struct{ typ, name, pkg string }

type ccRow struct {
	obj                  ccObject
	level                string
	findings, conversion []byte
}

func classify(c *cleancore.Classifier, systemType string, o ccObject, usages []cleancore.Usage, lines []int) ccRow {
	r := c.Classify(usages)
	sort.SliceStable(r.Reasons, func(i, j int) bool {
		a, b := r.Reasons[i], r.Reasons[j]
		if a.Level != b.Level {
			return a.Level > b.Level // worst first
		}
		if a.Usage.Type != b.Usage.Type {
			return a.Usage.Type < b.Usage.Type
		}
		if a.Usage.Name != b.Usage.Name {
			return a.Usage.Name < b.Usage.Name
		}
		return a.Usage.Kind < b.Usage.Kind
	})
	findings := make([]Finding, len(r.Reasons))
	for i, reason := range r.Reasons {
		u := reason.Usage
		findings[i] = Finding{Type: u.Type, Name: u.Name, Kind: u.Kind.String(), State: reason.State.String(),
			Level: reason.Level.String(), Why: reason.Why, Deprecated: reason.Deprecated,
			Successors: reason.Successors, SuccessorConcept: reason.SuccessorConcept}
		for j, v := range usages { // the first line of this usage
			if lines[j] > 0 && v.Kind == u.Kind && strings.EqualFold(v.Type, u.Type) && strings.EqualFold(strings.TrimSpace(v.Name), u.Name) {
				findings[i].Line = lines[j]
				break
			}
		}
	}
	row := ccRow{obj: o, level: r.Level.String()}
	row.findings, _ = json.Marshal(findings)
	conv := []Conversion{}
	if strings.EqualFold(systemType, "ECC") {
		for _, it := range c.ConversionReadiness(usages) {
			conv = append(conv, Conversion{Type: it.Object.Type, Name: it.Object.Name, State: it.State.String(),
				Deprecated: it.Deprecated, Successors: it.Successors, SuccessorConcept: it.SuccessorConcept})
		}
	}
	row.conversion, _ = json.Marshal(conv)
	return row
}

// ccWriter upserts clean_core_analysis rows in batches.
type ccWriter struct {
	db   DB
	s    Scope
	size int
	rows []ccRow
}

func (w *ccWriter) add(ctx context.Context, r ccRow) error {
	w.rows = append(w.rows, r)
	if len(w.rows) >= w.size {
		return w.flush(ctx)
	}
	return nil
}

func (w *ccWriter) flush(ctx context.Context) error {
	if len(w.rows) == 0 {
		return nil
	}
	rows := make([]sapindex.CleanCoreRow, len(w.rows))
	for i, r := range w.rows {
		rows[i] = sapindex.CleanCoreRow{ObjectType: r.obj.typ, ObjectName: r.obj.name, Package: r.obj.pkg, Level: r.level,
			Findings: r.findings, Conversion: r.conversion}
	}
	if err := w.db.UpsertCleanCore(ctx, w.s.scoped(), rows); err != nil {
		return ctxErr(ctx, fmt.Errorf("write clean core levels: %w", err))
	}
	w.rows = w.rows[:0]
	return nil
}
