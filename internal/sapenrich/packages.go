package sapenrich

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

type pkgObject struct {
	typ, name, desc, level string
	fields                 []erField
}

type useCount struct {
	n      int64
	writes bool
}

// pkgMaxDistinctUses bounds what one package's accumulator remembers of its usages.
const pkgMaxDistinctUses = 5000

// pkgAcc collects one package's facts while its objects stream by; everything in it is
// bounded, whatever the package's size.
type pkgAcc struct {
	name     string
	tables   []pkgObject // the package's own tables (up to erMaxTables)
	others   []pkgObject // its other objects (up to pkgMaxObjects)
	counts   map[string]int64
	levels   map[string]int64
	uses     map[[2]string]*useCount
	tableUse [][2]string // object, table it uses (up to 2000)
	extends  []erLink
}

func newPkgAcc(name string) *pkgAcc {
	return &pkgAcc{name: name, counts: map[string]int64{}, levels: map[string]int64{}, uses: map[[2]string]*useCount{}}
}

func (a *pkgAcc) add(o pkgObject, toTypes, tos, kinds, usages []string) {
	a.counts[o.typ]++
	if o.level != "" {
		a.levels[o.level]++
	}
	if o.typ == "TABL" && len(a.tables) < erMaxTables {
		a.tables = append(a.tables, o)
	} else if o.typ != "TABL" && len(a.others) < pkgMaxObjects {
		a.others = append(a.others, o)
	}
	for i, to := range tos {
		to = strings.ToUpper(strings.TrimSpace(to))
		if to == "" {
			continue
		}
		toType := strings.ToUpper(toTypes[i])
		k := [2]string{toType, to}
		u := a.uses[k]
		if u == nil && len(a.uses) < pkgMaxDistinctUses {
			u = &useCount{}
			a.uses[k] = u
		}
		if u != nil {
			u.n++
			switch strings.ToLower(usages[i]) {
			case "write", "insert", "update", "modify", "delete":
				u.writes = true
			}
		}
		switch {
		case kinds[i] == "extends" && o.typ == "TABL":
			a.extends = append(a.extends, erLink{From: o.name, To: to, Label: "appends", Kind: "append"})
		case (toType == "TABL" || kinds[i] == "uses_table") && len(a.tableUse) < 2000:
			a.tableUse = append(a.tableUse, [2]string{o.name, to})
		}
	}
}

// packageDocs streams the scope's custom objects by package in keyset pages (no query stays
// open while the model writes) and submits each package's module doc and ER diagram as soon
// as the package is complete.
func (r *docRunner) packageDocs(ctx context.Context) error {
	const page = 2000
	type pkgRow struct {
		pkg                         string
		obj                         pkgObject
		toTypes, tos, kinds, usages []string
	}
	var acc *pkgAcc
	lastPkg, lastType, lastName := "", "", ""
	for {
		objs, err := r.db.PackageObjects(ctx, r.s.selection(), lastPkg, lastType, lastName, page)
		if err != nil {
			return fmt.Errorf("read packages: %w", err)
		}
		batch := make([]pkgRow, len(objs))
		for i, o := range objs {
			batch[i] = pkgRow{pkg: o.Package, obj: pkgObject{typ: o.ObjectType, name: o.ObjectName, desc: o.Description,
				fields: parseFields(o.Fields), level: o.Level}, toTypes: o.ToTypes, tos: o.Tos, kinds: o.Kinds, usages: o.Usages}
		}
		for _, b := range batch {
			if acc != nil && acc.name != b.pkg {
				if err := r.finishPackage(ctx, acc); err != nil {
					return err
				}
				acc = nil
			}
			if acc == nil {
				acc = newPkgAcc(b.pkg)
			}
			acc.add(b.obj, b.toTypes, b.tos, b.kinds, b.usages)
		}
		if len(batch) < page {
			if acc != nil {
				return r.finishPackage(ctx, acc)
			}
			return nil
		}
		last := batch[len(batch)-1]
		lastPkg, lastType, lastName = last.pkg, last.obj.typ, last.obj.name
	}
}

// finishPackage submits a complete package's module doc and ER diagram.
func (r *docRunner) finishPackage(ctx context.Context, a *pkgAcc) error {
	var in strings.Builder
	fmt.Fprintf(&in, "Package: %s\nObjects by type: %s\n", a.name, countList(a.counts))
	if len(a.levels) > 0 {
		fmt.Fprintf(&in, "Clean Core levels: %s\n", countList(a.levels))
	}
	in.WriteString("\nObjects:\n")
	listed := 0
	for _, group := range [][]pkgObject{a.tables, a.others} {
		for _, o := range group {
			if listed == pkgMaxObjects {
				break
			}
			listed++
			fmt.Fprintf(&in, "- %s %s", o.typ, o.name)
			if o.desc != "" {
				fmt.Fprintf(&in, ": %s", oneLine(o.desc, 120))
			}
			if o.level != "" {
				fmt.Fprintf(&in, " [level %s]", o.level)
			}
			in.WriteString("\n")
		}
	}
	if len(a.uses) > 0 {
		keys := make([][2]string, 0, len(a.uses))
		for k := range a.uses {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			x, y := a.uses[keys[i]], a.uses[keys[j]]
			if x.n != y.n {
				return x.n > y.n
			}
			if keys[i][0] != keys[j][0] {
				return keys[i][0] < keys[j][0]
			}
			return keys[i][1] < keys[j][1]
		})
		in.WriteString("\nObjects it uses (times used):\n")
		for i, k := range keys {
			if i == pkgMaxUsages {
				break
			}
			w := ""
			if a.uses[k].writes {
				w = ", writes"
			}
			fmt.Fprintf(&in, "- %s %s (%d%s)\n", k[0], k[1], a.uses[k].n, w)
		}
	}
	old, err := r.oldHash(ctx, DocPackage, a.name)
	if err != nil {
		return err
	}
	if err := r.submit(ctx, docJob{kind: DocPackage, subject: a.name, title: "Package " + a.name, system: systemPrompt,
		user: "Write the module documentation of this SAP package: its purpose, main objects and how they work together, " +
			"the SAP data and APIs it depends on, and Clean Core risks.\n\n" + in.String(),
		markdown: "## Index facts\n\n" + in.String(), oldHash: old}); err != nil {
		return err
	}
	return r.erDiagram(ctx, a)
}

func countList(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// erDiagram writes a package's ER diagram; a package without tables gets none.
func (r *docRunner) erDiagram(ctx context.Context, a *pkgAcc) error {
	tables := map[string]*erTable{}
	var order []string
	addTable := func(name string, owned bool, fields []erField) bool {
		if _, ok := tables[name]; ok {
			return true
		}
		if len(order) >= erMaxTables {
			return false
		}
		tables[name] = &erTable{Name: name, Owned: owned, Fields: fields}
		order = append(order, name)
		return true
	}
	for _, o := range a.tables {
		addTable(o.name, true, o.fields)
	}
	extra := []erLink{}
	for _, l := range a.extends {
		if addTable(l.From, true, nil) && addTable(l.To, false, nil) {
			extra = append(extra, l)
		}
	}
	byObject := map[string][]string{}
	var objOrder []string
	for _, u := range a.tableUse {
		if !addTable(u[1], false, nil) {
			continue
		}
		if _, ok := byObject[u[0]]; !ok {
			objOrder = append(objOrder, u[0])
		}
		byObject[u[0]] = append(byObject[u[0]], u[1])
	}
	if len(order) == 0 {
		return nil
	}
	// Fields of used custom tables of other packages, where the index has them (a primary
	// key lookup per name).
	var missing []string
	for _, n := range order {
		if len(tables[n].Fields) == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		fields, err := r.db.CustomTableFields(ctx, r.s.scoped(), missing)
		if err != nil {
			return fmt.Errorf("package %s fields: %w", a.name, err)
		}
		for name, raw := range fields {
			tables[name].Fields = parseFields(raw)
		}
	}
	// Co-usage: an object using one of the package's tables together with another table.
	sort.Strings(objOrder)
	for _, obj := range objOrder {
		used := byObject[obj]
		sort.Strings(used)
		for _, t := range used {
			if !tables[t].Owned {
				continue
			}
			for _, other := range used {
				if other != t {
					extra = append(extra, erLink{From: t, To: other, Label: "used with by " + obj, Kind: "usage"})
				}
			}
		}
	}
	list := make([]erTable, 0, len(order))
	for _, n := range order {
		list = append(list, *tables[n])
	}
	sortTables(list)
	diagram := mermaidER(list, erLinks(list, extra))
	md := fmt.Sprintf("# ER diagram: package %s\n\nTables of package %s and the tables its objects use, from the SAP index "+
		"(links: check tables and shared key fields solid, appends one-to-one, tables used together dotted).\n\n```mermaid\n%s```\n",
		a.name, a.name, diagram)
	old, err := r.oldHash(ctx, DocERDiagram, a.name)
	if err != nil {
		return err
	}
	return r.submit(ctx, docJob{kind: DocERDiagram, subject: a.name, title: "ER diagram: package " + a.name, markdown: md, oldHash: old})
}
