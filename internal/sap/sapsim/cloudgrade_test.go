package sapsim

import (
	"os"
	"path/filepath"
	"testing"

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
