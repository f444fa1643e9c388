package abapref

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/testenv"
)

// oracleCorpora are the ABAP corpora compared with abaplint, with the recall
// and precision the extractor must keep on each (docs/benchmarks.md).
var oracleCorpora = []oracleCorpus{
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

	// public repositories (ABAP_ORACLE_REPOS, docs/benchmarks.md)
	"PROG ZABAPGIT|type SSCRFIELDS":                              "TABLES sscrfields declares the selection screen's work area; abaplint records no reference for TABLES",
	"CLAS /DMO/CL_DATA_GENERATOR_DRAFT|table /DMO/TRAVEL":        "INSERT … FROM ( SELECT FROM /dmo/travel … ): abaplint records no reference inside the subquery",
	"CLAS /DMO/CL_DATA_GENERATOR_DRAFT|table /DMO/BOOKING":       "INSERT … FROM ( SELECT FROM /dmo/booking JOIN … ): abaplint records no reference inside the subquery",
	"CLAS /DMO/CL_DATA_GENERATOR_DRAFT|table /DMO/BOOK_SUPPL":    "INSERT … FROM ( SELECT FROM /dmo/book_suppl … ): abaplint records no reference inside the subquery",
	"CLAS /DMO/TC_TRAVEL_D_BO_CONSUMER|type /DMO/R_TRAVEL_D":     "TYPE RESPONSE FOR FAILED EARLY /dmo/r_travel_d: a RAP derived type; abaplint records no reference to the entity",
	"CLAS /DMO/BP_R_TRAVELTP_REC|type /DMO/R_TRAVELTP_REC":       "TYPE TABLE FOR READ RESULT /dmo/r_traveltp_rec\\travel: a RAP derived type; abaplint records no reference to the entity",
	"CLAS /DMO/TC_TRAVEL_M_BO_CONSUMER|type /DMO/I_TRAVEL_M":     "TYPE RESPONSE FOR … /dmo/i_travel_m: a RAP derived type; abaplint records no reference to the entity",
	"INTF /DMO/IF_FLIGHT_LEGACY|type /DMO/ACTION_CODE":           "BEGIN OF ENUM … BASE TYPE /dmo/action_code: abaplint records no reference for an enum's base type",
	"INTF /DMO/IF_FLIGHT_LEGACY|type /DMO/TRAVEL_STATUS":         "BEGIN OF ENUM … BASE TYPE /dmo/travel_status: abaplint records no reference for an enum's base type",
	"FUGR /DMO/FLIGHT_TRAVEL_API|type ABAP_BOOLEAN":              "interface parameter IV_INCLUDE_BUFFER TYPE abap_boolean in the XML; abaplint records void types of the XML interface as no reference",
	"CLAS ZCL_EXCEL_CONVERTER|table INDX":                        "IMPORT … FROM DATABASE indx(xl): reads the cluster table; abaplint records no reference for IMPORT FROM DATABASE",
	"CLAS ZCL_EXCEL_STYLE_COND|type ZCL_EXCEL_STYLE_CONDITIONAL": "CLASS zcl_excel_style_conditional DEFINITION LOAD names the class; abaplint records no reference for DEFINITION LOAD",
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
		testenv.Missing(t, "abaplint oracle skipped: Node.js (node) is not installed")
	}
	ensureOracle(t)
	corpora := oracleCorpora
	public, err := publicRepos(os.Getenv("ABAP_ORACLE_REPOS"))
	if err != nil {
		t.Fatal(err)
	}
	corpora = append(corpora, public...)
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			if len(c.dirs) == 0 {
				t.Skip("public repositories skipped: set ABAP_ORACLE_REPOS=name=dir,… (scripts/abap-oracle-repos.sh does)")
			}
			want, excluded := runOracle(t, node, c.dirs)
			got, voidTilde, xmlOnly := extractCorpus(t, c.dirs)
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
					if xmlOnly[o][r] && !w[r] {
						adj++
						t.Logf("%s: %s adjudicated: named only by a function module's interface in the XML, where abaplint records void types as no reference", o, r)
						continue
					}
					if name, _ := strings.CutPrefix(r, "type "); voidTilde[o][name] && !w[r] {
						adj++
						t.Logf("%s: %s adjudicated: x->%s~m / c=>%[3]s~m with x or c of a class outside the corpus: abaplint, which has that class as void, cannot tell the interface", o, r, name)
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

// oracleCorpus is a corpus compared with abaplint and the recall and precision
// the extractor must keep on it.
type oracleCorpus struct {
	name                    string
	dirs                    []string
	minRecall, minPrecision float64
}

// publicRepos reads ABAP_ORACLE_REPOS ("abapGit=/tmp/a,flight=/tmp/b"): public
// abapGit repositories, too large and not ours to commit, compared at ≥ 99.5 %.
// Unset, it is one corpus without folders that the test skips.
func publicRepos(env string) ([]oracleCorpus, error) {
	if strings.TrimSpace(env) == "" {
		return []oracleCorpus{{name: "public repositories"}}, nil
	}
	var out []oracleCorpus
	for _, item := range strings.Split(env, ",") {
		name, dir, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || name == "" || dir == "" {
			return nil, fmt.Errorf("ABAP_ORACLE_REPOS: %q is not name=dir", item)
		}
		dir, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("ABAP_ORACLE_REPOS: %s: not a folder", dir)
		}
		out = append(out, oracleCorpus{name: name, dirs: []string{dir}, minRecall: 0.995, minPrecision: 0.995})
	}
	return out, nil
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
		testenv.Missing(t, "abaplint oracle skipped: npm is not installed")
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
	if deps := os.Getenv("ABAP_ORACLE_DEPS"); deps != "" && filepath.IsAbs(dirs[0]) {
		// stubs of SAP objects (github.com/abaplint/deps) for the public repositories: fewer
		// objects stop at a void superclass
		args = append(args, "--deps", deps)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join("..", d)
		}
		args = append(args, d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
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
func extractCorpus(t *testing.T, dirs []string) (got, voidTilde, xmlOnly map[string]map[string]bool) {
	t.Helper()
	sources := map[string][]string{}
	xmlRefs := map[string][]Ref{}
	defined := map[string]bool{} // the objects of the corpus
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			if parts := strings.Split(filepath.Base(p), "."); len(parts) > 2 {
				defined[strings.ReplaceAll(strings.ToUpper(parts[0]), "#", "/")] = true
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
	// the global classes of the corpus, for the types subclasses inherit
	classes := Classes{}
	for obj, srcs := range sources {
		if strings.HasPrefix(obj, "CLAS ") {
			if name, c, ok := GlobalClass(strings.Join(srcs, "\n")); ok {
				classes[name] = c
			}
		}
	}
	got, xmlOnly = map[string]map[string]bool{}, map[string]map[string]bool{}
	for obj, srcs := range sources {
		got[obj] = map[string]bool{}
		self := strings.Fields(obj)[1]
		if strings.HasPrefix(obj, "PROG ") {
			srcs = withIncludes(sources, srcs, map[string]bool{obj: true})
		}
		inSource := map[string]bool{}
		for _, r := range ABAPIn(strings.Join(srcs, "\n"), classes) {
			if c := oracleClass(r); c != "" && r.Name != self {
				got[obj][c+" "+r.Name] = true
				inSource[c+" "+r.Name] = true
			}
		}
		for _, r := range xmlRefs[obj] {
			if c := oracleClass(r); c != "" && r.Name != self {
				got[obj][c+" "+r.Name] = true
				if !inSource[c+" "+r.Name] && !defined[r.Name] {
					if xmlOnly[obj] == nil {
						xmlOnly[obj] = map[string]bool{}
					}
					xmlOnly[obj][c+" "+r.Name] = true
				}
			}
		}
		// oracle.js reports a table of the corpus that the object reads or
		// writes once, as "table", also where a declaration types with it.
		for r := range got[obj] {
			if name, ok := strings.CutPrefix(r, "type "); ok && got[obj]["table "+name] && defined[name] {
				delete(got[obj], r)
			}
		}
	}
	// interfaces outside the corpus the sources name only through x->intf~m or
	// cls=>intf~m: abaplint resolves those only when it knows x's or cls's class
	voidTilde = map[string]map[string]bool{}
	for obj, srcs := range sources {
		for _, m := range tildeRe.FindAllStringSubmatch(strings.Join(srcs, "\n"), -1) {
			name := strings.ToUpper(m[1])
			if defined[name] {
				continue
			}
			if voidTilde[obj] == nil {
				voidTilde[obj] = map[string]bool{}
			}
			voidTilde[obj][name] = true
		}
	}
	return got, voidTilde, xmlOnly
}

// withIncludes is a program's sources followed by those of the corpus's
// includes it names (recursively), as abaplint checks a main program.
func withIncludes(sources map[string][]string, srcs []string, seen map[string]bool) []string {
	out := srcs
	for _, r := range ABAP(strings.Join(srcs, "\n")) {
		inc := "PROG " + r.Name
		if r.Kind != Include || seen[inc] || sources[inc] == nil {
			continue
		}
		seen[inc] = true
		out = append(out, withIncludes(sources, sources[inc], seen)...)
	}
	return out
}

var tildeRe = regexp.MustCompile(`(?i)(?:->|=>)([a-z0-9_/]+)~`)

// oracleClass is the class of a reference in the oracle's terms; "" for
// references abaplint does not record.
func oracleClass(r Ref) string {
	if r.Kind == BAdI {
		return "type" // DATA lo TYPE REF TO badi: abaplint has a type reference to the (void) BAdI
	}
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
