package abapref

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// oracleCorpora are the ABAP corpora compared with abaplint, with the recall
// and precision the extractor must keep on each (docs/benchmarks.md).
var oracleCorpora = []struct {
	name                    string
	dirs                    []string
	minRecall, minPrecision float64
}{
	// Z_CREDIT_CHECK's XML interface types IV_AMOUNT with ZD_CREDIT_AMOUNT, which
	// its source does not repeat: found through FunctionInterfaces.
	{"project fixtures", []string{"testdata", "../sap/sapsim/testdata/abapgit"}, 1, 1},
	{"issue 20 cases", []string{"oracle/corpus"}, 1, 1},
}

// adjudicated are disagreements with abaplint checked by hand where the
// extractor is right and abaplint (run without SAP's dependencies) records no
// reference: they are reported, and counted neither as a miss nor as a false
// positive. Key: "OBJECT NAME|class REF".
var adjudicated = map[string]string{
	"PROG ZFI_DUNNING_RUN|type T001":                "TABLES t001 declares a work area of table T001; abaplint records no reference for TABLES",
	"PROG ZFI_DUNNING_RUN|type SLIS":                "TYPE-POOLS slis loads type group SLIS; abaplint records no reference for TYPE-POOLS",
	"PROG ZFI_DUNNING_RUN|table ZFI_DUN_BLOCK":      "SELECT … FROM zfi_dun_block in a NOT EXISTS subquery reads the table; abaplint records no reference inside the subquery",
	"FUGR ZFG_CREDIT|type KNA1":                     "TABLES kna1 in the TOP include; abaplint records no reference for TABLES",
	"FUGR ZFG_CREDIT|type KUNNR":                    "the function module's interface types IV_KUNNR with data element KUNNR; abaplint reads the interface from XML and records void types there as no reference",
	"FUGR ZFG_CREDIT|type BAPIRET2":                 "the function module's interface types table parameter ET_RETURN with structure BAPIRET2; abaplint reads the interface from XML and records void types there as no reference",
	"FUGR ZFG_CREDIT|type ABAP_BOOL":                "interface parameter EV_OK TYPE abap_bool (type group ABAP); abaplint takes it for a built-in type",
	"CLAS ZCL_I20_AMDP|table BSID":                  "an AMDP's USING bsid reads the table in SQLScript; abaplint does not check SQLScript",
	"CLAS ZCL_I20_TRAVEL_BUFFER|type ZI_I20_TRAVEL": "TYPE TABLE FOR CREATE zi_i20_travel: a RAP derived type of the entity; abaplint records no reference for an entity it does not have",
}

// TestAgainstAbaplint compares, per ABAP object, the objects abapref finds
// with those abaplint's syntax check resolves (internal/abapref/oracle): by
// class, "table" (SQL sources and targets) and "type" (DDIC types, classes,
// interfaces). References to function modules, programs, BDEFs and message
// classes are outside abaplint's references and not compared, nor are CDS
// sources; a function group is compared with its modules' XML interface types.
func TestAgainstAbaplint(t *testing.T) {
	if testing.Short() {
		t.Skip("abaplint oracle: skipped in -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("abaplint oracle skipped: Node.js (node) is not installed")
	}
	ensureOracle(t)
	for _, c := range oracleCorpora {
		t.Run(c.name, func(t *testing.T) {
			want, excluded := runOracle(t, node, c.dirs)
			got := extractCorpus(t, c.dirs)
			var tp, fn, fp, adj int
			objs := make([]string, 0, len(want))
			for o := range want {
				objs = append(objs, o)
			}
			sort.Strings(objs)
			for _, o := range objs {
				w, g := want[o], got[o]
				for r := range w {
					if why, ok := adjudicated[o+"|"+r]; ok {
						adj++
						t.Logf("%s: %s adjudicated: %s", o, r, why)
						continue
					}
					if g[r] {
						tp++
					} else {
						fn++
						t.Logf("%s: missed %s (abaplint has it)", o, r)
					}
				}
				for r := range g {
					if why, ok := adjudicated[o+"|"+r]; ok && !w[r] {
						adj++
						t.Logf("%s: %s adjudicated: %s", o, r, why)
						continue
					}
					if !w[r] {
						fp++
						t.Logf("%s: extra %s (abaplint has not)", o, r)
					}
				}
			}
			for o, why := range excluded {
				t.Logf("left out %s: abaplint's syntax check stops at %s", o, why)
			}
			recall, precision := ratio(tp, tp+fn), ratio(tp, tp+fp)
			t.Logf("%s: %d objects compared (%d left out), %d references (%d adjudicated): recall %.1f %%, precision %.1f %%",
				c.name, len(want), len(excluded), tp+fn, adj, 100*recall, 100*precision)
			if recall < c.minRecall || precision < c.minPrecision {
				t.Errorf("recall %.3f (want ≥ %.3f), precision %.3f (want ≥ %.3f)", recall, c.minRecall, precision, c.minPrecision)
			}
		})
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// ensureOracle installs the oracle's pinned packages (package-lock.json) when
// they are missing.
func ensureOracle(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("oracle/node_modules/@abaplint/core/package.json"); err == nil {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("abaplint oracle skipped: npm is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = "oracle"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in internal/abapref/oracle: %v\n%s", err, out)
	}
}

// runOracle runs oracle.js and returns object -> {"class NAME"}, and the
// objects abaplint could not check with the reason.
func runOracle(t *testing.T, node string, dirs []string) (map[string]map[string]bool, map[string]string) {
	t.Helper()
	args := []string{"oracle.js"}
	for _, d := range dirs {
		args = append(args, filepath.Join("..", d))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = "oracle"
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle.js: %v", err)
	}
	var res struct {
		Objects map[string][]string `json:"objects"`
		Errors  map[string]string   `json:"errors"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	want := map[string]map[string]bool{}
	for o, refs := range res.Objects {
		want[o] = map[string]bool{}
		for _, r := range refs {
			class, name, _ := strings.Cut(r, " ")
			if class == "oo" {
				class = "type" // a void class and a void type look alike to abaplint
			}
			want[o][class+" "+name] = true
		}
	}
	return want, res.Errors
}

// extractCorpus runs abapref over the ABAP sources of abapGit folders, all
// parts of an object together as the simulator loads them (a class with its
// locals, a function group with its includes, modules and the modules'
// interfaces from its XML), and returns
// object -> {"class NAME"} in the oracle's classes.
func extractCorpus(t *testing.T, dirs []string) map[string]map[string]bool {
	t.Helper()
	sources := map[string][]string{}
	xmlRefs := map[string][]Ref{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			if strings.HasSuffix(p, ".fugr.xml") { // the function modules' interfaces
				x, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				ifaces, err := FunctionInterfaces(string(x))
				if err != nil {
					return err
				}
				obj := "FUGR " + strings.ReplaceAll(strings.ToUpper(strings.TrimSuffix(filepath.Base(p), ".fugr.xml")), "#", "/")
				for _, refs := range ifaces {
					xmlRefs[obj] = append(xmlRefs[obj], refs...)
				}
				return nil
			}
			if !strings.HasSuffix(p, ".abap") {
				return nil
			}
			parts := strings.Split(filepath.Base(p), ".")
			if len(parts) < 3 {
				return nil
			}
			obj := strings.ToUpper(parts[1]) + " " + strings.ReplaceAll(strings.ToUpper(parts[0]), "#", "/")
			src, err := os.ReadFile(p)
			sources[obj] = append(sources[obj], string(src))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]map[string]bool{}
	for obj, srcs := range sources {
		got[obj] = map[string]bool{}
		self := strings.Fields(obj)[1]
		for _, r := range append(ABAP(strings.Join(srcs, "\n")), xmlRefs[obj]...) {
			if c := oracleClass(r); c != "" && r.Name != self {
				got[obj][c+" "+r.Name] = true
			}
		}
	}
	return got
}

// oracleClass is the class of a reference in the oracle's terms; "" for
// references abaplint does not record.
func oracleClass(r Ref) string {
	switch r.Type {
	case "FUNC", "PROG", "TRAN", "MSAG", "SUSO", "BDEF", "BADI", "ENHS", "ENHO":
		return ""
	}
	switch r.Kind {
	case Read, Write:
		return "table"
	case Include, Extend, Message, Authority, BAdI, Enhancement:
		return ""
	}
	return "type"
}
