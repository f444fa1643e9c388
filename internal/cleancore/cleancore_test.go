package cleancore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func classifier(t testing.TB, ns ...string) *Classifier {
	t.Helper()
	c, err := New(nil, Options{CustomerNamespaces: ns})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(objs []Object) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Type+":"+o.Name)
	}
	return strings.Join(s, ",")
}

// Every expectation below was checked by hand against the files in data/.
func TestReasonPerUsage(t *testing.T) {
	c := classifier(t)
	for _, tc := range []struct {
		name      string
		u         Usage
		level     Level
		state     State
		succ      string // substring of the successors, "" = none expected
		deprecate bool
	}{
		// BTP + PCE: released.
		{"released FM", Usage{"FUNC", "BAPI_TRANSACTION_COMMIT", KindCall}, LevelA, StateReleased, "", false},
		{"released CDS by DDLS", Usage{"DDLS", "I_SALESORDER", KindRead}, LevelA, StateReleased, "", false},
		{"released class, lower case", Usage{"CLAS", "cl_abap_unit_assert", KindCall}, LevelA, StateReleased, "", false},
		// BTP deprecated, successor CL_ABAP_UNIT_ASSERT.
		{"deprecated class", Usage{"CLAS", "CL_AUNIT_ASSERT", KindCall}, LevelA, StateDeprecated, "CLAS:CL_ABAP_UNIT_ASSERT", true},
		// objectClassifications classicAPI; PCE NOT_TO_BE_RELEASED with successor BDEF I_SALESORDERTP.
		{"classic BAPI", Usage{"FUNC", "BAPI_SALESORDER_CREATEFROMDAT2", KindCall}, LevelB, StateClassicAPI, "BDEF:I_SALESORDERTP", false},
		{"classic BAPI 2", Usage{"FUNC", "BAPI_ACC_DOCUMENT_POST", KindCall}, LevelB, StateClassicAPI, "BDEF:I_JOURNALENTRYTP", false},
		// PCE NOT_TO_BE_RELEASED, successors I_PRODUCT….
		{"read MARA", Usage{"TABL", "MARA", KindRead}, LevelC, StateNotToBeReleased, "CDS_STOB:I_PRODUCT", false},
		{"read BKPF", Usage{"TABL", "BKPF", KindRead}, LevelC, StateNotToBeReleased, "CDS_STOB:I_JOURNALENTRY", false},
		// In no file: SAP-internal.
		{"unknown table", Usage{"TABL", "TVARVC", KindRead}, LevelC, StateUnknown, "", false},
		{"unknown report", Usage{"PROG", "RFBILA00", KindCall}, LevelC, StateUnknown, "", false},
		// Writes, modifications, implicit enhancements: D whatever the state.
		{"write MARA", Usage{"TABL", "MARA", KindWrite}, LevelD, StateNotToBeReleased, "CDS_STOB:I_PRODUCT", false},
		{"write unknown", Usage{"TABL", "TVARVC", KindWrite}, LevelD, StateUnknown, "", false},
		{"modify SAP program", Usage{"PROG", "SAPMV45A", KindModification}, LevelD, StateUnknown, "", false},
		{"implicit enhancement", Usage{"PROG", "SAPMV45A", KindEnhancement}, LevelD, StateUnknown, "", false},
		// Explicit enhancement of a released BAdI (PCE RELEASED).
		{"released BAdI", Usage{"BADI_DEF", "/ATL/BADI_FILL_BNKA_FIELDS", KindEnhancement}, LevelA, StateReleased, "", false},
		// objectClassifications noAPI, successor BAPI_RE_BU_GET_DETAIL.
		{"noAPI class", Usage{"CLAS", "CF_REBD_BUILDING", KindCall}, LevelD, StateNoAPI, "FUNC:BAPI_RE_BU_GET_DETAIL", false},
		{"noAPI FM", Usage{"FUNC", "/AIF/FILE_PROCESS_DATA", KindCall}, LevelD, StateNoAPI, "", false},
		// Same name, different type: TEXT40 DOMA released, DTEL deprecated;
		// CHAR02 DOMA deprecated, DTEL released; ABP_BEHV_DRAFT_USER_ACCESS
		// BDEF not-to-be-released-stable, CDS released; BAPI_TRANSACTION_COMMIT
		// is a function, no table.
		{"TEXT40 domain", Usage{"DOMA", "TEXT40", KindType}, LevelA, StateReleased, "", false},
		{"TEXT40 data element", Usage{"DTEL", "TEXT40", KindType}, LevelA, StateDeprecated, "", true},
		{"CHAR02 domain", Usage{"DOMA", "CHAR02", KindType}, LevelA, StateDeprecated, "", true},
		{"CHAR02 data element", Usage{"DTEL", "CHAR02", KindType}, LevelA, StateReleased, "", false},
		{"BDEF stable", Usage{"BDEF", "ABP_BEHV_DRAFT_USER_ACCESS", KindRead}, LevelC, StateNotToBeReleasedStable, "", false},
		{"same name as CDS", Usage{"DDLS", "ABP_BEHV_DRAFT_USER_ACCESS", KindRead}, LevelA, StateReleased, "", false},
		{"FM name as table", Usage{"TABL", "BAPI_TRANSACTION_COMMIT", KindRead}, LevelC, StateUnknown, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := c.Reason(tc.u)
			if !ok {
				t.Fatal("treated as custom")
			}
			if r.Level != tc.level || r.State != tc.state || r.Deprecated != tc.deprecate {
				t.Fatalf("got level %s state %s deprecated %v, want %s %s %v (%s)", r.Level, r.State, r.Deprecated, tc.level, tc.state, tc.deprecate, r.Why)
			}
			got := names(r.Successors)
			if tc.succ == "" && got != "" {
				t.Fatalf("successors %s, want none", got)
			}
			if !strings.Contains(got, tc.succ) {
				t.Fatalf("successors %q, want %q", got, tc.succ)
			}
		})
	}
}

func TestClassifyObject(t *testing.T) {
	c := classifier(t, "/ACME/")
	released := []Usage{{"FUNC", "BAPI_TRANSACTION_COMMIT", KindCall}, {"DDLS", "I_SALESORDER", KindRead}, {"CLAS", "CL_AUNIT_ASSERT", KindCall}}
	classic := append(released[:3:3], Usage{"FUNC", "BAPI_SALESORDER_CREATEFROMDAT2", KindCall})
	internal := append(classic[:4:4], Usage{"TABL", "MARA", KindRead})
	writes := append(internal[:5:5], Usage{"TABL", "MARA", KindWrite})
	custom := []Usage{{"TABL", "ZSALES", KindWrite}, {"CLAS", "ycl_helper", KindModification},
		{"FUNC", "/ACME/POST", KindCall}, {"PROG", "ZREPORT", KindEnhancement}}
	for _, tc := range []struct {
		name    string
		usages  []Usage
		level   Level
		reasons int
	}{
		{"nothing", nil, LevelA, 0},
		{"released only", released, LevelA, 3},
		{"plus classic", classic, LevelB, 4},
		{"plus internal read", internal, LevelC, 5},
		{"plus write to SAP table", writes, LevelD, 6},
		{"custom only", custom, LevelA, 0},
		{"custom do not lower", append(released[:3:3], custom...), LevelA, 3},
		{"duplicates once", []Usage{{"TABL", "MARA", KindRead}, {"TABL", "mara", KindRead}, {"TABL", " MARA", KindRead}, {"TABL", "MARA", KindWrite}}, LevelD, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Classify(tc.usages)
			if r.Level != tc.level || len(r.Reasons) != tc.reasons {
				b, _ := json.Marshal(r)
				t.Fatalf("got %s with %d reasons, want %s with %d: %s", r.Level, len(r.Reasons), tc.level, tc.reasons, b)
			}
		})
	}
	// Another customer's namespace is SAP's as far as this one knows.
	if classifier(t).IsCustom("/ACME/POST") || !c.IsCustom("/acme/post") || c.IsCustom("/AIF/FILE_PROCESS_DATA") {
		t.Fatal("customer namespace option not applied")
	}
	// Reasons serialise readably.
	b, _ := json.Marshal(c.Classify([]Usage{{"TABL", "MARA", KindWrite}}))
	for _, want := range []string{`"level":"D"`, `"state":"notToBeReleased"`, `"kind":"write"`, `"name":"I_PRODUCT"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("%s lacks %s", b, want)
		}
	}
}

func TestConversionReadiness(t *testing.T) {
	c := classifier(t)
	items := c.ConversionReadiness([]Usage{
		{"TABL", "BSEG", KindRead}, {"TABL", "BSEG", KindWrite}, // once
		{"CLAS", "CL_AUNIT_ASSERT", KindCall},
		{"FUNC", "BAPI_TRANSACTION_COMMIT", KindCall}, // released, current: not listed
		{"TABL", "TVARVC", KindRead},                  // unknown: SAP names nothing
		{"TABL", "ZBSEG", KindRead},                   // custom
	})
	got := map[string]string{}
	for _, it := range items {
		got[it.Object.Type+":"+it.Object.Name] = names(it.Successors)
	}
	want := map[string]string{
		"TABL:BSEG":            "CDS_STOB:I_OPERATIONALACCTGDOCITEM",
		"CLAS:CL_AUNIT_ASSERT": "CLAS:CL_ABAP_UNIT_ASSERT",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLoadFromPathAndURL(t *testing.T) {
	emb, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if emb.Len() < 45000 {
		t.Fatalf("shipped repository has %d objects", emb.Len())
	}
	if !strings.Contains(License(), "Apache License") {
		t.Fatal("licence not shipped")
	}
	// A newer copy: one released class in BTP format only, no PCE file.
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(FileReleaseInfo, `{"formatVersion":"1","objectReleaseInfo":[{"tadirObject":"TABL","tadirObjName":"MARA","objectType":"TABL","objectKey":"MARA","state":"released"}]}`)
	write(FileClassifications, `{"formatVersion":"2","objectClassifications":[{"tadirObject":"FUGR","tadirObjName":"X","objectType":"FUNC","objectKey":"Z_NOT_CUSTOM_HERE","state":"futureState"}]}`)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for _, loc := range []string{dir, srv.URL + "/"} {
		repo, err := Load(context.Background(), loc)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		c, _ := New(repo, Options{})
		if r, _ := c.Reason(Usage{"TABL", "MARA", KindRead}); r.Level != LevelA || repo.Len() != 1 {
			t.Fatalf("%s: MARA %s, %d objects", loc, r.Level, repo.Len())
		}
	}
	// Broken or missing files are errors naming the file.
	write(FileClassifications, `[1,2]`)
	if _, err := Load(context.Background(), dir); err == nil || !strings.Contains(err.Error(), FileClassifications) {
		t.Fatalf("broken file: %v", err)
	}
	if _, err := Load(context.Background(), srv.URL+"/nothing"); err == nil {
		t.Fatal("missing files loaded")
	}
}

// TestRepositoryMemory reports the heap the shipped repository keeps.
func TestRepositoryMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	repo, err := build(func(name string) (io.ReadCloser, error) {
		return embedded.Open("data/" + name)
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("repository: %d objects parsed in %s, %.1f MiB live heap (files: 7.7 MB)", repo.Len(), took, float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
	runtime.KeepAlive(repo)
}

func benchUsages() []Usage {
	// 10,000 usages drawn from real objects of every state plus unknown and custom ones.
	base := []Usage{{"FUNC", "BAPI_TRANSACTION_COMMIT", KindCall}, {"DDLS", "I_SALESORDER", KindRead},
		{"FUNC", "BAPI_SALESORDER_CREATEFROMDAT2", KindCall}, {"TABL", "MARA", KindRead}, {"TABL", "MARA", KindWrite},
		{"CLAS", "CF_REBD_BUILDING", KindCall}, {"TABL", "TVARVC", KindRead}, {"TABL", "ZSALES", KindRead},
		{"DTEL", "TEXT40", KindType}, {"CLAS", "CL_AUNIT_ASSERT", KindCall}}
	usages := make([]Usage, 10000)
	for i := range usages {
		usages[i] = base[i%len(base)]
		if i%3 == 0 { // distinct usages, as a real object list has
			usages[i].Name = fmt.Sprintf("%s%d", usages[i].Name, i)
		}
	}
	return usages
}

// BenchmarkClassify10k classifies one object with 10,000 usages.
func BenchmarkClassify10k(b *testing.B) {
	c := classifier(b)
	usages := benchUsages()
	b.ReportAllocs()
	for b.Loop() {
		c.Classify(usages)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(usages)), "ns/usage")
}

// BenchmarkBaselineNameMap is the floor: one plain map probe per usage by
// name alone, no dedup, no reasons.
func BenchmarkBaselineNameMap(b *testing.B) {
	usages := benchUsages()
	m := map[string]uint8{}
	for _, u := range usages[:10] {
		m[u.Name] = 1
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		for _, u := range usages {
			n += int(m[u.Name])
		}
	}
	_ = n
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(usages)), "ns/usage")
}

// The shared repository is read by many workers at once.
func TestConcurrentUse(t *testing.T) {
	done := make(chan Level)
	for range 8 {
		go func() {
			c, err := New(nil, Options{})
			if err != nil {
				done <- 0
				return
			}
			done <- c.Classify(benchUsages()[:100]).Level
		}()
	}
	for range 8 {
		if l := <-done; l != LevelD {
			t.Fatalf("level %s", l)
		}
	}
}
