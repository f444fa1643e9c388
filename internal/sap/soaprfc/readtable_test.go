package soaprfc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

// bigTable is ZBIG: a 10-character key and a 40-character text with characters that would
// clash with any delimiter ('|', ';', ',' and a tab), n rows.
func bigTable(n int) *fakeTable {
	return &fakeTable{
		Cols: []fakeCol{{Name: "MANDT", Len: 3, Key: true}, {Name: "ID", Len: 10, Key: true, Conv: "ALPHA"}, {Name: "TEXT", Len: 40}},
		Rows: n,
		Value: func(i int, col string) string {
			switch col {
			case "MANDT":
				return "001"
			case "ID":
				return fmt.Sprintf("%010d", i)
			}
			return fmt.Sprintf("row %d|a;b,c\tüñ", i)
		},
	}
}

func TestReadTableFixedWidthFixture(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_READ_TABLE"] = "rfc_read_table_t000.response.xml"
	c := f.client(t)
	var rows []Struct
	info, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "t000", Fields: []string{"mandt", "mtext", "ort01"}}, func(r Struct) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1]["MANDT"] != "001" || rows[1]["MTEXT"] != "Auslieferungsmandant R&D" || rows[1]["ORT01"] != "Kleinstadt" || rows[0]["MTEXT"] != "SAP AG Konzern" {
		t.Errorf("rows %v", rows)
	}
	if len(info.Columns) != 3 || info.Columns[1].Offset != 3 || info.Columns[1].Length != 25 {
		t.Errorf("columns %+v", info.Columns)
	}
	calls := f.callsOf("RFC_READ_TABLE")
	if in := calls[len(calls)-1].In; in.String("DELIMITER") != "" || in.String("QUERY_TABLE") != "T000" || len(in.Table("FIELDS")) != 3 || in.String("ROWCOUNT") != "5000" {
		t.Errorf("request %v %v", in.Exports, in.Tables)
	}
}

// 100,000 rows arrive page by page (ROWSKIPS/ROWCOUNT), every value intact (no delimiter can
// clash), and the heap does not grow with the rows read.
func TestReadTablePaging100kFlatMemory(t *testing.T) {
	const n = 100_000
	f := newFakeSAP(t)
	f.tables["ZBIG"] = bigTable(n)
	c := f.client(t)
	var heapAt10k, heapAt90k uint64
	count := 0
	info, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZBIG", PageSize: 7000}, func(r Struct) error {
		if want := fmt.Sprintf("%010d", count); r["ID"] != want {
			return fmt.Errorf("row %d: ID %q, want %q", count, r["ID"], want)
		}
		if want := fmt.Sprintf("row %d|a;b,c\tüñ", count); r["TEXT"] != want {
			return fmt.Errorf("row %d: TEXT %q, want %q", count, r["TEXT"], want)
		}
		count++
		switch count {
		case 10_000:
			heapAt10k = heapNow()
		case 90_000:
			heapAt90k = heapNow()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != n || info.Rows != n {
		t.Fatalf("read %d rows (info %d), want %d", count, info.Rows, n)
	}
	pages := f.callsOf("RFC_READ_TABLE")[1:] // the first call is the layout (NO_DATA)
	if len(pages) != 15 || pages[1].In.String("ROWSKIPS") != "7000" || pages[14].In.String("ROWSKIPS") != "98000" {
		t.Errorf("%d page calls; second skips %s", len(pages), pages[1].In.String("ROWSKIPS"))
	}
	t.Logf("heap after 10,000 rows %.1f MiB, after 90,000 rows %.1f MiB", float64(heapAt10k)/(1<<20), float64(heapAt90k)/(1<<20))
	// 80,000 retained rows would be > 20 MB; a streaming reader holds one page at most.
	if heapAt90k > heapAt10k+8<<20 {
		t.Errorf("heap grew from %d to %d bytes while reading", heapAt10k, heapAt90k)
	}
}

func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestReadTableRowSkipAndCount(t *testing.T) {
	f := newFakeSAP(t)
	f.tables["ZBIG"] = bigTable(1000)
	c := f.client(t)
	var ids []string
	_, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZBIG", RowSkip: 100, RowCount: 250, PageSize: 100}, func(r Struct) error {
		ids = append(ids, r["ID"])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 250 || ids[0] != "0000000100" || ids[249] != "0000000349" {
		t.Fatalf("got %d rows %v..%v", len(ids), ids[0], ids[len(ids)-1])
	}
	pages := f.callsOf("RFC_READ_TABLE")[1:]
	if len(pages) != 3 || pages[2].In.String("ROWCOUNT") != "50" {
		t.Errorf("pages %d, last ROWCOUNT %s", len(pages), pages[len(pages)-1].In.String("ROWCOUNT"))
	}
}

// A field list wider than 512 characters: DATA_BUFFER_EXCEEDED, then chunks that each carry
// the key (from DDIF_FIELDINFO_GET) and fit 512, joined on the key.
func TestReadTableSplitsWideFieldListOnKey(t *testing.T) {
	f := newFakeSAP(t)
	wide := &fakeTable{
		Cols: []fakeCol{{Name: "MANDT", Len: 3, Key: true}, {Name: "ID", Len: 10, Key: true},
			{Name: "F1", Len: 200}, {Name: "F2", Len: 200}, {Name: "F3", Len: 200}, {Name: "F4", Len: 120}, {Name: "F5", Len: 60}},
		Rows: 2500,
		Value: func(i int, col string) string {
			switch col {
			case "MANDT":
				return "001"
			case "ID":
				return fmt.Sprintf("%010d", i)
			}
			return fmt.Sprintf("%s-%d", strings.ToLower(col), i)
		},
	}
	f.tables["ZWIDE"] = wide
	c := f.client(t)
	count := 0
	info, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZWIDE", PageSize: 1000}, func(r Struct) error {
		for _, col := range []string{"F1", "F2", "F3", "F4", "F5"} {
			if want := fmt.Sprintf("%s-%d", strings.ToLower(col), count); r[col] != want {
				return fmt.Errorf("row %d %s = %q, want %q", count, col, r[col], want)
			}
		}
		if r["ID"] != fmt.Sprintf("%010d", count) {
			return fmt.Errorf("row %d ID %q", count, r["ID"])
		}
		count++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != 2500 || info.Chunks != 2 {
		t.Fatalf("rows %d chunks %d", count, info.Chunks)
	}
	if len(info.Columns) != 7 {
		t.Errorf("columns %+v", info.Columns)
	}
	if len(f.callsOf("DDIF_FIELDINFO_GET")) != 1 {
		t.Error("the key was not read from DDIF_FIELDINFO_GET")
	}
	for _, call := range f.callsOf("RFC_READ_TABLE")[1:] {
		width, names := 0, map[string]bool{}
		for _, fl := range call.In.Table("FIELDS") {
			names[fl["FIELDNAME"]] = true
			for _, col := range wide.Cols {
				if col.Name == fl["FIELDNAME"] {
					width += col.Len
				}
			}
		}
		if width > MaxRowWidth || !names["MANDT"] || !names["ID"] {
			t.Errorf("chunk %v: width %d, key present %v", names, width, names["MANDT"] && names["ID"])
		}
	}
}

func TestReadTableKeysUseALPHA(t *testing.T) {
	f := newFakeSAP(t)
	f.tables["ZBIG"] = bigTable(10)
	c := f.client(t)
	_, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{
		Table: "ZBIG", Keys: map[string]string{"id": "4711", "MANDT": "001"}, Where: "TEXT LIKE 'row%'",
	}, func(Struct) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	calls := f.callsOf("RFC_READ_TABLE")
	var opt []string
	for _, o := range calls[len(calls)-1].In.Table("OPTIONS") {
		opt = append(opt, o["TEXT"])
	}
	if got := strings.Join(opt, ""); got != "MANDT = '001' AND ID = '0000004711' AND ( TEXT LIKE 'row%' )" {
		t.Errorf("OPTIONS %q", got)
	}
}

func TestReadTableErrors(t *testing.T) {
	f := newFakeSAP(t)
	c := f.client(t)
	_, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZNOPE"}, func(Struct) error { return nil })
	checkErr(t, err, sap.ErrNotFound, "TABLE_NOT_AVAILABLE", nil)
	_, err = c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "T000", Where: "MTEXT = 'open"}, func(Struct) error { return nil })
	checkErr(t, err, sap.ErrInvalidWhereOptions, "OPTION_NOT_VALID", nil)
	if len(f.allCalls()) != 1 {
		t.Errorf("a malformed WHERE reached SAP")
	}
	_, err = c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "T000; DROP"}, func(Struct) error { return nil })
	checkErr(t, err, sap.ErrBadRequest, "", nil)
}

// BenchmarkReadTable100k reads 100,000 rows of ZBIG in pages of 5,000 over HTTP.
func BenchmarkReadTable100k(b *testing.B) {
	const n = 100_000
	f := newFakeSAP(b)
	f.tables["ZBIG"] = bigTable(n)
	c := f.client(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows := 0
		if _, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZBIG"}, func(Struct) error { rows++; return nil }); err != nil {
			b.Fatal(err)
		}
		if rows != n {
			b.Fatalf("%d rows", rows)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadTable100kBaseline fetches the same pages from the same fake system and discards
// the bytes: what the fake and HTTP cost without any SOAP parsing (the client's baseline).
func BenchmarkReadTable100kBaseline(b *testing.B) {
	const n, page = 100_000, DefaultPageSize
	f := newFakeSAP(b)
	f.tables["ZBIG"] = bigTable(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for skip := 0; skip < n; skip += page {
			env, _ := Envelope("RFC_READ_TABLE", readParams("ZBIG", []string{"MANDT", "ID", "TEXT"}, nil, skip, page, false))
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/sap/bc/soap/rfc", bytes.NewReader(env))
			req.SetBasicAuth(testUser, testPassword)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// A small read (a look-up by key) is one call, cut by the FIELDS of its own answer.
func TestReadTableSmallIsOneCall(t *testing.T) {
	f := newFakeSAP(t)
	f.files["RFC_READ_TABLE"] = "rfc_read_table_t000.response.xml"
	c := f.client(t)
	var rows []Struct
	info, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "T000", Fields: []string{"MANDT", "MTEXT", "ORT01"}, Where: "MANDT IN ( '000', '001' )", Small: true},
		func(r Struct) error { rows = append(rows, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1]["MTEXT"] != "Auslieferungsmandant R&D" || rows[1]["ORT01"] != "Kleinstadt" {
		t.Errorf("rows %v", rows)
	}
	calls := f.callsOf("RFC_READ_TABLE")
	if len(calls) != 1 || info.Calls != 1 || calls[0].In.String("NO_DATA") != "" {
		t.Fatalf("%d calls (info %d), want one with data", len(calls), info.Calls)
	}
}

// A small read too wide for one line falls back to the split field list.
func TestReadTableSmallTooWideSplits(t *testing.T) {
	f := newFakeSAP(t)
	f.tables["ZWIDE"] = &fakeTable{
		Cols: []fakeCol{{Name: "MANDT", Len: 3, Key: true}, {Name: "ID", Len: 10, Key: true}, {Name: "F1", Len: 300}, {Name: "F2", Len: 300}},
		Rows: 3,
		Value: func(i int, col string) string {
			if col == "MANDT" {
				return "001"
			}
			return fmt.Sprintf("%s-%d", strings.ToLower(col), i)
		},
	}
	c := f.client(t)
	var rows []Struct
	info, err := c.ReadTable(context.Background(), testCred, ReadTableRequest{Table: "ZWIDE", Small: true},
		func(r Struct) error { rows = append(rows, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[2]["F1"] != "f1-2" || rows[2]["F2"] != "f2-2" || info.Chunks != 2 {
		t.Fatalf("rows %v, chunks %d", rows, info.Chunks)
	}
}
