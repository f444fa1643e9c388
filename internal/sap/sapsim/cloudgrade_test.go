package sapsim

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapenrich"
	"github.com/stretchr/testify/require"
)

// TestABAPCloudClassGradesA loads an ABAP Cloud class that uses only released
// APIs — abap_bool, sy- fields, the released CDS view I_CURRENCY as a type and
// as a data source, a released interface and class, RAP derived types of its
// own entity — and grades what the simulator serves: level A (issue 20).
func TestABAPCloudClassGradesA(t *testing.T) {
	dir := t.TempDir()
	src := `CLASS zcl_i20_cloud DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_oo_adt_classrun.
    METHODS is_today IMPORTING iv_date TYPE d RETURNING VALUE(rv_ok) TYPE abap_bool.
  PRIVATE SECTION.
    DATA ms_currency TYPE i_currency.
    DATA mt_create TYPE TABLE FOR CREATE zi_i20_travel.
    DATA mv_date TYPE sy-datum.
ENDCLASS.

CLASS zcl_i20_cloud IMPLEMENTATION.
  METHOD if_oo_adt_classrun~main.
    SELECT SINGLE * FROM i_currency WHERE currency = 'EUR' INTO @ms_currency.
    out->write( is_today( cl_abap_context_info=>get_system_date( ) ) ).
  ENDMETHOD.

  METHOD is_today.
    mv_date = sy-datum.
    rv_ok = xsdbool( iv_date = mv_date ).
    IF rv_ok = abap_true.
      CLEAR mt_create.
    ENDIF.
  ENDMETHOD.
ENDCLASS.
`
	xml := `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0" serializer="LCL_OBJECT_CLAS" serializer_version="v1.0.0">
 <asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0">
  <asx:values>
   <VSEOCLASS>
    <CLSNAME>ZCL_I20_CLOUD</CLSNAME>
    <LANGU>E</LANGU>
    <DESCRIPT>ABAP Cloud: released APIs only</DESCRIPT>
    <STATE>1</STATE>
    <UNICODE>X</UNICODE>
   </VSEOCLASS>
  </asx:values>
 </asx:abap>
</abapGit>
`
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "zcl_i20_cloud.clas.abap"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "zcl_i20_cloud.clas.xml"), []byte(xml), 0o644))
	s := ecc(t)
	require.NoError(t, s.LoadABAPGit(dir))

	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	var usages []cleancore.Usage
	for _, r := range rels {
		if r["from"] != "ZCL_I20_CLOUD" {
			continue
		}
		usage, _ := r["usage"].(string)
		if u, ok := sapenrich.UsageOf(r["to_type"].(string), r["to"].(string), r["kind"].(string), usage); ok {
			usages = append(usages, u)
		}
	}
	require.NotEmpty(t, usages)
	c, err := cleancore.New(nil, cleancore.Options{})
	require.NoError(t, err)
	res := c.Classify(usages)
	for _, r := range res.Reasons {
		if r.Level != cleancore.LevelA {
			t.Errorf("%s %s (%s): level %s, %s", r.Usage.Type, r.Usage.Name, r.Usage.Kind, r.Level, r.Why)
		}
	}
	if res.Level != cleancore.LevelA {
		t.Errorf("level %s, want A; usages %v", res.Level, usages)
	}
}

// TestPublicRepositories loads the public abapGit repositories named in ABAP_ORACLE_REPOS
// (name=folder,…; scripts/abap-oracle-repos.sh sets it) and grades every object they hold
// with their own namespaces as custom: no load aborts, every object is loaded or listed with
// a reason, and a repository named in ABAP_CLOUD_REPOS (name,…: written in ABAP for Cloud
// Development, like SAP's flight sample) grades level A throughout. The grade distribution
// and the reasons for the others are logged (docs/benchmarks.md).
func TestPublicRepositories(t *testing.T) {
	env := os.Getenv("ABAP_ORACLE_REPOS")
	if strings.TrimSpace(env) == "" {
		t.Skip("public repositories skipped: set ABAP_ORACLE_REPOS=name=folder,… (scripts/abap-oracle-repos.sh does)")
	}
	cloudRepos := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("ABAP_CLOUD_REPOS"), ",") {
		cloudRepos[strings.TrimSpace(n)] = true
	}
	for _, item := range strings.Split(env, ",") {
		name, dir, ok := strings.Cut(strings.TrimSpace(item), "=")
		require.True(t, ok, "ABAP_ORACLE_REPOS: %q is not name=folder", item)
		t.Run(name, func(t *testing.T) {
			s := ecc(t)
			s.Info()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			rep, err := s.LoadABAPGitReport(dir)
			elapsed := time.Since(start)
			require.NoError(t, err, "the load aborted")
			runtime.GC()
			runtime.ReadMemStats(&after)
			files := abapGitObjects(t, dir)
			t.Logf("%s: %d objects in %d files: loaded %d, unresolved references %d, skipped %d in %v, %.0f MiB kept",
				name, len(files), countFiles(t, dir), rep.Loaded, rep.Unresolved, rep.Skipped, elapsed.Round(time.Millisecond),
				float64(after.HeapAlloc-before.HeapAlloc)/(1<<20))
			skipped := map[string]bool{}
			for typ, tr := range rep.Types {
				t.Logf("  %-5s loaded %d, unresolved %d, skipped %d", typ, tr.Loaded, len(tr.Unresolved), len(tr.Skipped))
				for _, sk := range tr.Skipped {
					skipped[typ+" "+sk.Object] = true
					t.Logf("    skipped %s: %s", sk.Object, sk.Reason)
				}
			}
			s.mu.RLock()
			loaded := map[string]bool{}
			for _, o := range s.objects {
				loaded[o.Type+" "+o.Name] = true
			}
			s.mu.RUnlock()
			for o := range files {
				if !loaded[o] && !skipped[o] {
					t.Errorf("%s is neither loaded nor listed in the summary", o)
				}
			}

			cloud := cloudRepos[name]
			levels := map[cleancore.Level]int{}
			reasons := map[string]int{}
			targets := map[string]map[string]int{} // reason -> used object -> uses
			for o, res := range gradeLoaded(t, s, files) {
				levels[res.Level]++
				for _, r := range res.Reasons {
					if r.Level == cleancore.LevelA {
						continue
					}
					why := fmt.Sprintf("level %s: %s", r.Level, r.Why)
					reasons[why]++
					if targets[why] == nil {
						targets[why] = map[string]int{}
					}
					targets[why][r.Usage.Type+" "+r.Usage.Name]++
					if cloud {
						t.Errorf("%s uses %s %s (%s): level %s, %s", o, r.Usage.Type, r.Usage.Name, r.Usage.Kind, r.Level, r.Why)
					}
				}
			}
			t.Logf("%s: grades %v of %d objects (ABAP Cloud: %v)", name, levels, len(files), cloud)
			for why, n := range reasons {
				top := make([]string, 0, len(targets[why]))
				for o := range targets[why] {
					top = append(top, o)
				}
				sort.Slice(top, func(i, j int) bool { return targets[why][top[i]] > targets[why][top[j]] })
				if len(top) > 6 {
					top = top[:6]
				}
				t.Logf("  %4d × %s (%d objects; most used: %s)", n, why, len(targets[why]), strings.Join(top, ", "))
			}
		})
	}
}

// abapGitObjects are the objects ("TYPE NAME") of an abapGit folder, by its file names.
func abapGitObjects(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		parts := strings.Split(strings.ToLower(e.Name()), ".")
		if len(parts) < 3 || parts[0] == "" {
			return nil
		}
		typ, name := strings.ToUpper(parts[1]), objectName(parts[0])
		if typ == "DEVC" {
			name = folderPackage(filepath.Base(filepath.Dir(p)))
		}
		out[typ+" "+name] = true
		return nil
	}))
	return out
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			n++
		}
		return err
	}))
	return n
}

// gradeLoaded grades each of objects ("TYPE NAME") by the relationships the simulator serves,
// with the objects' own names and namespaces counted as custom.
func gradeLoaded(t *testing.T, s *System, objects map[string]bool) map[string]cleancore.Result {
	t.Helper()
	rels, _ := pageAll(t, s, sap.EndpointIndexRelationships, sap.IndexRequest{Limit: 1000})
	usages := map[string][]cleancore.Usage{}
	for _, r := range rels {
		from := fmt.Sprint(r["from_type"]) + " " + fmt.Sprint(r["from"])
		if !objects[from] {
			continue
		}
		usage, _ := r["usage"].(string)
		if u, ok := sapenrich.UsageOf(fmt.Sprint(r["to_type"]), fmt.Sprint(r["to"]), fmt.Sprint(r["kind"]), usage); ok {
			usages[from] = append(usages[from], u)
		}
	}
	names := make([]string, 0, len(objects))
	for o := range objects {
		names = append(names, strings.SplitN(o, " ", 2)[1])
	}
	c, err := cleancore.New(nil, cleancore.Options{})
	require.NoError(t, err)
	c = c.WithCustomObjects(names)
	out := make(map[string]cleancore.Result, len(objects))
	for o := range objects {
		out[o] = c.Classify(usages[o])
	}
	return out
}

// TestABAPCloudRepositoryGradesA loads a small hand-written ABAP Cloud repository in its own
// /I20/ namespace — a superclass whose types a subclass uses unqualified, a CDS projection
// with `: localized` and text path filters, a released data element, system fields — and
// grades every object level A (issue 20; the flight sample's causes of non-A grades).
func TestABAPCloudRepositoryGradesA(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(src, 0o755))
	put := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(src, name), []byte(text), 0o644))
	}
	clas := func(name, descr string) string {
		return `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0" serializer="LCL_OBJECT_CLAS" serializer_version="v1.0.0">
 <asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0">
  <asx:values>
   <VSEOCLASS><CLSNAME>` + name + `</CLSNAME><LANGU>E</LANGU><DESCRIPT>` + descr + `</DESCRIPT><STATE>1</STATE><ABAP_LANGU_VERSION>5</ABAP_LANGU_VERSION></VSEOCLASS>
  </asx:values>
 </asx:abap>
</abapGit>
`
	}
	put("#i20#cl_gen_base.clas.xml", clas("/I20/CL_GEN_BASE", "Generator base"))
	put("#i20#cl_gen_base.clas.abap", `CLASS /i20/cl_gen_base DEFINITION PUBLIC ABSTRACT CREATE PUBLIC.
  PUBLIC SECTION.
    TYPES: BEGIN OF feature_set,
             with_texts TYPE abap_bool,
           END OF feature_set.
  PROTECTED SECTION.
    TYPES counter TYPE int4.
ENDCLASS.

CLASS /i20/cl_gen_base IMPLEMENTATION.
ENDCLASS.
`)
	put("#i20#cl_gen_carrier.clas.xml", clas("/I20/CL_GEN_CARRIER", "Carrier generator"))
	put("#i20#cl_gen_carrier.clas.abap", `CLASS /i20/cl_gen_carrier DEFINITION PUBLIC FINAL INHERITING FROM /i20/cl_gen_base CREATE PUBLIC.
  PUBLIC SECTION.
    METHODS run RETURNING VALUE(rv_count) TYPE int4.
ENDCLASS.

CLASS /i20/cl_gen_carrier IMPLEMENTATION.
  METHOD run.
    DATA(features) = VALUE feature_set( with_texts = abap_true ).
    DATA lv_rows TYPE counter.
    DATA lv_tabix LIKE sy-tabix.
    IF features-with_texts = abap_true.
      lv_rows = lines( VALUE string_table( ( `+"`a`"+` ) ) ).
    ENDIF.
    lv_tabix = sy-tabix.
    rv_count = lv_rows + lv_tabix.
  ENDMETHOD.
ENDCLASS.
`)
	put("#i20#c_carrier.ddls.asddls", `@EndUserText.label: 'Carrier'
@AccessControl.authorizationCheck: #NOT_REQUIRED
define view entity /I20/C_Carrier as select from I_Currency
  association [0..*] to I_CurrencyText as _Text on $projection.Currency = _Text.Currency
{
  key Currency,
      _Text[ 1: Language = $session.system_language ].CurrencyName as CurrencyName,
      _Text
}
`)
	put("#i20#c_carrier.ddls.xml", `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0" serializer="LCL_OBJECT_DDLS" serializer_version="v1.0.0">
 <asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0">
  <asx:values>
   <DDLS><DDLNAME>/I20/C_CARRIER</DDLNAME><DDLANGUAGE>E</DDLANGUAGE><DDTEXT>Carrier</DDTEXT><SOURCE_TYPE>W</SOURCE_TYPE></DDLS>
  </asx:values>
 </asx:abap>
</abapGit>
`)
	put("#i20#c_carriertp.ddls.asddls", `@EndUserText.label: 'Carrier projection'
define view entity /I20/C_CarrierTP as projection on /I20/C_Carrier
{
  key Currency,
      _Text.CurrencyName as Name : localized
}
`)
	put("#i20#c_carriertp.ddls.xml", `<?xml version="1.0" encoding="utf-8"?>
<abapGit version="v1.0.0" serializer="LCL_OBJECT_DDLS" serializer_version="v1.0.0">
 <asx:abap xmlns:asx="http://www.sap.com/abapxml" version="1.0">
  <asx:values>
   <DDLS><DDLNAME>/I20/C_CARRIERTP</DDLNAME><DDLANGUAGE>E</DDLANGUAGE><DDTEXT>Carrier projection</DDTEXT><SOURCE_TYPE>P</SOURCE_TYPE></DDLS>
  </asx:values>
 </asx:abap>
</abapGit>
`)
	s := ecc(t)
	rep, err := s.LoadABAPGitReport(dir)
	require.NoError(t, err)
	require.Equal(t, 4, rep.Loaded, rep.String())
	objects := map[string]bool{"CLAS /I20/CL_GEN_BASE": true, "CLAS /I20/CL_GEN_CARRIER": true, "DDLS /I20/C_CARRIER": true, "DDLS /I20/C_CARRIERTP": true}
	for o, res := range gradeLoaded(t, s, objects) {
		for _, r := range res.Reasons {
			if r.Level != cleancore.LevelA {
				t.Errorf("%s uses %s %s (%s): level %s, %s", o, r.Usage.Type, r.Usage.Name, r.Usage.Kind, r.Level, r.Why)
			}
		}
		if res.Level != cleancore.LevelA {
			t.Errorf("%s: level %s, want A", o, res.Level)
		}
	}
}
