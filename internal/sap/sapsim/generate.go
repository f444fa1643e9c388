package sapsim

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/abapref"
)

// The generated landscape (Options.GeneratedObjects = n) adds n standard objects and n/20
// custom objects to a system. Every object is a pure function of its index, so nothing of
// size n is ever held in memory: a page of the index derives its objects as it goes.
//
// Standard objects come in blocks of 20 (one application area per block, slot = index % 20):
//
//	0-5, 19 TABL   6-7 FUNC BAPI_*   8-9 FUNC   10-12 CLAS   13 INTF   14-15 DDLS   16 PROG   17 DTEL   18 DOMA
//
// Custom object i uses the standard objects of block i (and a few real SAP objects such as
// BSEG or BAPI_ACC_DOCUMENT_POST), and custom objects of its own decade (i-i%10 .. i-i%10+9):
// its kind is i%10 (0-3 PROG, 4-6 CLAS, 7 FUNC, 8 DDLS, 9 TABL).
type generator struct {
	std, custom int

	mu         sync.Mutex
	counts     map[int]int // relationship count per source shape (see shape)
	relSum     int         // relationships of all generated objects, once counted
	relSumDone bool
}

func newGenerator(n int) *generator {
	if n <= 0 {
		return &generator{counts: map[int]int{}}
	}
	return &generator{std: n, custom: n / 20, counts: map[int]int{}}
}

// area is an application area of generated objects.
type area struct {
	code, component, pkg, name, tabPrefix, bo string
	nouns                                     [6]string
}

var areas = []area{
	{"FI", "FI-GL", "FINS_FIS_GL", "General Ledger", "FAGL", "ACC_DOCUMENT", [6]string{"SPLIT", "LEDGER", "BALANC", "ITEM", "CLEAR", "PERIOD"}},
	{"AP", "FI-AP", "FINS_FIS_AP", "Accounts Payable", "BSIK", "VENDOR", [6]string{"INVOIC", "PAYMNT", "DUNN", "OPEN", "WHTAX", "BANK"}},
	{"AR", "FI-AR", "FINS_FIS_AR", "Accounts Receivable", "BSID", "CUSTOMER", [6]string{"CREDIT", "DUNNIN", "OPEN", "CLEAR", "LOCKBX", "DISPUT"}},
	{"CO", "CO-OM", "FINS_CO_OM", "Overhead Cost Controlling", "COEP", "COSTCENTER", [6]string{"COSTS", "ALLOC", "ORDER", "PLAN", "ACTVTY", "SETTLE"}},
	{"MM", "MM-PUR", "MM_PUR_PO", "Purchasing", "EKPO", "PO", [6]string{"SCHED", "HIST", "COND", "RELEAS", "CONTRC", "SOURCE"}},
	{"IM", "MM-IM", "MM_IM_GM", "Inventory Management", "MSEG", "GOODSMVT", [6]string{"STOCK", "RESERV", "BATCH", "PHYINV", "SERIAL", "VALUAT"}},
	{"SD", "SD-SLS", "SD_SLS_SO", "Sales", "VBAP", "SALESORDER", [6]string{"PRICE", "SCHED", "PARTNR", "STATUS", "BILLNG", "CREDIT"}},
	{"LE", "LE-SHP", "LE_SHP_DL", "Shipping", "LIPS", "DELIVERY", [6]string{"PICK", "PACK", "ROUTE", "HANDLG", "GOODSI", "TRANSP"}},
	{"PP", "PP-SFC", "PP_SFC_ORD", "Production Orders", "AFKO", "PRODORD", [6]string{"OPERAT", "CONFRM", "COMPON", "ROUTNG", "CAPAC", "SCRAP"}},
	{"QM", "QM-IM", "QM_IM_LOT", "Quality Inspection", "QALS", "INSPLOT", [6]string{"RESULT", "DEFECT", "SAMPLE", "USAGE", "CHARAC", "NOTIF"}},
	{"PM", "PM-WOC", "EAM_WOC", "Maintenance Orders", "AUFK", "ALM_ORDER", [6]string{"EQUIPM", "FUNCLO", "NOTIF", "MEASUR", "PLAN", "TASK"}},
	{"HR", "PA-PA", "PAOC_PA", "Personnel Administration", "PA00", "EMPLOYEE", [6]string{"INFOTY", "ORGASS", "PAYROL", "ABSENC", "TIME", "BENEF"}},
}

var (
	stdTypeWords = map[string]string{"TABL": "table", "FUNC": "function module", "CLAS": "class", "INTF": "interface",
		"DDLS": "CDS view", "PROG": "report", "DTEL": "data element", "DOMA": "domain"}
	customTypeWords = map[string]string{"PROG": "Report", "CLAS": "Service", "FUNC": "Function", "DDLS": "View", "TABL": "Table"}
)

var bapiVerbs = [...]string{"GETDETAIL", "GETLIST", "CREATE", "CHANGE", "POST", "CHECK"}
var funcVerbs = [...]string{"READ", "SAVE", "DETERMINE", "CHECK", "UPDATE", "BUILD"}

// Real SAP objects generated custom code uses besides its block (i % len picks one).
var (
	genReads   = [...]string{"BKPF", "BSEG", "KNA1", "MARA", "VBAK", "VBAP", "EKKO", "LFA1", "MSEG", "T001", "ACDOCA", "MAKT", "KONV"}
	genCalls   = [...]string{"BAPI_ACC_DOCUMENT_POST", "BAPI_TRANSACTION_COMMIT", "BAPI_SALESORDER_GETLIST", "BAPI_PO_CREATE1", "BAPI_MATERIAL_SAVEDATA", "POPUP_TO_CONFIRM", "GUI_UPLOAD", "RFC_READ_TABLE", "BAPI_CUSTOMER_GETDETAIL2"}
	genClasses = [...]string{"CL_ABAP_CONTEXT_INFO", "CL_SALV_TABLE", "CL_GUI_FRONTEND_SERVICES", "CL_BCS", "CL_ABAP_CHAR_UTILITIES"}
)

// genWellKnown are the real SAP objects generated code may reference (for where-used).
var genWellKnown = func() map[string]string {
	m := map[string]string{"CX_STATIC_CHECK": "CLAS"}
	for _, n := range genReads {
		m[n] = "TABL"
	}
	for _, n := range genCalls {
		m[n] = "FUNC"
	}
	for _, n := range genClasses {
		m[n] = "CLAS"
	}
	return m
}()

// suffix is the base-36 index every generated name ends with ("_0A1K"): it makes names unique
// and lets a name be parsed back to its index.
func suffix(i int) string {
	s := strings.ToUpper(strconv.FormatInt(int64(i), 36))
	if len(s) < 4 {
		s = strings.Repeat("0", 4-len(s)) + s
	}
	return s
}

func parseSuffix(name string) (int, bool) {
	k := strings.LastIndexByte(name, '_')
	if k < 0 || len(name)-k-1 < 4 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[k+1:], 36, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, false
	}
	return int(n), true
}

// stdObject is one generated standard object.
type stdObject struct {
	typ, name, description, pkg, component, state, successor string
}

func (g *generator) stdType(j int) string {
	switch slot := j % 20; {
	case slot <= 5 || slot == 19:
		return "TABL"
	case slot <= 9:
		return "FUNC"
	case slot <= 12:
		return "CLAS"
	case slot == 13:
		return "INTF"
	case slot <= 15:
		return "DDLS"
	case slot == 16:
		return "PROG"
	case slot == 17:
		return "DTEL"
	}
	return "DOMA"
}

func (g *generator) stdName(j int) string {
	a := &areas[(j/20)%len(areas)]
	slot, sfx := j%20, suffix(j)
	noun := a.nouns[(j/20/len(areas)+slot)%6]
	switch {
	case slot <= 5 || slot == 19:
		return a.tabPrefix + "_" + noun + "_" + sfx
	case slot <= 7:
		return "BAPI_" + a.bo + "_" + bapiVerbs[(j/20+slot)%6] + "_" + sfx
	case slot <= 9:
		return a.code + "_" + noun + "_" + funcVerbs[(j/20+slot)%6] + "_" + sfx
	case slot <= 12:
		return "CL_" + a.code + "_" + noun + [...]string{"_API", "_DAO", "_UTIL"}[slot-10] + "_" + sfx
	case slot == 13:
		return "IF_" + a.code + "_" + noun + "_" + sfx
	case slot <= 15:
		return "I_" + a.code + noun + [...]string{"ITEM", "TEXT"}[slot-14] + "_" + sfx
	case slot == 16:
		return "R" + a.code + "_" + noun + "_" + sfx
	case slot == 17:
		return a.code + "_" + noun + "_" + sfx
	}
	return "D" + a.code + "_" + noun + "_" + sfx
}

// std derives standard object j: release states are a deterministic mix, with slots 10 (CLAS)
// and 14 (DDLS) always released so they can be the successors of their block.
func (g *generator) stdObject(j int) stdObject {
	a := &areas[(j/20)%len(areas)]
	typ := g.stdType(j)
	o := stdObject{typ: typ, name: g.stdName(j), pkg: a.pkg, component: a.component}
	noun := strings.ToLower(a.nouns[(j/20/len(areas)+j%20)%6])
	o.description = a.name + ": " + noun + " " + stdTypeWords[typ]
	h := (j*2654435761 + 17) % 20 // a fixed scramble of the index
	if h < 0 {
		h = -h
	}
	slot := j % 20
	switch {
	case slot == 10 || slot == 14:
		o.state = "released"
	case slot == 6 || slot == 7: // BAPIs: mostly classic APIs
		o.state = "classicAPI"
		if h >= 16 {
			o.state = "noAPI"
		}
	case h < 5:
		o.state = "released"
	case h < 9:
		o.state = "classicAPI"
	case h < 15:
		o.state = "notToBeReleased"
	case h < 17:
		o.state = "noAPI"
	case h < 19:
		o.state = "deprecated"
	default:
		o.state = "released"
	}
	if o.state == "notToBeReleased" || o.state == "deprecated" {
		base := j - slot
		switch typ {
		case "TABL", "DDLS":
			o.successor = g.stdName(base + 14)
		case "FUNC", "CLAS", "INTF", "PROG":
			o.successor = g.stdName(base + 10)
		}
	}
	return o
}

// stdIndex parses a generated standard object's name back to its index.
func (g *generator) stdIndex(typ, name string) (int, bool) {
	j, ok := parseSuffix(name)
	if !ok || j >= g.std || g.stdName(j) != name || (typ != "" && typ != "TYPE" && g.stdType(j) != typ) {
		return 0, false
	}
	return j, true
}

func (g *generator) customType(i int) string {
	return [...]string{"PROG", "PROG", "PROG", "PROG", "CLAS", "CLAS", "CLAS", "FUNC", "DDLS", "TABL"}[i%10]
}

func (g *generator) customName(i int) string {
	a := &areas[i%len(areas)]
	noun := a.nouns[(i/len(areas))%6]
	sfx := suffix(i)
	var n string
	switch i % 10 {
	case 0, 1, 2, 3:
		n = "ZR_" + a.code + "_" + noun + "_" + sfx
	case 4, 5, 6:
		n = "ZCL_" + a.code + "_" + noun + "_" + sfx
	case 7:
		n = "Z_" + a.code + "_" + noun + "_" + sfx
	case 8:
		n = "ZI_" + a.code + noun + "_" + sfx
	default:
		n = "Z" + a.code + "_" + noun + "_" + sfx
	}
	if i%7 == 3 {
		n = "Y" + n[1:]
	}
	return n
}

// customIndex parses a generated custom object's name back to its index.
func (g *generator) customIndex(typ, name string) (int, bool) {
	i, ok := parseSuffix(name)
	if !ok || i >= g.custom || g.customName(i) != name || (typ != "" && g.customType(i) != typ) {
		return 0, false
	}
	return i, true
}

// customTable is the custom table of i's decade, if the landscape has it.
func (g *generator) customTable(i int) (string, bool) {
	t := i - i%10 + 9
	if t >= g.custom || t == i {
		return "", false
	}
	return g.customName(t), true
}

// shape says which optional statements custom object i's source has: the relationship count
// depends only on it, so totals are counted without building every source.
func (g *generator) shape(i int) int {
	s := i % 10
	if _, ok := g.customTable(i); ok {
		s |= 1 << 4
	}
	if k := i % 10; (k >= 1 && k <= 3) || k == 5 || k == 6 {
		s |= 1 << 5 // uses i-1
	}
	if i%10 == 0 && i+7 < g.custom {
		s |= 1 << 6 // calls the function module i+7
	}
	return s
}

// customObject derives generated custom object i at a version (0: as generated; TouchCustomObjects
// raises it). Its refs are what abapref extracts from its source, as for any other object.
func (g *generator) customObject(i, version int, withSource bool) *object {
	a := &areas[i%len(areas)]
	typ := g.customType(i)
	name := g.customName(i)
	pkgs := [...]string{"REPORTS", "TOOLS", "MIGRATION", "INTERFACES"}
	o := &object{Type: typ, Name: name, Package: "Z" + a.code + "_" + pkgs[(i/10)%4], CreatedBy: [...]string{"JSMITH", "MMUELLER", "ABECKER", "LROSSI", "PDUBOIS", "KTANAKA"}[i%6],
		ChangedAt: fmt.Sprintf("20%02d-%02d-%02d", 12+i%13, 1+i%12, 1+i%28), generated: true, genIndex: i, version: version}
	noun := strings.ToLower(a.nouns[(i/len(areas))%6])
	o.Description = customTypeWords[typ] + " " + noun + " (" + a.name + ")"
	if version > 0 {
		o.Description += fmt.Sprintf(", v%d", version)
	}
	if typ == "FUNC" {
		o.Group = "Z" + a.code + "_" + strings.ToUpper(noun)
	}
	if typ != "TABL" && withSource {
		o.Source = g.source(i, version, o)
	}
	return o
}

func (g *generator) source(i, version int, o *object) string {
	b := 20 * i
	t := func(k int) string { return strings.ToLower(g.stdName(b + k)) }
	lower := strings.ToLower(o.Name)
	ztab, hasZtab := g.customTable(i)
	ztab = strings.ToLower(ztab)
	sh := g.shape(i)
	var w strings.Builder
	w.Grow(1536)
	line := func(format string, args ...any) { writeLine(&w, format, args) }
	switch o.Type {
	case "PROG":
		line("REPORT %s.", lower)
		line("*----------------------------------------------------------------------*")
		line("* %s", o.Description)
		line("* Version %d. Reads %s directly (SELECT * FROM in a comment is no use).", version, strings.ToUpper(t(0)))
		line("*----------------------------------------------------------------------*")
		line("PARAMETERS p_key TYPE %s OBLIGATORY.", t(17))
		line("DATA gt_log TYPE STANDARD TABLE OF string.")
		line("")
		line("START-OF-SELECTION.")
		line("  SELECT a~*, b~*")
		line("    FROM %s AS a", t(0))
		line("    INNER JOIN %s AS b ON b~mandt = a~mandt", t(1))
		line("    WHERE a~mandt = @sy-mandt")
		line("    INTO TABLE @DATA(gt_rows).")
		line("  SELECT SINGLE * FROM %s INTO @DATA(ls_ref) WHERE mandt = @sy-mandt. \" cross-check", strings.ToLower(genReads[i%len(genReads)]))
		line("  APPEND |Read { lines( gt_rows ) } rows; see 'CALL FUNCTION' in the log| TO gt_log.")
		line("  CALL FUNCTION '%s'", strings.ToUpper(t(6)))
		line("    EXPORTING")
		line("      key    = p_key")
		line("    TABLES")
		line("      return = gt_log.")
		line("  CALL FUNCTION '%s'.", genCalls[i%len(genCalls)])
		if hasZtab {
			line("  UPDATE %s SET changed_on = @sy-datum WHERE mandt = @sy-mandt.", ztab)
		}
		if sh&(1<<6) != 0 {
			line("  CALL FUNCTION '%s' EXPORTING iv_key = p_key.", g.customName(i+7))
		}
		line("  SUBMIT %s AND RETURN.", t(16))
		if sh&(1<<5) != 0 {
			line("  SUBMIT %s WITH p_key = p_key AND RETURN.", strings.ToLower(g.customName(i-1)))
		}
		line("  %s=>%s( ).", strings.ToLower(genClasses[i%len(genClasses)]), "get_instance")
	case "CLAS":
		line("CLASS %s DEFINITION PUBLIC FINAL CREATE PUBLIC.", lower)
		line("  PUBLIC SECTION.")
		line("    INTERFACES %s.", t(13))
		line("    METHODS run")
		line("      IMPORTING iv_key TYPE %s", t(17))
		line("      RAISING   cx_static_check.")
		line("ENDCLASS.")
		line("")
		line("CLASS %s IMPLEMENTATION.", lower)
		line("  METHOD run.")
		line("    \" %s, version %d", o.Description, version)
		line("    DATA lo_api TYPE REF TO %s.", t(10))
		line("    lo_api = NEW %s( ).", t(11))
		line("    SELECT * FROM %s WHERE mandt = @sy-mandt INTO TABLE @DATA(lt_items).", t(14))
		line("    DATA(lv_info) = %s=>get_system_date( ).", strings.ToLower(genClasses[i%len(genClasses)]))
		if hasZtab {
			line("    DATA ls_row TYPE %s.", ztab)
			line("    ls_row-mandt = sy-mandt.")
			line("    INSERT %s FROM @ls_row.", ztab)
		}
		if sh&(1<<5) != 0 {
			line("    CALL METHOD %s=>run_static.", strings.ToLower(g.customName(i-1)))
		}
		line("  ENDMETHOD.")
		line("")
		line("  METHOD %s~execute.", t(13))
		line("    CALL FUNCTION '%s'.", strings.ToUpper(t(7)))
		line("  ENDMETHOD.")
		line("ENDCLASS.")
	case "FUNC":
		line("FUNCTION %s.", lower)
		line("*\"----------------------------------------------------------------------")
		line("*\"*\"Local Interface:")
		line("*\"  IMPORTING")
		line("*\"     VALUE(IV_KEY) TYPE  %s", strings.ToUpper(t(17)))
		line("*\"----------------------------------------------------------------------")
		line("  \" %s, version %d", o.Description, version)
		line("  SELECT * FROM %s INTO TABLE @DATA(lt_rows) WHERE mandt = @sy-mandt.", t(2))
		line("  CALL FUNCTION '%s' EXPORTING iv_key = iv_key.", strings.ToUpper(t(8)))
		if hasZtab {
			line("  DELETE FROM %s WHERE mandt = @sy-mandt.", ztab)
		}
		line("  MODIFY %s FROM TABLE @lt_rows.", t(3))
		line("ENDFUNCTION.")
	case "DDLS":
		line("@AbapCatalog.viewEnhancementCategory: [#NONE]")
		line("@AccessControl.authorizationCheck: #CHECK")
		line("@EndUserText.label: '%s'", o.Description)
		line("// version %d", version)
		line("define view entity %s", o.Name)
		line("  as select from %s as a", t(0))
		if hasZtab {
			line("    left outer join %s as z on z.mandt = a.mandt", ztab)
		}
		line("  association [0..1] to %s as _Item on _Item.mandt = a.mandt", strings.ToUpper(t(14)))
		line("{")
		line("  key a.mandt as Client,")
		line("      _Item")
		line("}")
	}
	return w.String()
}

// relCount is the number of references of custom object i, from one extraction per shape.
func (g *generator) relCount(i int) int {
	if g.customType(i) == "TABL" {
		return 0
	}
	sh := g.shape(i)
	g.mu.Lock()
	n, ok := g.counts[sh]
	g.mu.Unlock()
	if ok {
		return n
	}
	o := g.customObject(i, 0, true)
	n = len(abapref.Extract(o.Type, o.Source))
	g.mu.Lock()
	g.counts[sh] = n
	g.mu.Unlock()
	return n
}

// users says whether generated custom objects can reference name at all, and which of them:
// the candidate index range [from, to) (the full range for real SAP objects).
func (g *generator) users(typ, name string) (from, to int, ok bool) {
	if g.custom == 0 {
		return 0, 0, false
	}
	if j, ok := g.stdIndex(typ, name); ok {
		if i := j / 20; i < g.custom {
			return i, i + 1, true
		}
		return 0, 0, false
	}
	if i, ok := g.customIndex("", name); ok {
		d := i - i%10
		return d, min(d+10, g.custom), true
	}
	if _, ok := genWellKnown[name]; ok {
		return 0, g.custom, true
	}
	return 0, 0, false
}

// writeLine is fmt.Fprintf for the %s and %d verbs only: a page renders a thousand sources,
// and fmt's generality is most of that cost.
func writeLine(w *strings.Builder, format string, args []any) {
	k := 0
	for {
		i := strings.IndexByte(format, '%')
		if i < 0 || i+1 >= len(format) || k >= len(args) {
			break
		}
		w.WriteString(format[:i])
		switch v := args[k].(type) {
		case string:
			w.WriteString(v)
		case int:
			w.WriteString(strconv.Itoa(v))
		}
		k++
		format = format[i+2:]
	}
	w.WriteString(format)
	w.WriteByte('\n')
}
