package abapref

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGolden compares the references of the realistic sources in testdata with
// their hand-checked .refs files ("kind TYPE NAME line" per line).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.abap")
	ddls, _ := filepath.Glob("testdata/*.asddls")
	files = append(files, ddls...)
	if len(files) == 0 {
		t.Fatal("no testdata sources")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wantB, err := os.ReadFile(strings.TrimSuffix(strings.TrimSuffix(f, ".abap"), ".asddls") + ".refs")
		if err != nil {
			t.Fatal(err)
		}
		typ := "PROG"
		if strings.HasSuffix(f, ".asddls") {
			typ = "DDLS"
		}
		got := refStrings(Extract(typ, string(src)))
		var want []string
		for _, l := range strings.Split(string(wantB), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				want = append(want, l)
			}
		}
		gotSet := map[string]bool{}
		for _, g := range got {
			gotSet[g] = true
		}
		wantSet := map[string]bool{}
		for _, w := range want {
			wantSet[w] = true
			if !gotSet[w] {
				t.Errorf("%s: missing %q", f, w)
			}
		}
		for _, g := range got {
			if !wantSet[g] {
				t.Errorf("%s: unexpected %q", f, g)
			}
		}
	}
}
