package abapref

import (
	"fmt"
	"testing"
)

// TestNoFalsePositives covers the false positives and misses found against
// abaplint on real repositories (issue 20): each case names the references the
// source must give ("kind TYPE NAME") and those it must not.
func TestNoFalsePositives(t *testing.T) {
	cases := []struct {
		name, typ, src string
		want, not      []string
	}{
		{
			name: "RAP derived types are type uses of the entity",
			src: `CLASS lhc_travel DEFINITION INHERITING FROM cl_abap_behavior_handler.
  PRIVATE SECTION.
    METHODS accept FOR MODIFY IMPORTING keys FOR ACTION travel~accept RESULT result.
ENDCLASS.
CLASS lhc_travel IMPLEMENTATION.
  METHOD accept.
    DATA lt_create TYPE TABLE FOR CREATE zi_travel.
    DATA ls_read TYPE STRUCTURE FOR READ RESULT zi_travel\_booking.
    DATA ls_failed TYPE RESPONSE FOR FAILED EARLY zi_travel.
    DATA ls_req TYPE REQUEST FOR CHANGE zi_booking.
    DATA lt_act TYPE TABLE FOR ACTION IMPORT zi_travel~accept.
    DATA ls_perm TYPE STRUCTURE FOR PERMISSIONS REQUEST zi_agency.
    DATA lt_key TYPE TABLE FOR KEY OF zi_customer.
    DATA lt_link TYPE TABLE FOR READ LINK zi_flight\_booking.
    DATA lt_keys LIKE keys.
    DATA lt_res LIKE result.
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{"type DDLS ZI_TRAVEL", "type DDLS ZI_BOOKING", "type DDLS ZI_AGENCY", "type DDLS ZI_CUSTOMER",
				"type DDLS ZI_FLIGHT", "implement CLAS CL_ABAP_BEHAVIOR_HANDLER"},
			not: []string{"type TYPE FOR", "type TYPE CREATE", "type TYPE RESPONSE", "type TYPE REQUEST", "type TYPE KEYS", "type TYPE RESULT", "type TYPE FAILED",
				"type TYPE PERMISSIONS", "type TYPE KEY", "type TYPE READ", "type DDLS REQUEST"},
		},
		{
			name: "AUGMENTING in a behaviour pool is no table",
			src: `CLASS lhc DEFINITION INHERITING FROM cl_abap_behavior_handler.
ENDCLASS.
CLASS lhc IMPLEMENTATION.
  METHOD augment.
    MODIFY AUGMENTING ENTITIES OF zi_travel ENTITY travel UPDATE FIELDS ( description ) WITH lt_upd.
    MODIFY ENTITIES OF zi_booking IN LOCAL MODE ENTITY booking DELETE FROM lt_del.
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{"write BDEF ZI_TRAVEL", "write BDEF ZI_BOOKING"},
			not:  []string{"write TABL AUGMENTING"},
		},
		{
			name: "LIKE a variable, STRUCTURE a variable, the word after TYPE any",
			src: `CLASS lcl DEFINITION.
  PUBLIC SECTION.
    METHODS m IMPORTING iv_any TYPE any OPTIONAL iv_data TYPE data DEFAULT space
                        it_tab TYPE STANDARD TABLE OPTIONAL.
ENDCLASS.
CLASS lcl IMPLEMENTATION.
  METHOD m.
    DATA lt_copy LIKE mt_attribute_of_superclass.
  ENDMETHOD.
ENDCLASS.
DATA gs_line TYPE zline.
FORM f TABLES pt_lines STRUCTURE gs_line.
ENDFORM.
`,
			not: []string{"type TYPE OPTIONAL", "type TYPE DEFAULT", "type TYPE MT_ATTRIBUTE_OF_SUPERCLASS", "type TYPE GS_LINE", "type TABL GS_LINE"},
		},
		{
			name: "pragmas are no objects and do not hide the next statement",
			src: `FUNCTION z_post.
  DATA lv_unused TYPE i ##NEEDED.
  TRY.
      lv_unused = 1.
    CATCH cx_sy_arithmetic_error ##NO_HANDLER.
  ENDTRY.
  ##FM_PAR_MIS
  CALL FUNCTION 'BAPI_ACC_DOCUMENT_POST'
    EXPORTING documentheader = ls_header.
ENDFUNCTION.
`,
			want: []string{"call FUNC BAPI_ACC_DOCUMENT_POST", "type CLAS CX_SY_ARITHMETIC_ERROR"},
			not:  []string{"type CLAS ##NO_HANDLER", "type TYPE ##NEEDED"},
		},
		{
			name: "local enums are local types",
			src: `CLASS lcl DEFINITION.
  PUBLIC SECTION.
    TYPES: BEGIN OF ENUM ty_status STRUCTURE status,
             open, done,
           END OF ENUM ty_status STRUCTURE status.
    DATA mv_status TYPE ty_status.
    METHODS set IMPORTING iv TYPE ty_status.
ENDCLASS.
`,
			not: []string{"type TYPE TY_STATUS", "type TYPE ENUM"},
		},
		{
			name: "AMDP bodies are SQLScript, not ABAP",
			src: `CLASS zcl_amdp DEFINITION PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_amdp_marker_hdb.
    METHODS run.
ENDCLASS.
CLASS zcl_amdp IMPLEMENTATION.
  METHOD run BY DATABASE PROCEDURE FOR HDB LANGUAGE SQLSCRIPT OPTIONS READ-ONLY USING zsales_data.
    declare lv_x integer;
    select 1 into lv_x from dummy;
    lt_out = select * from :lt_in where x = 'a'.b;
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{"implement INTF IF_AMDP_MARKER_HDB", "read TABL ZSALES_DATA"},
			not:  []string{"read TABL DUMMY"},
		},
		{
			name: "a component named type keeps its real type",
			src: `REPORT zcomp.
TYPES: BEGIN OF ty_line,
         type TYPE zfi_doc_type,
         like TYPE bukrs,
       END OF ty_line.
DATA type TYPE zfi_other_type.
`,
			want: []string{"type TYPE ZFI_DOC_TYPE", "type TYPE BUKRS", "type TYPE ZFI_OTHER_TYPE"},
			not:  []string{"type TYPE TYPE", "type TYPE LIKE"},
		},
		{
			name: "FOR EVENT … OF class",
			src: `CLASS lcl_handler DEFINITION.
  PUBLIC SECTION.
    METHODS on_click FOR EVENT link_click OF cl_salv_events_table IMPORTING row column.
    CLASS-METHODS on_done FOR EVENT finished OF if_bgrfc_unit.
ENDCLASS.
`,
			want: []string{"type CLAS CL_SALV_EVENTS_TABLE", "type INTF IF_BGRFC_UNIT"},
		},
		{
			name: "function-module interface types, new syntax and the comment block",
			src: `FUNCTION z_fm_interface
  IMPORTING
    VALUE(iv_bukrs) TYPE bukrs
  EXPORTING
    es_return TYPE bapiret2
  TABLES
    t_items STRUCTURE bapiacgl09.
ENDFUNCTION.
FUNCTION z_fm_old.
*"----------------------------------------------------------------------
*"*"Local Interface:
*"  IMPORTING
*"     VALUE(I_DATE) LIKE  SY-DATUM
*"     REFERENCE(I_KUNNR) TYPE  KUNNR OPTIONAL
*"  EXPORTING
*"     VALUE(E_NAME) TYPE  NAME1_GP
*"  TABLES
*"      T_RETURN STRUCTURE  BAPIRET2
*"----------------------------------------------------------------------
  e_name = i_kunnr.
ENDFUNCTION.
`,
			want: []string{"type TYPE BUKRS", "type TYPE BAPIRET2", "type TABL BAPIACGL09", "type TABL SYST",
				"type TYPE KUNNR", "type TYPE NAME1_GP", "type TABL BAPIRET2"},
		},
		{
			name: "a *\" comment outside a function module is a comment",
			src: `REPORT zdoc.
*"  see the note: VALUE(x) TYPE zsomething_in_a_comment
WRITE 'x'.
`,
			not: []string{"type TYPE ZSOMETHING_IN_A_COMMENT"},
		},
		{
			name: "DCL: inheriting conditions from entity",
			typ:  "DCLS",
			src: `@EndUserText.label: 'Travel access'
define role ZI_TRAVEL_DCL {
  grant select on ZI_Travel
    where inheriting conditions from entity I_Customer;
  grant select on ZI_Booking
    where inheriting conditions from super;
}
`,
			want: []string{"read DDLS ZI_TRAVEL", "read DDLS I_CUSTOMER", "read DDLS ZI_BOOKING"},
			not:  []string{"read TABL ENTITY", "read TABL SUPER"},
		},
		{
			name: "CDS cast types",
			typ:  "DDLS",
			src: `define view entity ZI_Cast as select from zcast_tab {
  key cast( id as zde_cast_id preserving type ) as Id,
  cast( amount as abap.dec( 15, 2 ) ) as Amount,
  cast( cast( flag as abap_boolean ) as xfeld ) as Flag
}
`,
			want: []string{"read TABL ZCAST_TAB", "type DTEL ZDE_CAST_ID", "type DTEL ABAP_BOOLEAN", "type DTEL XFELD"},
			not:  []string{"type DTEL ABAP"},
		},
		{
			name: "INTERFACES and intf~comp name interfaces whatever their prefix",
			src: `CLASS zcl_log DEFINITION PUBLIC.
  PUBLIC SECTION.
    INTERFACES zbc_logger.
    DATA mv_level TYPE zbc_level_api~ty_level.
ENDCLASS.
`,
			want: []string{"implement INTF ZBC_LOGGER", "type INTF ZBC_LEVEL_API"},
			not:  []string{"implement CLAS ZBC_LOGGER", "type CLAS ZBC_LEVEL_API"},
		},
		{
			name: "association targets typed like data sources: a table is no view",
			typ:  "DDLS",
			src: `define view entity ZI_Order as select from zorder
  association [0..1] to zorder_note as _Note on _Note.id = $projection.Id
  association [0..1] to I_Currency as _Currency on _Currency.Currency = $projection.Waers
{ key id as Id, waers as Waers, _Note, _Currency }
`,
			want: []string{"association TABL ZORDER_NOTE", "association DDLS I_CURRENCY"},
			not:  []string{"association DDLS ZORDER_NOTE"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typ := c.typ
			if typ == "" {
				typ = "PROG"
			}
			got := map[string]bool{}
			for _, r := range Extract(typ, c.src) {
				got[fmt.Sprintf("%s %s %s", r.Kind, r.Type, r.Name)] = true
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("missing %q; got %v", w, got)
				}
			}
			for _, n := range c.not {
				if got[n] {
					t.Errorf("false positive %q", n)
				}
			}
		})
	}
}
