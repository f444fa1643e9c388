package sapsim

import (
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

// The repository's system tables: the object directory (TADIR, TDEVC), programs (TRDIR,
// REPOSRC without the source), includes (D010INC), table fields (DD03L), transports (E070,
// E071) and enhancements (ENHHEADER, ENHOBJ, MODACT).

func init() {
	systemTables = append(systemTables,
		sysTable{spec: tableSpec{name: "TADIR", text: "Directory of Repository Objects", delivery: "W",
			fields: []fieldSpec{k("PGMID"), kd("OBJECT", "TROBJTYPE"), kd("OBJ_NAME", "SOBJ_NAME"), fd("KORRNUM", "TRKORR"), f("SRCSYSTEM"),
				fd("AUTHOR", "RESPONSIBL"), f("DEVCLASS"), f("GENFLAG"), f("MASTERLANG"), fd("CREATED_ON", "CREATIONDT")}},
			segments: (*System).tadirRows},
		sysTable{spec: tableSpec{name: "TDEVC", text: "Packages", delivery: "W",
			fields: []fieldSpec{k("DEVCLASS"), fd("CTEXT", "AS4TEXT"), f("AS4USER"), fd("PDEVCLASS", "DEVLAYER"), f("DLVUNIT"), fd("COMPONENT", "UFFCTR"), f("PARENTCL")}},
			segments: (*System).tdevcRows},
		sysTable{spec: tableSpec{name: "TRDIR", text: "System table TRDIR", delivery: "W",
			fields: []fieldSpec{kd("NAME", "PROGNAME"), f("SUBC"), f("CNAM"), fd("CDAT", "RDIR_CDATE"), f("UNAM"), fd("UDAT", "RDIR_UDATE"),
				fd("SDATE", "RDIR_UDATE"), fd("STIME", "RDIR_STIME"), f("RLOAD"), f("UCCHECK")}},
			segments: (*System).trdirRows},
		sysTable{spec: tableSpec{name: "REPOSRC", text: "Report Source Code (header fields only)", delivery: "W",
			fields: []fieldSpec{k("PROGNAME"), k("R3STATE"), f("SUBC"), f("CNAM"), fd("CDAT", "RDIR_CDATE"), f("UNAM"), fd("UDAT", "RDIR_UDATE"),
				fd("UTIME", "RDIR_STIME")}},
			segments: (*System).reposrcRows},
		sysTable{spec: tableSpec{name: "D010INC", text: "Table of Include Programs", delivery: "W",
			fields: []fieldSpec{k("MASTER"), kd("INCLUDE", "PROGNAME")}},
			segments: (*System).d010incRows},
		sysTable{spec: tableSpec{name: "DD03L", text: "Table Fields", delivery: "W",
			fields: []fieldSpec{kd("TABNAME", "TABNAME"), kd("FIELDNAME", "FIELDNAME"), k("AS4LOCAL"), k("AS4VERS"), kd("POSITION", "DDPOSITION"),
				f("KEYFLAG"), f("ROLLNAME"), f("CHECKTABLE"), f("INTTYPE"), f("INTLEN"), f("PRECFIELD"), f("DATATYPE"), fd("LENG", "DDLENG"),
				f("DECIMALS"), f("DOMNAME")}},
			segments: (*System).dd03lRows},
		sysTable{spec: tableSpec{name: "E070", text: "Change & Transport System: Header of Requests/Tasks", delivery: "W",
			fields: []fieldSpec{k("TRKORR"), f("TRFUNCTION"), f("TRSTATUS"), fd("TARSYSTEM", "TR_TARGET"), fd("KORRDEV", "TRKORRDEV"), f("AS4USER"),
				f("AS4DATE"), f("AS4TIME"), f("STRKORR")}},
			segments: func(s *System) []segment { return s.transportRows(false) }},
		sysTable{spec: tableSpec{name: "E071", text: "Change & Transport System: Object Entries of Requests/Tasks", delivery: "W",
			fields: []fieldSpec{k("TRKORR"), kd("AS4POS", "DDPOSNR"), f("PGMID"), fd("OBJECT", "TROBJTYPE"), fd("OBJ_NAME", "TROBJ_NAME"),
				f("OBJFUNC"), f("LOCKFLAG")}},
			segments: func(s *System) []segment { return s.transportRows(true) }},
		sysTable{spec: tableSpec{name: "ENHHEADER", text: "Enhancement Header Data", delivery: "W",
			fields: []fieldSpec{k("ENHNAME"), kd("VERSION", "R3STATE_E"), f("ENHTOOLTYPE")}},
			segments: (*System).enhheaderRows},
		sysTable{spec: tableSpec{name: "ENHOBJ", text: "Enhancement Objects", delivery: "W",
			fields: []fieldSpec{k("ENHNAME"), kd("VERSION", "R3STATE_E"), kd("MAINTYPE", "ENHMAINTYPE"), kd("MAINNAME", "ENHMAINNAME"),
				fd("OBJ_NAME", "ENHSPOTNAME")}},
			segments: (*System).enhobjRows},
		sysTable{spec: tableSpec{name: "TRDIRT", text: "Title texts for programs in TRDIR", delivery: "W",
			fields: []fieldSpec{kd("NAME", "PROGNAME"), kd("SPRSL", "SPRAS"), fd("TEXT", "REPTI")}},
			segments: func(s *System) []segment {
				return s.textSegments("NAME", []string{"PROG"}, func(e repoEntry) map[string]string {
					return map[string]string{"NAME": e.name, "SPRSL": "E", "TEXT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "SEOCLASSTX", text: "Short description class/interface", delivery: "W",
			fields: []fieldSpec{kd("CLSNAME", "SEOCLSNAME"), kd("LANGU", "SPRAS"), fd("DESCRIPT", "SEODESCR")}},
			segments: func(s *System) []segment {
				return s.textSegments("CLSNAME", []string{"CLAS", "INTF"}, func(e repoEntry) map[string]string {
					return map[string]string{"CLSNAME": e.name, "LANGU": "E", "DESCRIPT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "TLIBT", text: "Function Group Short Texts", delivery: "W",
			fields: []fieldSpec{kd("SPRAS", "SPRAS"), kd("AREA", "RS38L_AREA"), fd("AREAT", "RS38L_FTXT")}},
			segments: func(s *System) []segment {
				return s.textSegments("AREA", []string{"FUGR"}, func(e repoEntry) map[string]string {
					return map[string]string{"SPRAS": "E", "AREA": e.name, "AREAT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "DDDDLSRCT", text: "DD: Texts of DDL sources (CDS)", delivery: "W",
			fields: []fieldSpec{kd("DDLNAME", "DDLNAME"), kd("DDLANGUAGE", "DDLANGUAGE"), kd("AS4LOCAL", "AS4LOCAL"), fd("DDTEXT", "AS4TEXT")}},
			segments: func(s *System) []segment {
				return s.textSegments("DDLNAME", []string{"DDLS"}, func(e repoEntry) map[string]string {
					return map[string]string{"DDLNAME": e.name, "DDLANGUAGE": "E", "AS4LOCAL": "A", "DDTEXT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "DD04T", text: "R/3 DD: Data element texts", delivery: "W",
			fields: []fieldSpec{kd("ROLLNAME", "ROLLNAME"), kd("DDLANGUAGE", "DDLANGUAGE"), k("AS4LOCAL"), k("AS4VERS"), fd("DDTEXT", "AS4TEXT")}},
			segments: func(s *System) []segment {
				return s.textSegments("ROLLNAME", []string{"DTEL"}, func(e repoEntry) map[string]string {
					return map[string]string{"ROLLNAME": e.name, "DDLANGUAGE": "E", "AS4LOCAL": "A", "AS4VERS": "0000", "DDTEXT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "DD01T", text: "DD: Texts for Domains (Language-Dependent)", delivery: "W",
			fields: []fieldSpec{kd("DOMNAME", "DOMNAME"), kd("DDLANGUAGE", "DDLANGUAGE"), k("AS4LOCAL"), k("AS4VERS"), fd("DDTEXT", "AS4TEXT")}},
			segments: func(s *System) []segment {
				return s.textSegments("DOMNAME", []string{"DOMA"}, func(e repoEntry) map[string]string {
					return map[string]string{"DOMNAME": e.name, "DDLANGUAGE": "E", "AS4LOCAL": "A", "AS4VERS": "0000", "DDTEXT": e.text}
				})
			}},
		sysTable{spec: tableSpec{name: "DF14L", text: "Application Components", delivery: "W",
			fields: []fieldSpec{kd("FCTR_ID", "UFFCTR"), k("AS4LOCAL"), fd("PS_POSID", "UFPS_POSID")}},
			segments: (*System).df14lRows},
		sysTable{spec: tableSpec{name: "MODACT", text: "Customer projects (CMOD) and their SAP enhancements", delivery: "W",
			fields: []fieldSpec{kd("NAME", "CMODPROJ"), kd("TYP", "CMODTYP"), kd("MEMBER", "CMODMEMBER")}},
			segments: (*System).modactRows},
	)
	for k, v := range map[string]dataElement{
		"CMODPROJ":   {"MODNAME", "CHAR", 8, 0, "Project or SAP enhancement name", ""},
		"REPTI":      {"REPTI", "CHAR", 70, 0, "ABAP/4 Program: Description", ""},
		"SEOCLSNAME": {"SEOCLSNAME", "CHAR", 30, 0, "Object Type Name", ""},
		"SEODESCR":   {"SEODESCR", "CHAR", 60, 0, "Short description", ""},
		"RS38L_AREA": {"RS38L_AREA", "CHAR", 26, 0, "Function group", ""},
		"DDLNAME":    {"DDLNAME", "CHAR", 40, 0, "Name of a DDL Source", ""},
		"UFFCTR":     {"UFFCTR", "CHAR", 20, 0, "Application Component", ""},
		"UFPS_POSID": {"UFPS_POSID", "CHAR", 24, 0, "Application component ID", ""},
		"CMODTYP":    {"MODTYP", "CHAR", 1, 0, "Type of the member (space: enhancement)", ""},
		"CMODMEMBER": {"MODMEMBER", "CHAR", 30, 0, "Member: the SAP enhancement of the project", ""},
	} {
		dataElements[k] = v
	}
}

// dateOf turns the object store's 2021-03-15 into DATS 20210315.
func dateOf(d string) string { return strings.ReplaceAll(d, "-", "") }

// changeAt is the change-log entry with seq (seq is its position + 1).
func (s *System) changeAt(seq int64) (sap.Change, bool) {
	i := s.changeIndexAfter(seq - 1)
	if i < len(s.changes) && s.changes[i].Seq == seq {
		return s.changes[i], true
	}
	return sap.Change{}, false
}

// stamp is when and by whom an object was last changed: the change log's entry, or the store's date.
func (s *System) stamp(o *object) (by, date, clock string) {
	if o.Seq > 0 {
		if c, ok := s.changeAt(o.Seq); ok {
			if t, err := time.Parse(time.RFC3339, c.ChangedAt); err == nil {
				return c.ChangedBy, t.Format("20060102"), t.Format("150405")
			}
		}
	}
	return o.CreatedBy, dateOf(o.ChangedAt), "090000"
}

// --- TADIR ---

type repoEntry struct {
	object, name, pkg, author, created, system, text string
}

func (e repoEntry) row() map[string]string {
	return map[string]string{"PGMID": "R3TR", "OBJECT": e.object, "OBJ_NAME": e.name, "SRCSYSTEM": e.system, "AUTHOR": e.author,
		"DEVCLASS": e.pkg, "MASTERLANG": "E", "CREATED_ON": e.created}
}

// tadirType is the TADIR type of a store object: includes are programs, a function module is
// part of its function group (false: it has no TADIR entry of its own).
func tadirType(typ string) (string, bool) {
	switch typ {
	case "INCL":
		return "PROG", true
	case "FUNC", "BADI":
		return "", false
	}
	return typ, true
}

// namedRepo is the TADIR entries of the loaded custom objects and the catalog's named standard
// objects, in key order.
func (s *System) namedRepo() []repoEntry {
	seen := map[string]bool{}
	var out []repoEntry
	add := func(e repoEntry) {
		if e.name == "" || seen[e.object+"/"+e.name] {
			return
		}
		seen[e.object+"/"+e.name] = true
		out = append(out, e)
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		typ, ok := tadirType(o.Type)
		if o.Type == "FUNC" && o.Group != "" {
			typ, ok = "FUGR", true
			if g, exists := s.objects["FUGR/"+o.Group]; exists {
				o = g
			} else {
				o = &object{Name: o.Group, Package: o.Package, CreatedBy: o.CreatedBy, ChangedAt: o.ChangedAt, Description: "Function group " + o.Group}
			}
		}
		if ok {
			add(repoEntry{object: typ, name: o.Name, pkg: o.Package, author: o.CreatedBy, created: dateOf(o.ChangedAt), system: s.info.SystemID, text: o.Description})
		}
	}
	for _, fm := range s.namedFunctions() {
		if !s.isCustom(fm.name) && fm.group != "" {
			add(repoEntry{object: "FUGR", name: fm.group, pkg: fm.group, author: "SAP", created: "19990101", system: "SAP", text: "Function group " + fm.group})
		}
	}
	for _, e := range s.catalog().entries {
		if typ, ok := tadirType(e.typ); ok {
			add(repoEntry{object: typ, name: e.name, pkg: e.pkg, author: "SAP", created: "19990101", system: "SAP", text: e.description})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].object != out[b].object {
			return out[a].object < out[b].object
		}
		return out[a].name < out[b].name
	})
	return out
}

// stdRepoSlots are the block slots of generated standard objects with a TADIR entry: slot 6
// stands for the block's BAPI function group, 8 for its other function group (7 and 9 are
// function modules of those groups).
var stdRepoSlots = [...]int{0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}

func (g *generator) stdRepoEntry(j int) repoEntry {
	o := g.stdObject(j)
	e := repoEntry{object: o.typ, name: o.name, pkg: o.pkg, author: "SAP", created: "20150101", system: "SAP", text: o.description}
	if o.typ == "FUNC" {
		e.object = "FUGR"
		e.name, _ = g.stdFuncGroup(j)
		e.text = "Function group " + e.name
	}
	return e
}

// blockSegment is a segment of generated standard objects at some slots of every block.
func (s *System) blockSegment(slots []int, field string, row func(j int) map[string]string, index func(v string) (int, bool)) segment {
	g := s.gen
	units := g.std / 20 * len(slots)
	for _, sl := range slots {
		if g.std%20 > sl {
			units++
		}
	}
	seg := segment{units: units, per: 1, field: field, owner: "sap",
		rows: func(u int) []map[string]string {
			return []map[string]string{row(u/len(slots)*20 + slots[u%len(slots)])}
		}}
	if index != nil {
		seg.find = func(_, v string) []int {
			j, ok := index(v)
			if !ok {
				return nil
			}
			for k, sl := range slots {
				if j%20 == sl {
					return []int{j/20*len(slots) + k}
				}
			}
			return nil
		}
	}
	return seg
}

func (s *System) tadirRows() []segment { return s.repoSegments("OBJ_NAME", repoEntry.row, nil) }

// repoSegments are the object directory's entries (only: of these TADIR types; nil: all) as
// rows of TADIR or of a text table whose name field is field. A filtered segment's units may
// have no row, so only the unfiltered TADIR skips by arithmetic; look-ups by name work for both.
func (s *System) repoSegments(field string, row func(repoEntry) map[string]string, only map[string]bool) []segment {
	keep := func(e repoEntry) []map[string]string {
		if only != nil && !only[e.object] {
			return nil
		}
		return []map[string]string{row(e)}
	}
	filter := func(seg segment) segment {
		if only != nil {
			seg.per, seg.gaps = 0, nil
		}
		return seg
	}
	named := s.namedRepo()
	var rows []map[string]string
	for _, e := range named {
		rows = append(rows, keep(e)...)
	}
	g := s.gen
	std := s.blockSegment(stdRepoSlots[:], field, func(j int) map[string]string { return nil }, func(v string) (int, bool) {
		if j, ok := g.stdIndex("", v); ok && g.stdType(j) != "FUNC" {
			return j, true
		}
		if b, ok := parseSuffix(v); ok && b%20 == 0 && b < g.std {
			for _, j := range []int{b + 6, b + 8} {
				if grp, _ := g.stdFuncGroup(j); grp == v && j < g.std {
					return j, true
				}
			}
		}
		return 0, false
	})
	slots := stdRepoSlots[:]
	std.rows = func(u int) []map[string]string { return keep(g.stdRepoEntry(u/len(slots)*20 + slots[u%len(slots)])) }
	segs := []segment{listSegment(rows, field), filter(std)}
	custom := func(o *object) []map[string]string {
		return keep(repoEntry{object: o.Type, name: o.Name, pkg: o.Package, author: o.CreatedBy, created: dateOf(o.ChangedAt), system: s.info.SystemID, text: o.Description})
	}
	for kind := 0; kind < 10; kind++ {
		if kind != 7 && (only == nil || only[g.customType(kind)]) {
			segs = append(segs, filter(s.genCustomOfKind(kind, field, custom)))
		}
	}
	// The generated function groups: the modules of one group are i ≡ c (mod 360); c < 360 stands for it.
	if only == nil || only["FUGR"] {
		groups := 0
		for i := 7; i < min(360, g.custom); i += 10 {
			groups++
		}
		segs = append(segs, segment{units: groups, per: 1, owner: "customer", rows: func(u int) []map[string]string {
			o := g.customObject(10*u+7, 0, false)
			return keep(repoEntry{object: "FUGR", name: o.Group, pkg: o.Package, author: o.CreatedBy, created: dateOf(o.ChangedAt), system: s.info.SystemID,
				text: "Function group " + o.Group})
		}})
	}
	return segs
}

// textSegments are a text table's rows: the repository objects of some types.
func (s *System) textSegments(field string, types []string, row func(repoEntry) map[string]string) []segment {
	only := map[string]bool{}
	for _, t := range types {
		only[t] = true
	}
	return s.repoSegments(field, row, only)
}

// --- TDEVC ---

func (s *System) tdevcRows() []segment {
	type pkg struct{ text, user, layer, unit, parent, component string }
	pkgs := map[string]pkg{"$TMP": {"Local Objects", "SAP", "", "LOCAL", "", ""}}
	appl := "SAP_APPL"
	if s.info.SystemType == "S4HANA" {
		appl = "S4CORE"
	}
	custom := func(name, user string) {
		if _, ok := pkgs[name]; !ok && name != "" {
			parent := ""
			if i := strings.IndexByte(name, '_'); i > 0 {
				parent = name[:i]
			}
			pkgs[name] = pkg{"Customer package " + name, user, "ZCUS", "HOME", parent, ""}
		}
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		if s.isCustom(o.Name) || strings.HasPrefix(o.Package, "Z") || strings.HasPrefix(o.Package, "Y") || strings.HasPrefix(o.Package, "$") {
			custom(o.Package, o.CreatedBy)
		}
	}
	if s.gen.custom > 0 {
		for _, a := range areas {
			for _, p := range [...]string{"REPORTS", "TOOLS", "MIGRATION", "INTERFACES"} {
				custom("Z"+a.code+"_"+p, "DEVELOPER")
			}
		}
	}
	if s.gen.std > 0 {
		for _, a := range areas {
			pkgs[a.pkg] = pkg{a.name, "SAP", "SAP", appl, "", componentID(a.component)}
		}
	}
	for _, name := range sortedNames(realComponents) { // a package has one component: the first table's
		c := realComponents[name]
		if _, ok := pkgs[c[0]]; !ok {
			unit := appl
			if strings.HasPrefix(c[1], "BC") {
				unit = "SAP_BASIS"
			}
			pkgs[c[0]] = pkg{"SAP package " + c[0] + " (" + c[1] + ")", "SAP", "SAP", unit, "", componentID(c[1])}
		}
	}
	rows := make([]map[string]string, 0, len(pkgs))
	for _, name := range sortedNames(pkgs) {
		p := pkgs[name]
		rows = append(rows, map[string]string{"DEVCLASS": name, "CTEXT": p.text, "AS4USER": p.user, "PDEVCLASS": p.layer, "DLVUNIT": p.unit,
			"COMPONENT": p.component, "PARENTCL": p.parent})
	}
	return []segment{listSegment(rows, "DEVCLASS")}
}

// componentID is the internal ID (DF14L-FCTR_ID) the simulator gives an application component:
// a real system's IDs are opaque too (HLA0009572, ...).
func componentID(posid string) string {
	if posid == "" {
		return ""
	}
	return fmt.Sprintf("SIM%08X", crc32.ChecksumIEEE([]byte(posid)))
}

// df14lRows are the application components the packages name.
func (s *System) df14lRows() []segment {
	seen := map[string]bool{}
	var names []string
	for _, c := range realComponents {
		seen[c[1]] = true
	}
	for _, a := range areas {
		seen[a.component] = true
	}
	for n := range seen {
		names = append(names, n)
	}
	rows := make([]map[string]string, 0, len(names))
	for _, n := range names {
		rows = append(rows, map[string]string{"FCTR_ID": componentID(n), "AS4LOCAL": "A", "PS_POSID": n})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a]["FCTR_ID"] < rows[b]["FCTR_ID"] })
	return []segment{listSegment(rows, "FCTR_ID")}
}

// --- TRDIR, REPOSRC ---

// progOf is the ABAP program (main program or include) that holds an object's code, with its
// program type; ok false: the object has no program (tables, CDS, enhancements).
func (s *System) progOf(o *object) (name, subc string, ok bool) {
	switch o.Type {
	case "PROG":
		return o.Name, "1", true
	case "INCL":
		return o.Name, "I", true
	case "CLAS":
		return sap.PoolInclude(o.Name, "CP"), "K", true
	case "INTF":
		return sap.PoolInclude(o.Name, "IP"), "J", true
	case "FUGR":
		return mainProgram(o.Name), "F", true
	case "FUNC":
		return s.includeOf(o), "I", true
	}
	return "", "", false
}

func (s *System) progRow(o *object, reposrc bool) []map[string]string {
	name, subc, ok := s.progOf(o)
	if !ok {
		return nil
	}
	by, date, clock := s.stamp(o)
	created := o.ChangedAt
	if o.createdOn != "" {
		created = o.createdOn
	}
	r := map[string]string{"SUBC": subc, "CNAM": o.CreatedBy, "CDAT": dateOf(created), "UNAM": by, "UDAT": date}
	if c := r["CDAT"]; c > date {
		r["CDAT"] = date
	}
	if reposrc {
		r["PROGNAME"], r["R3STATE"], r["UTIME"] = name, "A", clock
	} else {
		r["NAME"], r["SDATE"], r["STIME"], r["RLOAD"], r["UCCHECK"] = name, date, clock, "E", "X"
	}
	return []map[string]string{r}
}

func (s *System) programRows(reposrc bool) []segment {
	field := "NAME"
	if reposrc {
		field = "PROGNAME"
	}
	var named []map[string]string
	for _, k := range s.matKeys {
		named = append(named, s.progRow(s.objects[k], reposrc)...)
	}
	sort.Slice(named, func(a, b int) bool { return named[a][field] < named[b][field] })
	g := s.gen
	segs := []segment{listSegment(named, field),
		s.blockSegment([]int{16}, field, func(j int) map[string]string {
			o := g.stdObject(j)
			return s.progRow(&object{Type: "PROG", Name: o.name, CreatedBy: "SAP", ChangedAt: "2015-01-01"}, reposrc)[0]
		}, func(v string) (int, bool) { return g.stdIndex("PROG", v) })}
	row := func(o *object) []map[string]string {
		if ch, ok := s.genChanged[o.genIndex]; ok && ch.seq > 0 {
			o.Seq = ch.seq
		}
		return s.progRow(o, reposrc)
	}
	for kind := 0; kind <= 7; kind++ {
		seg := s.genCustomOfKind(kind, field, row)
		if kind >= 4 { // programs named after the object: a class pool, a function module's include
			seg.find = func(_, v string) []int {
				i, ok := s.genProgramIndex(v)
				if !ok || i%10 != kind {
					return nil
				}
				return []int{i / 10}
			}
		}
		segs = append(segs, seg)
	}
	return segs
}

// genProgramIndex is the generated custom object whose program is prog: a class pool
// ZCL_…====CP, or a function module's include L<group>U<nn> (the modules of a group are
// i ≡ c (mod 360), nn counting from 1).
func (s *System) genProgramIndex(prog string) (int, bool) {
	if strings.HasSuffix(prog, "CP") && len(prog) == 32 {
		return s.gen.customIndex("CLAS", strings.TrimRight(prog[:30], "="))
	}
	ns, short := splitNS(prog)
	k := strings.LastIndex(short, "U")
	if ns != "" || !strings.HasPrefix(short, "L") || k < 2 || len(short)-k != 3 {
		return 0, false
	}
	nn, err := strconv.Atoi(short[k+1:])
	if err != nil || nn < 1 {
		return 0, false
	}
	group := short[1:k]
	for c := 7; c < min(360, s.gen.custom); c += 10 {
		if s.gen.customObject(c, 0, false).Group == group {
			i := c + 360*(nn-1)
			return i, i < s.gen.custom
		}
	}
	return 0, false
}

func (s *System) trdirRows() []segment   { return s.programRows(false) }
func (s *System) reposrcRows() []segment { return s.programRows(true) }

// --- D010INC ---

func (s *System) d010incRows() []segment {
	var rows []map[string]string
	add := func(master, inc string) { rows = append(rows, map[string]string{"MASTER": master, "INCLUDE": inc}) }
	groups := map[string]bool{}
	for _, fm := range s.namedFunctions() {
		if s.isCustom(fm.group) {
			if !groups[fm.group] {
				groups[fm.group] = true
				ns, short := splitNS(fm.group)
				add(mainProgram(fm.group), ns+"L"+short+"TOP")
				add(mainProgram(fm.group), ns+"L"+short+"UXX")
			}
			ns, short := splitNS(fm.group)
			add(mainProgram(fm.group), ns+"L"+short+"U"+fm.include)
		}
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		main, _, ok := s.progOf(o)
		if !ok || o.Type == "FUNC" {
			continue
		}
		if o.Type == "CLAS" {
			for _, sfx := range []string{"CU", "CO", "CI", "CM001"} {
				add(main, sap.PoolInclude(o.Name, sfx))
			}
		}
		for _, r := range s.refsOf(o) {
			if r.Kind == abapref.Include {
				add(main, r.Name)
			}
		}
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a]["MASTER"] < rows[b]["MASTER"] })
	return []segment{listSegment(rows, "MASTER")}
}

// --- DD03L ---

func (s *System) dd03lRows() []segment {
	var rows []map[string]string
	field := func(tab string, pos int, f sap.Field, prec string) map[string]string {
		r := map[string]string{"TABNAME": tab, "FIELDNAME": f.Name, "AS4LOCAL": "A", "AS4VERS": "0000", "POSITION": fmt.Sprintf("%04d", pos),
			"ROLLNAME": f.DataElement, "CHECKTABLE": f.CheckTable, "INTTYPE": typeLetter(f.Type), "INTLEN": fmt.Sprintf("%06d", f.Length),
			"PRECFIELD": prec, "DATATYPE": f.Type, "LENG": fmt.Sprintf("%06d", f.Length), "DECIMALS": fmt.Sprintf("%06d", f.Decimals), "DOMNAME": f.Domain}
		if f.Key {
			r["KEYFLAG"] = "X"
		}
		return r
	}
	appendOf := map[string]string{}
	for _, k := range s.matKeys {
		if o := s.objects[k]; o.Type == "TABL" && (o.Kind == "append" || o.Kind == "key_user_field") {
			appendOf[o.Implements] = o.Name
		}
	}
	for _, name := range sortedNames(s.tables) {
		t := s.tables[name]
		pos := 0
		var appended []sap.Field
		for _, f := range t.schema.Fields {
			if f.Appended {
				appended = append(appended, f)
				continue
			}
			pos++
			rows = append(rows, field(name, pos, f, ""))
		}
		if len(appended) == 0 {
			continue
		}
		app := appendOf[name]
		pos++
		rows = append(rows, field(name, pos, sap.Field{Name: ".APPEND", DataElement: app}, app))
		for i, f := range appended {
			pos++
			rows = append(rows, field(name, pos, f, app))
			if app != "" {
				rows = append(rows, field(app, i+1, f, ""))
			}
		}
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a]["TABNAME"] < rows[b]["TABNAME"] })
	return []segment{listSegment(rows, "TABNAME")}
}

// --- E070, E071 ---

// transportNumber is the request a change-log entry was transported in: <SID>K9<seq>.
func (s *System) transportNumber(seq int64) string {
	return s.info.SystemID + "K9" + fmt.Sprintf("%05d", seq%100000)
}

// transported says whether a change went through a transport request: data writes and SAP's
// own changes (support packages) do not, nor do objects of the local package $TMP.
func (s *System) transported(c sap.Change) bool {
	if c.ObjectType == "DATA" || c.ChangedBy == "SAP" {
		return false
	}
	if o, ok := s.objects[c.ObjectType+"/"+c.ObjectName]; ok && o.Package == "$TMP" {
		return false
	}
	return true
}

func (s *System) transportRows(objects bool) []segment {
	rows := func(i int) []map[string]string {
		c := s.changes[i]
		if !s.transported(c) {
			return nil
		}
		nr := s.transportNumber(c.Seq)
		if !objects {
			t, _ := time.Parse(time.RFC3339, c.ChangedAt)
			return []map[string]string{{"TRKORR": nr, "TRFUNCTION": "K", "TRSTATUS": "R", "KORRDEV": "SYST", "AS4USER": c.ChangedBy,
				"AS4DATE": t.Format("20060102"), "AS4TIME": t.Format("150405")}}
		}
		pgmid, typ := "R3TR", c.ObjectType
		switch typ {
		case "FUNC":
			pgmid = "LIMU"
		case "INCL":
			typ = "PROG"
		}
		r := map[string]string{"TRKORR": nr, "AS4POS": "000001", "PGMID": pgmid, "OBJECT": typ, "OBJ_NAME": c.ObjectName, "LOCKFLAG": "X"}
		if c.ChangeType == "deleted" {
			r["OBJFUNC"] = "D"
		}
		return []map[string]string{r}
	}
	return []segment{{units: len(s.changes), rows: rows, field: "TRKORR", find: func(_, v string) []int {
		rest, ok := strings.CutPrefix(v, s.info.SystemID+"K9")
		n, err := strconv.Atoi(rest)
		if !ok || err != nil || len(rest) != 5 {
			return nil
		}
		var out []int
		for seq := int64(n); seq <= int64(len(s.changes)); seq += 100000 {
			if seq > 0 {
				out = append(out, int(seq-1))
			}
		}
		return out
	}}}
}

// --- enhancements ---

func (s *System) enhancementObjects() []*object {
	var out []*object
	for _, k := range s.matKeys {
		if o := s.objects[k]; o.Type == "ENHO" {
			out = append(out, o)
		}
	}
	return out
}

func enhToolType(kind string) string {
	if kind == "badi" {
		return "BADI_IMPL"
	}
	return "HOOK_IMPL"
}

func (s *System) enhheaderRows() []segment {
	var rows []map[string]string
	for _, o := range s.enhancementObjects() {
		rows = append(rows, map[string]string{"ENHNAME": o.Name, "VERSION": "A", "ENHTOOLTYPE": enhToolType(o.Kind)})
	}
	return []segment{listSegment(rows, "ENHNAME")}
}

// enhobjRows say what each enhancement implementation enhances: a BAdI implementation its BAdI
// (MAINTYPE BADI), a hook implementation the enhanced program.
func (s *System) enhobjRows() []segment {
	var rows []map[string]string
	for _, o := range s.enhancementObjects() {
		if o.Implements == "" {
			continue
		}
		typ := "PROG"
		if o.Kind == "badi" {
			typ = "BADI"
		}
		rows = append(rows, map[string]string{"ENHNAME": o.Name, "VERSION": "A", "MAINTYPE": typ, "MAINNAME": o.Implements, "OBJ_NAME": o.Implements})
	}
	return []segment{listSegment(rows, "ENHNAME")}
}

// modactRows are the CMOD projects: one project per customer exit include's SAP enhancement
// (the simulator names the project Z + the enhancement's first 7 characters).
func (s *System) modactRows() []segment {
	var rows []map[string]string
	for _, k := range s.matKeys {
		o := s.objects[k]
		if o.Kind == "user_exit" && strings.HasPrefix(o.Name, "ZX") && o.Implements != "" {
			rows = append(rows, map[string]string{"NAME": clip("Z"+o.Implements, 8), "MEMBER": o.Implements})
		}
	}
	return []segment{listSegment(rows, "NAME")}
}
