package sapsim

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

// SAP's system tables (the repository, the dictionary, the where-used index, transports) are
// served virtually: their rows are derived on the fly from the object store, the catalog, the
// change log and the generated landscape, so nothing of the generated landscape's size is ever
// held. RFC_READ_TABLE and DDIF_FIELDINFO_GET see them like any other table; a write refuses them.
//
// A table is a list of segments (the named objects, then generated objects by index). A segment
// is units (objects) of rows: without a WHERE, ROWSKIPS skips whole units by arithmetic, so a page
// costs O(ROWCOUNT); an equality on a segment's name field is looked up instead of scanned. Other
// WHERE conditions scan (O(ROWSKIPS + ROWCOUNT) time, O(ROWCOUNT) memory). Row order: named
// objects in key order, then generated objects by index (RFC_READ_TABLE promises no order on a
// real system either; the simulator's is stable).

// segment is a run of rows of a virtual table.
type segment struct {
	units int
	per   int                             // rows per unit when every unit has that many, else 0
	rows  func(i int) []map[string]string // the rows of unit i (nil: none, e.g. a deleted object)
	find  func(field, value string) []int // units whose rows can have field = value; nil: cannot narrow
	field string                          // the field find narrows on
	gaps  func() []int                    // sorted units that have no rows although per > 0
	// owner says whose objects all rows name: "sap" (standard, never Z*, Y*, /…/ or a
	// customer package) or "customer"; "" for a mix. A WHERE that admits only the other side
	// skips the segment without deriving its rows.
	owner string
}

// sysTable is a virtual system table: its DDIC definition and how to derive its rows.
type sysTable struct {
	spec     tableSpec
	segments func(s *System) []segment
}

// listSegment is a materialised segment: the named objects' rows (small, in key order).
func listSegment(rows []map[string]string, field string) segment {
	seg := segment{units: len(rows), per: 1, rows: func(i int) []map[string]string { return rows[i : i+1] }, field: field}
	if field != "" {
		seg.find = func(_, v string) []int {
			var out []int
			for i, r := range rows {
				if r[field] == v {
					out = append(out, i)
				}
			}
			return out
		}
	}
	return seg
}

// sysDataElements are the data elements of the system tables (SAP's names, types and lengths).
var sysDataElements = map[string]dataElement{
	"DLVUNIT":     {"DLVUNIT", "CHAR", 30, 0, "Software Component", ""},
	"SAPRELEASE":  {"SAPRELEASE", "CHAR", 10, 0, "Release of SAP Software Component", ""},
	"SAPPATCHLV":  {"SAPPATCHLV", "CHAR", 10, 0, "Support Package Level of Software Component", ""},
	"COMP_TYPE":   {"COMP_TYPE", "CHAR", 1, 0, "Software Component Type", ""},
	"AS4LOCAL":    {"AS4LOCAL", "CHAR", 1, 0, "Activation Status of a Repository Object", ""},
	"AS4VERS":     {"AS4VERS", "NUMC", 4, 0, "Version of the entry (not used)", ""},
	"TABCLASS":    {"TABCLASS", "CHAR", 8, 0, "Table Category", ""},
	"SQLAPPDTAB":  {"AS4TAB", "CHAR", 30, 0, "Name of an SQL table / appended table", ""},
	"CLIDEP":      {"CLIDEP", "CHAR", 1, 0, "Indicator that Contents are Client-Specific", ""},
	"CONTFLAG":    {"CONTFLAG", "CHAR", 1, 0, "Delivery Class", ""},
	"AS4USER":     {"AS4USER", "CHAR", 12, 0, "Last Changed By", ""},
	"AS4DATE":     {"AS4DATE", "DATS", 8, 0, "Date of Last Change", ""},
	"AS4TIME":     {"AS4TIME", "TIMS", 6, 0, "Last Changed At", ""},
	"MAINFLAG":    {"MAINTFLAG", "CHAR", 1, 0, "Data Browser/Table View Maintenance", ""},
	"DDLANGUAGE":  {"SPRAS", "LANG", 1, 0, "Language Key", ""},
	"AS4TEXT":     {"AS4TEXT", "CHAR", 60, 0, "Short Description of Repository Objects", ""},
	"RS38L_FNAM":  {"RS38L_FNAM", "CHAR", 30, 0, "Name of Function Module", ""},
	"PNAME":       {"PROGNAME", "CHAR", 40, 0, "Main Program of the Function Group", ""},
	"INCLUDENR":   {"INCLUDENR", "CHAR", 2, 0, "Number of the Include of the Function Module", ""},
	"FMODE":       {"FMODE", "CHAR", 1, 0, "Processing Type (R: remote-enabled)", ""},
	"RS38L_FTXT":  {"TEXT74", "CHAR", 74, 0, "Short Text for Function Module", ""},
	"SEU_OBJ":     {"SEU_OBJ", "CHAR", 2, 0, "Type of a global type in the where-used list", ""},
	"SEU_NAME":    {"SEU_NAME", "CHAR", 200, 0, "Name of the used global type or component", ""},
	"PROGNAME":    {"PROGNAME", "CHAR", 40, 0, "ABAP Program Name", ""},
	"SEU_DIRECT":  {"XFELD", "CHAR", 1, 0, "Direct use", ""},
	"SEU_INDIR":   {"XFELD", "CHAR", 1, 0, "Indirect use", ""},
	"CROSSTYPE":   {"CHAR1", "CHAR", 1, 0, "Type of the used object (F function, R report, ...)", ""},
	"CROSSNAME":   {"CHAR40", "CHAR", 40, 0, "Name of the used object", ""},
	"PGMID":       {"PGMID", "CHAR", 4, 0, "Program ID in Requests and Tasks", ""},
	"TROBJTYPE":   {"TROBJTYPE", "CHAR", 4, 0, "Object Type", ""},
	"SOBJ_NAME":   {"SOBJ_NAME", "CHAR", 40, 0, "Object Name in Object Directory", ""},
	"TRKORR":      {"TRKORR", "CHAR", 20, 0, "Request/Task", ""},
	"SRCSYSTEM":   {"SYSYSID", "CHAR", 10, 0, "Original System of Object", ""},
	"RESPONSIBL":  {"USNAM", "CHAR", 12, 0, "Person Responsible for a Repository Object", ""},
	"DEVCLASS":    {"DEVCLASS", "CHAR", 30, 0, "Package", ""},
	"GENFLAG":     {"GENFLAG", "CHAR", 1, 0, "Generation Flag", ""},
	"MASTERLANG":  {"SPRAS", "LANG", 1, 0, "Original Language of Repository Object", ""},
	"CREATIONDT":  {"DATUM", "DATS", 8, 0, "Created On", ""},
	"DEVLAYER":    {"DEVLAYER", "CHAR", 4, 0, "Transport Layer", ""},
	"PARENTCL":    {"DEVCLASS", "CHAR", 30, 0, "Superpackage", ""},
	"SUBC":        {"SUBC", "CHAR", 1, 0, "Program Type (1 report, I include, F function group, K class pool, J interface pool)", ""},
	"CNAM":        {"USNAM", "CHAR", 12, 0, "Author", ""},
	"UNAM":        {"USNAM", "CHAR", 12, 0, "Last Changed By", ""},
	"RDIR_CDATE":  {"DATUM", "DATS", 8, 0, "Created On", ""},
	"RDIR_UDATE":  {"DATUM", "DATS", 8, 0, "Changed On", ""},
	"RDIR_STIME":  {"UZEIT", "TIMS", 6, 0, "Last Changed At", ""},
	"R3STATE":     {"R3STATE", "CHAR", 1, 0, "ABAP: Program Status (Active, Saved, Transported...)", ""},
	"RLOAD":       {"SPRAS", "LANG", 1, 0, "Master Language", ""},
	"UCCHECK":     {"UCCHECK", "CHAR", 1, 0, "Flag, if Unicode check was performed", ""},
	"DDPOSITION":  {"TABFDPOS", "NUMC", 4, 0, "Position of the field in the table", ""},
	"KEYFLAG":     {"KEYFLAG", "CHAR", 1, 0, "Identifies a key field of a table", ""},
	"ROLLNAME":    {"ROLLNAME", "CHAR", 30, 0, "Data element (semantic domain)", ""},
	"CHECKTABLE":  {"TABNAME", "CHAR", 30, 0, "Table Name", ""},
	"INTTYPE":     {"INTTYPE", "CHAR", 1, 0, "ABAP data type (C,D,N,...)", ""},
	"INTLEN":      {"DDLENG", "NUMC", 6, 0, "Internal Length in Bytes", ""},
	"PRECFIELD":   {"TABNAME", "CHAR", 30, 0, "Name of Included Table", ""},
	"DATATYPE":    {"DATATYPE", "CHAR", 4, 0, "Data Type in ABAP Dictionary", ""},
	"DDLENG":      {"DDLENG", "NUMC", 6, 0, "Length (No. of Characters)", ""},
	"DECIMALS":    {"DDLENG", "NUMC", 6, 0, "Number of Decimal Places", ""},
	"DOMNAME":     {"DOMNAME", "CHAR", 30, 0, "Domain name", ""},
	"TRFUNCTION":  {"TRFUNCTION", "CHAR", 1, 0, "Type of request/task (K workbench, W customizing, ...)", ""},
	"TRSTATUS":    {"TRSTATUS", "CHAR", 1, 0, "Status of request/task (D modifiable, R released)", ""},
	"TR_TARGET":   {"TR_TARGET", "CHAR", 10, 0, "Transport Target of Request", ""},
	"TRKORRDEV":   {"TRKORRDEV", "CHAR", 4, 0, "Request or task category", ""},
	"STRKORR":     {"TRKORR", "CHAR", 20, 0, "Higher-Level Request", ""},
	"DDPOSNR":     {"DDPOSNR", "NUMC", 6, 0, "Dictionary: line number", ""},
	"TROBJ_NAME":  {"TROBJ_NAME", "CHAR", 120, 0, "Object Name in Object List", ""},
	"OBJFUNC":     {"OBJFUNC", "CHAR", 1, 0, "Object function (D: deleted, K: key entries)", ""},
	"LOCKFLAG":    {"LOCKFLAG", "CHAR", 1, 0, "Lock status or import status of an object entry", ""},
	"ENHNAME":     {"ENHNAME", "CHAR", 30, 0, "Enhancement Implementation", ""},
	"R3STATE_E":   {"R3STATE", "CHAR", 1, 0, "ABAP: Program Status (Active, Saved, Transported...)", ""},
	"ENHTOOLTYPE": {"ENHTOOLTYPE", "CHAR", 20, 0, "Enhancement Tool Type (BADI_IMPL, HOOK_IMPL, ...)", ""},
	"ENHMAINTYPE": {"TROBJTYPE", "CHAR", 4, 0, "Type of the enhanced main object", ""},
	"ENHMAINNAME": {"SOBJ_NAME", "CHAR", 40, 0, "Name of the enhanced main object", ""},
	"ENHSPOTNAME": {"SOBJ_NAME", "CHAR", 40, 0, "Enhanced object (BAdI, enhancement spot, program)", ""},
	"MASTER":      {"PROGNAME", "CHAR", 40, 0, "Main program", ""},
}

func init() {
	for k, v := range sysDataElements {
		if _, ok := dataElements[k]; !ok {
			dataElements[k] = v
		}
	}
}

// systemTables are the virtual system tables, by name.
var systemTables = []sysTable{
	{spec: tableSpec{name: "CVERS", text: "Release status of software components in system", delivery: "S",
		fields: []fieldSpec{kd("COMPONENT", "DLVUNIT"), fd("RELEASE", "SAPRELEASE"), fd("EXTRELEASE", "SAPPATCHLV"), f("COMP_TYPE")}},
		segments: (*System).cversRows},
	{spec: tableSpec{name: "DD02L", text: "SAP Tables", delivery: "W",
		fields: []fieldSpec{kd("TABNAME", "TABNAME"), k("AS4LOCAL"), k("AS4VERS"), f("TABCLASS"), fd("SQLTAB", "SQLAPPDTAB"), f("CLIDEP"),
			f("CONTFLAG"), f("AS4USER"), f("AS4DATE"), f("AS4TIME"), f("MAINFLAG")}},
		segments: (*System).dd02lRows},
	{spec: tableSpec{name: "DD02T", text: "R/3 DD: SAP Table Texts", delivery: "W",
		fields: []fieldSpec{kd("TABNAME", "TABNAME"), k("DDLANGUAGE"), k("AS4LOCAL"), k("AS4VERS"), fd("DDTEXT", "AS4TEXT")}},
		segments: (*System).dd02tRows},
	{spec: tableSpec{name: "TFDIR", text: "Function Module", delivery: "W",
		fields: []fieldSpec{kd("FUNCNAME", "RS38L_FNAM"), f("PNAME"), fd("INCLUDE", "INCLUDENR"), f("FMODE")}},
		segments: (*System).tfdirRows},
	{spec: tableSpec{name: "TFTIT", text: "Function Module Short Text", delivery: "W",
		fields: []fieldSpec{kd("SPRAS", "SPRAS"), kd("FUNCNAME", "RS38L_FNAM"), fd("STEXT", "RS38L_FTXT")}},
		segments: (*System).tftitRows},
	{spec: tableSpec{name: "WBCROSSGT", text: "Where-used list: global types, classes and their components", delivery: "W",
		fields: []fieldSpec{kd("OTYPE", "SEU_OBJ"), kd("NAME", "SEU_NAME"), kd("INCLUDE", "PROGNAME"), fd("DIRECT", "SEU_DIRECT"), fd("INDIRECT", "SEU_INDIR")}},
		segments: (*System).wbcrossgtRows},
	{spec: tableSpec{name: "CROSS", text: "Where-used list: function modules, programs, messages", delivery: "W",
		fields: []fieldSpec{kd("TYPE", "CROSSTYPE"), kd("NAME", "CROSSNAME"), kd("INCLUDE", "PROGNAME")}},
		segments: (*System).crossRows},
}

// sysTableDefs builds the virtual tables of a system.
func sysTableDefs(systemType string) map[string]*table {
	out := map[string]*table{}
	for i := range systemTables {
		st := &systemTables[i]
		t := buildTable(st.spec, systemType, false)
		t.virtual = st.segments
		out[st.spec.name] = t
	}
	return out
}

// virtualCount counts a virtual table's rows where that is arithmetic; segments whose units
// vary in rows are counted only when they are small (0 otherwise: unknown without a full read).
func (s *System) virtualCount(t *table) int {
	n := 0
	for _, seg := range t.virtual(s) {
		switch {
		case seg.per > 0:
			n += seg.units*seg.per - len(gapsOf(seg))*seg.per
		case seg.units <= 2000:
			for i := 0; i < seg.units; i++ {
				n += len(seg.rows(i))
			}
		}
	}
	return n
}

func gapsOf(seg segment) []int {
	if seg.gaps == nil {
		return nil
	}
	return seg.gaps()
}

// equalities are the values a WHERE allows a field (field = 'v' or field IN (...), top-level ANDs).
func equalities(c cond, out map[string][]string) {
	switch x := c.(type) {
	case and:
		equalities(x.l, out)
		equalities(x.r, out)
	case compare:
		if (x.op == "=" || x.op == "EQ" || x.op == "IN") && len(x.values) > 0 {
			out[x.field] = x.values
		}
	}
}

// customerPattern says whether a LIKE pattern can only match customer names or packages.
func customerPattern(p string) bool {
	return strings.HasPrefix(p, "Z") || strings.HasPrefix(p, "Y") || strings.HasPrefix(p, "$") || strings.HasPrefix(p, "/")
}

// customerOnly: a top-level conjunct is a disjunction of LIKE / = conditions that each can
// only match customer names (Z*, Y*, /NS/*, $ packages).
func customerOnly(c cond) bool {
	switch x := c.(type) {
	case and:
		return customerOnly(x.l) || customerOnly(x.r)
	case or:
		return customerDisjunct(x)
	case compare:
		return customerDisjunct(x)
	}
	return false
}

func customerDisjunct(c cond) bool {
	switch x := c.(type) {
	case or:
		return customerDisjunct(x.l) && customerDisjunct(x.r)
	case compare:
		return (x.op == "LIKE" || x.op == "=" || x.op == "EQ") && len(x.values) == 1 && customerPattern(x.values[0])
	}
	return false
}

// standardOnly: top-level conjuncts exclude names LIKE 'Z%' and LIKE 'Y%' of the same field.
func standardOnly(c cond) bool {
	excluded := map[string]int{}
	var walk func(cond)
	walk = func(c cond) {
		switch x := c.(type) {
		case and:
			walk(x.l)
			walk(x.r)
		case compare:
			if x.op == "NOT LIKE" && len(x.values) == 1 && (x.values[0] == "Z%" || x.values[0] == "Y%") {
				excluded[x.field] |= 1 << (x.values[0][0] - 'Y')
			}
		}
	}
	walk(c)
	for _, bits := range excluded {
		if bits == 3 {
			return true
		}
	}
	return false
}

// virtualRowsBuilt counts the rows virtual tables derived (tests check a page's cost with it).
var virtualRowsBuilt atomic.Int64

// readVirtual pages a virtual table: skip rows, then emit up to count (0: all) rows.
func (s *System) readVirtual(t *table, where cond, skip, count int, emit func(row map[string]string)) {
	eq := map[string][]string{}
	if where != nil {
		equalities(where, eq)
	}
	emitted := 0
	full := func() bool { return count > 0 && emitted >= count }
	take := func(rows []map[string]string) bool {
		virtualRowsBuilt.Add(int64(len(rows)))
		for _, r := range rows {
			if where != nil && !where.eval(r) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			emit(r)
			emitted++
			if full() {
				return false
			}
		}
		return true
	}
	custOnly, sapOnly := where != nil && customerOnly(where), where != nil && standardOnly(where)
	for _, seg := range t.virtual(s) {
		if (seg.owner == "sap" && custOnly) || (seg.owner == "customer" && sapOnly) {
			continue
		}
		if seg.find != nil {
			if vs, ok := eq[seg.field]; ok {
				done := map[int]bool{}
				for _, v := range vs {
					for _, i := range seg.find(seg.field, v) {
						if done[i] {
							continue
						}
						done[i] = true
						if !take(seg.rows(i)) {
							return
						}
					}
				}
				continue
			}
		}
		start, sub := 0, 0
		if where == nil && seg.per > 0 {
			gaps := gapsOf(seg)
			total := (seg.units - len(gaps)) * seg.per
			if skip >= total {
				skip -= total
				continue
			}
			start, sub = unitAt(skip/seg.per, gaps), skip%seg.per
			skip = sub
		}
		for i := start; i < seg.units; i++ {
			if !take(seg.rows(i)) {
				return
			}
		}
	}
}

// unitAt is the unit holding the k-th unit with rows, given the sorted units without rows.
func unitAt(k int, gaps []int) int {
	u := k
	for {
		n := sort.SearchInts(gaps, u+1) // gaps at or before u
		if k+n == u {
			return u
		}
		u = k + n
	}
}

// --- the tables' rows ---

func (s *System) cversRows() []segment {
	rows := make([]map[string]string, 0, len(s.info.Components))
	for _, c := range s.info.Components {
		typ := "S"
		if c.Name == "S4CORE" || c.Name == "SAP_APPL" || c.Name == "EA-APPL" {
			typ = "R"
		}
		rows = append(rows, map[string]string{"COMPONENT": c.Name, "RELEASE": c.Release, "EXTRELEASE": c.SP, "COMP_TYPE": typ})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a]["COMPONENT"] < rows[b]["COMPONENT"] })
	return []segment{listSegment(rows, "COMPONENT")}
}

// ddicTable is one table of the dictionary as DD02L/DD02T list it.
type ddicTable struct {
	name, class, sqltab, delivery, text, user, date string
	clientDep                                       bool
}

// namedDDICTables are the tables the system defines (standard, custom, virtual), appends and
// key-user extensions of custom objects, and catalog tables known only by name, in name order.
func (s *System) namedDDICTables() []ddicTable {
	seen := map[string]bool{}
	var out []ddicTable
	for _, name := range sortedNames(s.tables) {
		t := s.tables[name]
		dt := ddicTable{name: name, class: "TRANSP", delivery: t.schema.DeliveryClass, text: t.schema.Description, user: "SAP", date: "20150101"}
		dt.clientDep = len(t.schema.Fields) > 0 && t.schema.Fields[0].Type == "CLNT"
		if t.schema.Custom {
			if o, ok := s.objects["TABL/"+name]; ok {
				dt.user, dt.date = o.CreatedBy, strings.ReplaceAll(o.ChangedAt, "-", "")
			}
		}
		seen[name] = true
		out = append(out, dt)
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		if o.Type != "TABL" || seen[o.Name] {
			continue
		}
		seen[o.Name] = true
		dt := ddicTable{name: o.Name, class: "TRANSP", delivery: "A", text: o.Description, user: o.CreatedBy, date: strings.ReplaceAll(o.ChangedAt, "-", ""), clientDep: true}
		if o.Kind == "append" || o.Kind == "key_user_field" {
			dt.class, dt.sqltab, dt.delivery, dt.clientDep = "APPEND", o.Implements, "", false
		}
		out = append(out, dt)
	}
	for _, e := range s.catalog().entries {
		if e.typ == "TABL" && !seen[e.name] {
			seen[e.name] = true
			out = append(out, ddicTable{name: e.name, class: "TRANSP", delivery: "A", text: e.description, user: "SAP", date: "20150101", clientDep: true})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

func (d ddicTable) dd02l() map[string]string {
	r := map[string]string{"TABNAME": d.name, "AS4LOCAL": "A", "AS4VERS": "0000", "TABCLASS": d.class, "SQLTAB": d.sqltab,
		"CONTFLAG": d.delivery, "AS4USER": d.user, "AS4DATE": d.date, "AS4TIME": "120000", "MAINFLAG": "X"}
	if d.clientDep {
		r["CLIDEP"] = "X"
	}
	return r
}

func (d ddicTable) dd02t() map[string]string {
	return map[string]string{"TABNAME": d.name, "DDLANGUAGE": "E", "AS4LOCAL": "A", "AS4VERS": "0000", "DDTEXT": d.text}
}

// stdTableSlots are the block slots of generated standard tables (generate.go).
var stdTableSlots = [...]int{0, 1, 2, 3, 4, 5, 19}

// genStdTables is the generated standard tables: 7 per block of 20 objects.
func (s *System) genStdTables(row func(stdObject) map[string]string) segment {
	g := s.gen
	units := g.std / 20 * len(stdTableSlots)
	for _, sl := range stdTableSlots {
		if g.std%20 > sl {
			units++
		}
	}
	at := func(u int) int { return u/len(stdTableSlots)*20 + stdTableSlots[u%len(stdTableSlots)] }
	return segment{units: units, per: 1, field: "TABNAME", owner: "sap",
		rows: func(u int) []map[string]string { return []map[string]string{row(g.stdObject(at(u)))} },
		find: func(_, v string) []int {
			j, ok := g.stdIndex("TABL", v)
			if !ok {
				return nil
			}
			for k, sl := range stdTableSlots {
				if j%20 == sl {
					return []int{j/20*len(stdTableSlots) + k}
				}
			}
			return nil
		}}
}

// genCustomOfKind is the generated custom objects of one kind (i % 10 == kind), unit u being
// object 10u+kind; deleted or replaced objects have no rows.
func (s *System) genCustomOfKind(kind int, field string, row func(o *object) []map[string]string) segment {
	g := s.gen
	units := g.custom / 10
	if g.custom%10 > kind {
		units++
	}
	return segment{units: units, per: 1, field: field, owner: "customer",
		rows: func(u int) []map[string]string {
			o, ok := s.genCustom(10*u+kind, false)
			if !ok {
				return nil
			}
			return row(o)
		},
		find: func(_, v string) []int {
			i, ok := g.customIndex("", v)
			if !ok || i%10 != kind {
				return nil
			}
			return []int{i / 10}
		},
		gaps: func() []int {
			var out []int
			for i, ch := range s.genChanged {
				if (ch.deleted || ch.shadowed) && i%10 == kind {
					out = append(out, i/10)
				}
			}
			sort.Ints(out)
			return out
		}}
}

func (s *System) dd02lRows() []segment { return s.ddicRows(ddicTable.dd02l) }
func (s *System) dd02tRows() []segment { return s.ddicRows(ddicTable.dd02t) }

func (s *System) ddicRows(row func(ddicTable) map[string]string) []segment {
	named := s.namedDDICTables()
	rows := make([]map[string]string, len(named))
	for i, d := range named {
		rows[i] = row(d)
	}
	return []segment{listSegment(rows, "TABNAME"),
		s.genStdTables(func(o stdObject) map[string]string {
			return row(ddicTable{name: o.name, class: "TRANSP", delivery: "A", text: o.description, user: "SAP", date: "20150101", clientDep: true})
		}),
		s.genCustomOfKind(9, "TABNAME", func(o *object) []map[string]string {
			return []map[string]string{row(ddicTable{name: o.Name, class: "TRANSP", delivery: "A", text: o.Description, user: o.CreatedBy,
				date: strings.ReplaceAll(o.ChangedAt, "-", ""), clientDep: true})}
		})}
}

// knownGroups are the function groups of real SAP function modules the simulator knows only by
// name (from custom code), as TFDIR has them.
var knownGroups = map[string]string{"BAPI_ACC_DOCUMENT_POST": "ACC9", "BAPI_TRANSACTION_COMMIT": "BAPT", "BAPI_TRANSACTION_ROLLBACK": "BAPT",
	"BAPI_PO_CREATE1": "2012", "POPUP_TO_CONFIRM": "SPO1", "GUI_UPLOAD": "SFES", "GUI_DOWNLOAD": "SFES", "RFC_READ_TABLE": "SDTX",
	"BAPI_SALESORDER_GETLIST": "2032", "BAPI_CUSTOMER_GETDETAIL2": "V02D", "BAPI_MATERIAL_SAVEDATA": "MG03", "RFC_SYSTEM_INFO": "SRFC"}

// fmEntry is a function module as TFDIR/TFTIT list it.
type fmEntry struct {
	name, group, include, text string
	remote                     bool
}

// mainProgram is a function group's main program: SAPL<group>, /NS/SAPL<group>.
func mainProgram(group string) string {
	ns, short := splitNS(group)
	return ns + "SAPL" + short
}

func splitNS(name string) (string, string) {
	if ns := namespaceOf(name); ns != "" {
		return ns, name[len(ns):]
	}
	return "", name
}

// namedFunctions are the function modules the system defines and those the catalog knows
// with a known group, in name order; includes are numbered per group in name order.
func (s *System) namedFunctions() []fmEntry {
	var out []fmEntry
	seen := map[string]bool{}
	for _, name := range sortedNames(s.funcs) {
		f := s.funcs[name]
		group := f.iface.Group
		if o, ok := s.objects["FUNC/"+name]; ok && o.Group != "" {
			group = o.Group
		}
		if group == "" {
			group = knownGroups[name]
		}
		seen[name] = true
		out = append(out, fmEntry{name: name, group: group, text: f.iface.Description, remote: true})
	}
	for _, e := range s.catalog().entries {
		if e.typ == "FUNC" && !seen[e.name] && knownGroups[e.name] != "" {
			seen[e.name] = true
			out = append(out, fmEntry{name: e.name, group: knownGroups[e.name], text: e.description, remote: strings.HasPrefix(e.name, "BAPI")})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	next := map[string]int{}
	for i := range out {
		next[out[i].group]++
		out[i].include = fmt.Sprintf("%02d", next[out[i].group])
	}
	return out
}

func (e fmEntry) tfdir() map[string]string {
	r := map[string]string{"FUNCNAME": e.name, "PNAME": mainProgram(e.group), "INCLUDE": e.include}
	if e.remote {
		r["FMODE"] = "R"
	}
	return r
}

func (e fmEntry) tftit() map[string]string {
	return map[string]string{"SPRAS": "E", "FUNCNAME": e.name, "STEXT": e.text}
}

// stdFuncGroup is the function group of generated standard function module j: one group of
// BAPIs (slots 6, 7) and one of other modules (8, 9) per block, each module its include.
func (g *generator) stdFuncGroup(j int) (group, include string) {
	a := &areas[(j/20)%len(areas)]
	kind := "API"
	if j%20 >= 8 {
		kind = "FUNC"
	}
	return a.code + "_" + kind + "_" + suffix(j-j%20), fmt.Sprintf("%02d", 1+j%2)
}

// genFuncGroupInclude is the include number of generated custom function module i in its group:
// the modules of a group are i ≡ c (mod 360), c < 360 (group = area and noun, see customName).
func genFuncGroupInclude(i int) string { return fmt.Sprintf("%02d", 1+i/360) }

func (s *System) funcRows(row func(fmEntry) map[string]string) []segment {
	named := s.namedFunctions()
	rows := make([]map[string]string, len(named))
	for i, e := range named {
		rows[i] = row(e)
	}
	g := s.gen
	units := g.std / 20 * 4
	if r := g.std % 20; r > 6 {
		units += min(r-6, 4)
	}
	std := segment{units: units, per: 1, field: "FUNCNAME", owner: "sap",
		rows: func(u int) []map[string]string {
			j := u/4*20 + 6 + u%4
			o := g.stdObject(j)
			group, inc := g.stdFuncGroup(j)
			return []map[string]string{row(fmEntry{name: o.name, group: group, include: inc, text: o.description, remote: j%20 < 8})}
		},
		find: func(_, v string) []int {
			j, ok := g.stdIndex("FUNC", v)
			if !ok {
				return nil
			}
			return []int{j/20*4 + j%20 - 6}
		}}
	custom := s.genCustomOfKind(7, "FUNCNAME", func(o *object) []map[string]string {
		return []map[string]string{row(fmEntry{name: o.Name, group: o.Group, include: genFuncGroupInclude(o.genIndex), text: o.Description, remote: true})}
	})
	return []segment{listSegment(rows, "FUNCNAME"), std, custom}
}

func (s *System) tfdirRows() []segment { return s.funcRows(fmEntry.tfdir) }
func (s *System) tftitRows() []segment { return s.funcRows(fmEntry.tftit) }

// includeOf is the include a custom object's code is in, as the where-used tables name it: a
// program its name, a class its method include, a function module L<group>U<nn>.
func (s *System) includeOf(o *object) string {
	switch o.Type {
	case "CLAS":
		return sap.PoolInclude(o.Name, "CM001")
	case "INTF":
		return sap.PoolInclude(o.Name, "IU")
	case "FUNC":
		ns, short := splitNS(o.Group)
		nn := "01"
		if o.generated {
			nn = genFuncGroupInclude(o.genIndex)
		} else {
			for _, e := range s.namedFunctions() {
				if e.name == o.Name {
					nn = e.include
				}
			}
		}
		return ns + "L" + short + "U" + nn
	}
	return o.Name
}

// crossRef is where a reference goes: CROSS (TYPE F, R) or WBCROSSGT (OTYPE TY); ok false: neither.
func (s *System) crossRef(r abapref.Ref) (table, typ string, ok bool) {
	switch {
	case r.Kind == abapref.Call && r.Type == "FUNC":
		return "CROSS", "F", true
	case r.Kind == abapref.Call && r.Type == "PROG":
		return "CROSS", "R", true
	case r.Kind == abapref.Include || r.Kind == abapref.Message || r.Kind == abapref.Authority:
		return "", "", false
	}
	switch s.resolveType(r.Type, r.Name) {
	case "TABL", "CLAS", "INTF", "DTEL", "TTYP", "DDLS", "VIEW", "TYPE", "DOMA":
		return "WBCROSSGT", "TY", true
	}
	return "", "", false
}

// crossRows are one object's rows of CROSS or WBCROSSGT. CDS sources are not in them (a real
// system keeps CDS dependencies elsewhere).
func (s *System) crossRowsOf(o *object, table string) []map[string]string {
	if o.Type == "DDLS" || o.Type == "DDLX" || o.Type == "DCLS" {
		return nil
	}
	inc := s.includeOf(o)
	var out []map[string]string
	seen := map[string]bool{}
	for _, r := range s.refsOf(o) {
		tab, typ, ok := s.crossRef(r)
		if !ok || tab != table || r.Name == o.Name || seen[typ+r.Name] {
			continue
		}
		seen[typ+r.Name] = true
		if table == "CROSS" {
			out = append(out, map[string]string{"TYPE": typ, "NAME": r.Name, "INCLUDE": inc})
		} else {
			out = append(out, map[string]string{"OTYPE": typ, "NAME": r.Name, "INCLUDE": inc, "DIRECT": "X"})
		}
	}
	return out
}

// crossSegments are the where-used rows of the loaded objects, then of the generated ones; an
// equality on NAME looks at the objects that can use the name only.
func (s *System) crossSegments(table string) []segment {
	var named []map[string]string
	for _, k := range s.matKeys {
		named = append(named, s.crossRowsOf(s.objects[k], table)...)
	}
	sort.SliceStable(named, func(a, b int) bool { return named[a]["NAME"] < named[b]["NAME"] })
	g := s.gen
	gen := segment{units: g.custom, field: "NAME",
		rows: func(i int) []map[string]string {
			o, ok := s.genCustom(i, true)
			if !ok {
				return nil
			}
			return s.crossRowsOf(o, table)
		},
		find: func(_, v string) []int {
			from, to, ok := g.users("", v)
			if !ok {
				return nil
			}
			out := make([]int, 0, to-from)
			for i := from; i < to; i++ {
				out = append(out, i)
			}
			return out
		}}
	return []segment{listSegment(named, "NAME"), gen}
}

func (s *System) wbcrossgtRows() []segment { return s.crossSegments("WBCROSSGT") }
func (s *System) crossRows() []segment     { return s.crossSegments("CROSS") }
