package sapsim

import (
	"strings"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

func readSys(t *testing.T, s *System, table, where string, skip, count int, fields ...string) [][]string {
	t.Helper()
	req := sap.ReadTableRequest{Table: table, RowSkip: skip, RowCount: count, Fields: fields}
	if where != "" {
		req.Options = []string{where}
	}
	res, err := s.readTable(user{name: "DEVELOPER"}, req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows
}

func TestSystemTablesPageInConstantWork(t *testing.T) {
	l := NewLandscape(Options{GeneratedObjects: 100000})
	s, _ := l.System("ECC")
	s.init()
	schema, err := s.tableSchema("TADIR")
	if err != nil {
		t.Fatal(err)
	}
	// 18 entries per block of 20 standard objects, the custom objects less 9 in 10 function
	// modules beyond the first 360 (their groups are listed once), plus the named part.
	if schema.RowCount < 90000+5000-450 || schema.RowCount > 90000+5000+1000 {
		t.Fatalf("TADIR has %d rows", schema.RowCount)
	}
	before := virtualRowsBuilt.Load()
	rows := readSys(t, s, "TADIR", "", schema.RowCount-150, 100, "OBJECT", "OBJ_NAME", "DEVCLASS")
	if built := virtualRowsBuilt.Load() - before; len(rows) != 100 || built > 200 {
		t.Fatalf("a deep page returned %d rows and built %d", len(rows), built)
	}
	last := readSys(t, s, "TADIR", "", schema.RowCount-1, 10, "OBJECT", "OBJ_NAME")
	if len(last) != 1 || last[0][0] != "FUGR" {
		t.Fatalf("last row: %v", last)
	}
	// An equality on the object name is looked up, not scanned.
	name := s.gen.stdName(20*4711 + 3)
	before = virtualRowsBuilt.Load()
	rows = readSys(t, s, "TADIR", "OBJ_NAME = '"+name+"'", 0, 0, "OBJECT", "OBJ_NAME", "DEVCLASS")
	if built := virtualRowsBuilt.Load() - before; len(rows) != 1 || rows[0][0] != "TABL" || built > 100 {
		t.Fatalf("lookup of %s: %v (built %d)", name, rows, built)
	}
	// A WHERE that admits only customer names skips the generated standard objects unread.
	before = virtualRowsBuilt.Load()
	rows = readSys(t, s, "TADIR", "PGMID = 'R3TR' AND ( OBJ_NAME LIKE 'Z%' OR OBJ_NAME LIKE 'Y%' OR DEVCLASS LIKE '$%' )", 0, 100, "OBJ_NAME")
	if built := virtualRowsBuilt.Load() - before; len(rows) != 100 || built > 5000 {
		t.Fatalf("customer objects: %d rows, built %d", len(rows), built)
	}
	// A function module's include and a class pool are looked up, not scanned.
	fmObj, cls := s.gen.customObject(367, 0, false), s.gen.customObject(14, 0, false)
	before = virtualRowsBuilt.Load()
	rows = readSys(t, s, "REPOSRC", "PROGNAME IN ( '"+s.includeOf(fmObj)+"', '"+sap.PoolInclude(cls.Name, "CP")+"' )", 0, 0, "PROGNAME", "SUBC")
	if built := virtualRowsBuilt.Load() - before; len(rows) != 2 || built > 2 {
		t.Fatalf("REPOSRC look-up: %v, built %d", rows, built)
	}
	fm := s.gen.stdName(20*77 + 7)
	rows = readSys(t, s, "TFDIR", "FUNCNAME = '"+fm+"'", 0, 0)
	grp, _ := s.gen.stdFuncGroup(20*77 + 7)
	if len(rows) != 1 || rows[0][1] != "SAPL"+grp || rows[0][2] != "02" {
		t.Fatalf("TFDIR %s: %v", fm, rows)
	}
	rows = readSys(t, s, "TADIR", "OBJECT = 'FUGR' AND OBJ_NAME = '"+grp+"'", 0, 0, "OBJ_NAME")
	if len(rows) != 1 {
		t.Fatalf("TADIR FUGR %s: %v", grp, rows)
	}
}

func TestSystemTablesFollowTheObjectStore(t *testing.T) {
	l := NewLandscape(Options{})
	s, _ := l.System("ECC")
	s.init()
	rows := readSys(t, s, "TADIR", "PGMID = 'R3TR' AND ( OBJ_NAME LIKE 'Z%' OR OBJ_NAME LIKE 'Y%' )", 0, 0, "OBJECT", "OBJ_NAME", "DEVCLASS", "AUTHOR")
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]+"/"+r[1]] = r[2]
	}
	if got["PROG/ZR_SALES_REPORT"] != "ZSD_REPORTS" || got["FUGR/ZFG_PRICING"] != "ZSD_PRICING" || got["PROG/ZXVVAU04"] == "" || got["ENHO/ZEI_SD_SALES_CHECK"] == "" {
		t.Fatalf("custom TADIR: %v", got)
	}
	if _, ok := got["FUNC/Z_CALC_BONUS"]; ok {
		t.Fatal("function modules are not TADIR objects")
	}
	if rows := readSys(t, s, "DD02L", "TABCLASS = 'APPEND' AND SQLTAB = 'KNA1'", 0, 0, "TABNAME"); len(rows) != 1 || rows[0][0] != "ZAKNA1" {
		t.Fatalf("append of KNA1: %v", rows)
	}
	if rows := readSys(t, s, "WBCROSSGT", "NAME = 'KNA1'", 0, 0, "INCLUDE"); len(rows) == 0 {
		t.Fatal("no WBCROSSGT row for KNA1")
	}
	if rows := readSys(t, s, "CROSS", "TYPE = 'F' AND NAME = 'Z_CALC_BONUS'", 0, 0, "INCLUDE"); len(rows) != 0 {
		t.Logf("Z_CALC_BONUS users: %v", rows)
	}
	// A transported deletion is an E071 entry with OBJFUNC D; REPOSRC has the change's time.
	if err := s.DeleteObject("PROG", "ZR_STOCK_REPORT"); err != nil {
		t.Fatal(err)
	}
	if err := s.ActivateObject("PROG", "ZR_NEW_ONE", "New report", "ZSD_REPORTS", "REPORT zr_new_one.\nSELECT * FROM kna1 INTO TABLE @DATA(x).\n"); err != nil {
		t.Fatal(err)
	}
	seq := s.Info().ChangeSeq
	nr := s.transportNumber(seq - 1)
	rows = readSys(t, s, "E071", "TRKORR = '"+nr+"'", 0, 0, "OBJECT", "OBJ_NAME", "OBJFUNC")
	if len(rows) != 1 || rows[0][1] != "ZR_STOCK_REPORT" || rows[0][2] != "D" {
		t.Fatalf("E071 of %s: %v", nr, rows)
	}
	rows = readSys(t, s, "REPOSRC", "PROGNAME = 'ZR_NEW_ONE'", 0, 0, "UNAM", "UDAT", "UTIME")
	if len(rows) != 1 || rows[0][0] != "DEVELOPER" || len(rows[0][1]) != 8 || len(rows[0][2]) != 6 {
		t.Fatalf("REPOSRC: %v", rows)
	}
	if rows := readSys(t, s, "TADIR", "OBJ_NAME = 'ZR_STOCK_REPORT'", 0, 0); len(rows) != 0 {
		t.Fatalf("deleted object still in TADIR: %v", rows)
	}
	// $TMP objects are not transported.
	if err := s.ActivateObject("PROG", "ZR_LOCAL", "Local", "$TMP", "REPORT zr_local.\n"); err != nil {
		t.Fatal(err)
	}
	if rows := readSys(t, s, "E070", "TRKORR = '"+s.transportNumber(s.Info().ChangeSeq)+"'", 0, 0); len(rows) != 0 {
		t.Fatalf("a $TMP change has a request: %v", rows)
	}
	if _, err := s.writeTable(user{name: "DEVELOPER"}, sap.WriteTableRequest{Table: "TADIR", Mode: "insert", Rows: []map[string]string{{"OBJ_NAME": "X"}}}); err == nil ||
		!strings.Contains(err.Error(), "system table") {
		t.Fatalf("write to TADIR: %v", err)
	}
}

func TestSystemTablesDescribedByFieldInfo(t *testing.T) {
	l := NewLandscape(Options{})
	s, _ := l.System("S4H")
	s.init()
	for table, want := range map[string]map[string]int{"TADIR": {"OBJ_NAME": 40, "OBJECT": 4, "DEVCLASS": 30}, "E071": {"OBJ_NAME": 120, "TRKORR": 20},
		"DD03L": {"POSITION": 4, "ROLLNAME": 30}, "REPOSRC": {"PROGNAME": 40}, "CVERS": {"COMPONENT": 30}} {
		schema, err := s.tableSchema(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range schema.Fields {
			if n, ok := want[f.Name]; ok && f.Length != n {
				t.Errorf("%s-%s is %d long, want %d", table, f.Name, f.Length, n)
			}
			delete(want, f.Name)
		}
		if len(want) > 0 {
			t.Errorf("%s lacks %v", table, want)
		}
	}
	rows := readSys(t, s, "CVERS", "COMPONENT = 'S4CORE'", 0, 0, "RELEASE")
	if len(rows) != 1 || rows[0][0] != "108" {
		t.Fatalf("CVERS: %v", rows)
	}
}
