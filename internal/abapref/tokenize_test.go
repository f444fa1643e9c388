package abapref

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func stmtText(st []token) string {
	var b strings.Builder
	for i, t := range st {
		if i > 0 {
			b.WriteByte(' ')
		}
		if t.kind == tString {
			b.WriteString("'" + t.text + "'")
		} else {
			b.WriteString(t.text)
		}
	}
	return b.String()
}

func TestStatements(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"DATA: a TYPE i, b TYPE vbak-vbeln.", []string{"DATA A TYPE I", "DATA B TYPE VBAK-VBELN"}},
		{"WRITE: / 'x, y', lv. CLEAR lv.", []string{"WRITE / 'x, y'", "WRITE LV", "CLEAR LV"}},
		{"x = meth( a = 1, b = 2 ).", []string{"X = METH ( A = 1 , B = 2 )"}},
		{"CALL METHOD: o->a, o->b.", []string{"CALL METHOD O->A", "CALL METHOD O->B"}},
		{"* full line comment.\n  a = 1. \" trailing. comment\n*b = 2.", []string{"A = 1"}},
		{"s = |a { f( |in { g( ) }| ) } b.|. c = 1.", []string{"S = F ( G ( ) )", "C = 1"}},
		{"s = 'it''s. here'.", []string{"S = 'it''s. here'"}},
		{"s = `a``b.`.", []string{"S = 'a``b.'"}},
	}
	for _, tc := range cases {
		var got []string
		for _, st := range statements(tokenize(tc.src)) {
			got = append(got, stmtText(st))
		}
		if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("%q\n got: %q\nwant: %q", tc.src, got, tc.want)
		}
	}
}

func TestTokenLines(t *testing.T) {
	src := "REPORT z.\n* c\nSELECT *\n  FROM\n\n  bkpf INTO TABLE @DATA(x).\ns = |a\\\nb|. CALL FUNCTION 'F'."
	refs := ABAP(src)
	got := refStrings(refs)
	want := []string{"read TABL BKPF 6", "call FUNC F 8"}
	if !sameSet(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// TestSimulatorAbapGitSources runs the extractor over the abapGit sample repository.
func TestSimulatorAbapGitSources(t *testing.T) {
	files, _ := filepath.Glob("../sap/sapsim/testdata/abapgit/src/*.abap")
	if len(files) == 0 {
		t.Fatal("no abapGit sample sources")
	}
	got := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ABAP(string(b)) {
			got[string(r.Kind)+" "+r.Type+" "+r.Name] = true
		}
	}
	for _, w := range []string{"read TABL VBRK", "read TABL ZCREDIT_LIMIT"} {
		if !got[w] {
			t.Errorf("missing %q in %v", w, got)
		}
	}
}

var fuzzSeeds = []string{
	"", "*", "\"", "'", "`", "|", "|{", "|{ |", "}", "{ }", ":", ",", ".", "DATA:", "DATA: .", "(", ")",
	"SELECT FROM", "SELECT * FROM (", "DELETE FROM DATABASE", "CALL FUNCTION", "TYPE REF TO", "NEW x(",
	"MESSAGE e001(", "PERFORM a(", "INCLUDE", "CLASS x DEFINITION LOAD.", "define view entity",
	"association [0..1] to", "composition of", "redirected to", "/*", "extend view", "*\"  VALUE(",
	"INSERT INTO", "MODIFY", "x=>", "=>", "TYPES: BEGIN OF a, END OF a.", "TYPES END OF x.",
	"s = |a\\", "a\u00e4\xff'b",
}

func FuzzABAP(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range simSources(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		lines := strings.Count(src, "\n") + 1
		for _, refs := range [][]Ref{ABAP(src), CDS(src)} {
			for _, r := range refs {
				if r.Name == "" || r.Line < 1 || r.Line > lines || r.Type == "" || r.Kind == "" {
					t.Fatalf("bad ref %+v for %q", r, src)
				}
				if utf8.ValidString(src) && r.Name != strings.ToUpper(r.Name) {
					t.Fatalf("name not upper-case: %+v", r)
				}
			}
		}
	})
}

// identRe is the simulator's scan today: every identifier of every non-comment line.
var identRe = regexp.MustCompile(`[A-Za-z_/][A-Za-z0-9_/]*`)

func benchSource(b *testing.B) string {
	var sb strings.Builder
	for _, s := range simSources(b) {
		sb.WriteString(s)
		sb.WriteByte('\n')
	}
	src := sb.String()
	for len(src) < 1<<20 {
		src += src
	}
	return src
}

// BenchmarkRegexpScan is the baseline: the simulator's identifier scan,
// without even the lookups it does per identifier.
func BenchmarkRegexpScan(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		for _, line := range strings.Split(src, "\n") {
			tr := strings.TrimSpace(line)
			if strings.HasPrefix(tr, "*") || strings.HasPrefix(tr, "\"") {
				continue
			}
			n += len(identRe.FindAllString(line, -1))
		}
		_ = n
	}
}

func BenchmarkTokenize(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = statements(tokenize(src))
	}
}

func BenchmarkABAP(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = ABAP(src)
	}
}
