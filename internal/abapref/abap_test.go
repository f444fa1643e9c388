package abapref

import (
	"fmt"
	"strings"
	"testing"
)

func refStrings(refs []Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = fmt.Sprintf("%s %s %s %d", r.Kind, r.Type, r.Name, r.Line)
	}
	return out
}

func TestABAP(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string // "kind TYPE NAME line", in line order
	}{
		{
			name: "FI open items: SELECT with join, FOR ALL ENTRIES, SELECT SINGLE",
			src: `REPORT zfi_open_items.
TABLES: bkpf.
DATA: gt_bkpf TYPE STANDARD TABLE OF bkpf,
      gt_bseg TYPE STANDARD TABLE OF bseg WITH DEFAULT KEY,
      gv_name TYPE t001-butxt.
SELECT-OPTIONS s_bukrs FOR bkpf-bukrs.
SELECT * FROM bkpf INTO TABLE gt_bkpf WHERE bukrs IN s_bukrs.
IF gt_bkpf IS NOT INITIAL.
  SELECT * FROM bseg INTO TABLE gt_bseg
    FOR ALL ENTRIES IN gt_bkpf
    WHERE bukrs = gt_bkpf-bukrs AND belnr = gt_bkpf-belnr.
ENDIF.
SELECT SINGLE butxt FROM t001 INTO gv_name WHERE bukrs = '1000'.
`,
			want: []string{
				"type TABL BKPF 2", "type TYPE BKPF 3", "read TABL BKPF 7", "type TYPE BSEG 4",
				"type TABL T001 5", "read TABL BSEG 9", "read TABL T001 13",
			},
		},
		{
			name: "comments and literals with keywords make no references",
			src: `REPORT zdemo.
* SELECT * FROM bkpf. CALL FUNCTION 'BAPI_X'.
  " SELECT * FROM bseg
DATA lv_text TYPE string VALUE 'SELECT * FROM vbak'.
lv_text = |CALL FUNCTION 'Z_NOT_CALLED' { lv_text } FROM vbap|.
lv_text = ` + "`INSERT zlog FROM wa`" + `.
WRITE: / 'DELETE FROM kna1', lv_text. " UPDATE lfa1 SET x = 1.
`,
			want: nil,
		},
		{
			name: "string template expressions are code",
			src: `REPORT zdemo.
MESSAGE |User { cl_abap_context_info=>get_user_technical_name( ) } at { sy-uzeit }| TYPE 'S'.
`,
			want: []string{"call CLAS CL_ABAP_CONTEXT_INFO 2"},
		},
		{
			name: "BAPI calls, commit, dynamic names skipped",
			src: `FUNCTION z_sd_create_order.
  DATA: ls_header TYPE bapisdhd1,
        lt_return TYPE STANDARD TABLE OF bapiret2,
        lv_fm     TYPE rs38l_fnam VALUE 'Z_DYNAMIC'.
  CALL FUNCTION 'BAPI_SALESORDER_CREATEFROMDAT2'
    EXPORTING order_header_in = ls_header
    TABLES    return          = lt_return.
  CALL FUNCTION 'BAPI_TRANSACTION_COMMIT' EXPORTING wait = 'X'.
  CALL FUNCTION lv_fm.
  CALL FUNCTION 'Z_ASYNC_LOG' STARTING NEW TASK 'T1'.
  CALL FUNCTION 'Z_UPD_LOG' IN UPDATE TASK.
ENDFUNCTION.
`,
			want: []string{
				"type TYPE BAPISDHD1 2", "type TYPE BAPIRET2 3", "type TYPE RS38L_FNAM 4",
				"call FUNC BAPI_SALESORDER_CREATEFROMDAT2 5", "call FUNC BAPI_TRANSACTION_COMMIT 8",
				"call FUNC Z_ASYNC_LOG 10", "call FUNC Z_UPD_LOG 11",
			},
		},
		{
			name: "writes on database tables, internal-table forms skipped",
			src: `REPORT zsd_bonus_update.
DATA: lt_bonus TYPE STANDARD TABLE OF zsd_bonus,
      ls_bonus TYPE zsd_bonus,
      lt_kunnr TYPE STANDARD TABLE OF kunnr.
INSERT zsd_bonus FROM TABLE lt_bonus.
INSERT INTO zsd_log VALUES ls_bonus.
UPDATE zsd_bonus SET bonus = 0 WHERE kunnr = '1'.
MODIFY zsd_bonus FROM ls_bonus.
MODIFY zsd_hist FROM TABLE @lt_bonus.
DELETE FROM zsd_tmp WHERE erdat < sy-datum.
DELETE zsd_arch FROM ls_bonus.
INSERT ls_bonus INTO TABLE lt_bonus.
INSERT ls_bonus INTO lt_bonus INDEX 1.
APPEND ls_bonus TO lt_bonus.
MODIFY lt_bonus FROM ls_bonus INDEX 1.
MODIFY lt_bonus FROM ls_bonus TRANSPORTING bonus WHERE kunnr = '2'.
MODIFY TABLE lt_bonus FROM ls_bonus.
DELETE lt_bonus WHERE bonus = 0.
DELETE lt_bonus INDEX 1.
DELETE ADJACENT DUPLICATES FROM lt_kunnr.
DELETE TABLE lt_bonus FROM ls_bonus.
MODIFY lt_bonus FROM ls_bonus.
DELETE lt_bonus FROM 2 TO 3.
MODIFY SCREEN.
`,
			want: []string{
				"type TYPE ZSD_BONUS 2", "type TYPE KUNNR 4",
				"write TABL ZSD_BONUS 5", "write TABL ZSD_LOG 6", "write TABL ZSD_HIST 9",
				"write TABL ZSD_TMP 10", "write TABL ZSD_ARCH 11",
			},
		},
		{
			name: "classes: TYPE REF TO, NEW, static calls, CALL METHOD, CREATE OBJECT, exceptions",
			src: `CLASS lcl_app DEFINITION.
  PUBLIC SECTION.
    METHODS run RAISING cx_salv_msg zcx_app_error.
ENDCLASS.
CLASS lcl_app IMPLEMENTATION.
  METHOD run.
    DATA: lo_alv    TYPE REF TO cl_salv_table,
          lo_log    TYPE REF TO if_bali_log,
          lr_data   TYPE REF TO data,
          lo_self   TYPE REF TO lcl_app,
          lo_http   TYPE REF TO zcl_http_client.
    DATA(lo_reader) = NEW zcl_fi_doc_reader( iv_bukrs = '1000' ).
    lo_self = NEW #( ).
    lo_log = cl_bali_log=>create( ).
    CALL METHOD zcl_fi_posting=>post EXPORTING iv_test = abap_true.
    CREATE OBJECT lo_http TYPE zcl_http_client_impl.
    CREATE OBJECT lo_alv.
    DATA(lv_tab) = cl_abap_char_utilities=>horizontal_tab.
    TRY.
        lo_reader->read( ).
      CATCH zcx_fi_error cx_sy_zerodivide INTO DATA(lx).
        RAISE EXCEPTION TYPE zcx_app_error EXPORTING previous = lx.
    ENDTRY.
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{
				"type CLAS CX_SALV_MSG 3", "type CLAS ZCX_APP_ERROR 3",
				"type CLAS CL_SALV_TABLE 7", "type INTF IF_BALI_LOG 8", "type CLAS ZCL_HTTP_CLIENT 11",
				"instantiate CLAS ZCL_FI_DOC_READER 12", "call CLAS CL_BALI_LOG 14", "call CLAS ZCL_FI_POSTING 15",
				"instantiate CLAS ZCL_HTTP_CLIENT_IMPL 16", "instantiate CLAS CL_SALV_TABLE 17",
				"attribute CLAS CL_ABAP_CHAR_UTILITIES 18", "type CLAS ZCX_FI_ERROR 21", "type CLAS CX_SY_ZERODIVIDE 21",
			},
		},
		{
			name: "own class and its types are not references; interfaces and superclass are",
			src: `CLASS zcl_sd_pricing DEFINITION PUBLIC INHERITING FROM zcl_sd_base CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES zif_sd_pricing.
    TYPES tt_cond TYPE STANDARD TABLE OF prcd_elements WITH EMPTY KEY.
    CLASS-METHODS get RETURNING VALUE(ro) TYPE REF TO zcl_sd_pricing.
    METHODS calc IMPORTING it_cond TYPE tt_cond RETURNING VALUE(rv) TYPE kwert.
ENDCLASS.
CLASS zcl_sd_pricing IMPLEMENTATION.
  METHOD get.
    ro = NEW zcl_sd_pricing( ).
    DATA(lt) = VALUE tt_cond( ).
    DATA(lv) = CONV kwert( 0 ).
    zcl_sd_pricing=>get( ).
  ENDMETHOD.
  METHOD zif_sd_pricing~price.
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{
				"implement CLAS ZCL_SD_BASE 1", "implement INTF ZIF_SD_PRICING 3",
				"type TYPE PRCD_ELEMENTS 4", "type TYPE KWERT 6",
			},
		},
		{
			name: "includes, structures, type pools, SUBMIT, transactions, PERFORM in program",
			src: `PROGRAM zsd_main.
TYPE-POOLS: slis, abap.
INCLUDE zsd_main_top.
INCLUDE zsd_main_f01.
DATA: BEGIN OF gs_out.
        INCLUDE STRUCTURE vbak.
DATA:   kunnr_name TYPE name1_gp,
      END OF gs_out.
TYPES: BEGIN OF ty_x.
         INCLUDE TYPE vbap.
TYPES: END OF ty_x.
SUBMIT zsd_reprice AND RETURN.
SUBMIT (gv_prog).
CALL TRANSACTION 'VA03' AND SKIP FIRST SCREEN.
LEAVE TO TRANSACTION 'VA01'.
PERFORM get_data IN PROGRAM saplzsd_util. CLASS cl_gui_cfw DEFINITION LOAD.
PERFORM check(zsd_forms) USING gs_out.
AUTHORITY-CHECK OBJECT 'V_VBAK_VKO' ID 'ACTVT' FIELD '03'.
MESSAGE e042(zsd) WITH gs_out-vbeln.
`,
			want: []string{
				"type TYPE SLIS 2", "type TYPE ABAP 2", "include PROG ZSD_MAIN_TOP 3", "include PROG ZSD_MAIN_F01 4",
				"type TABL VBAK 6", "type TYPE NAME1_GP 7", "type TYPE VBAP 10", "call PROG ZSD_REPRICE 12",
				"call TRAN VA03 14", "call TRAN VA01 15", "call PROG SAPLZSD_UTIL 16", "type CLAS CL_GUI_CFW 16", "call PROG ZSD_FORMS 17",
				"authority SUSO V_VBAK_VKO 18", "message MSAG ZSD 19",
			},
		},
		{
			name: "BAdIs and enhancement points",
			src: `REPORT zbadi_demo.
DATA lo_badi TYPE REF TO zbadi_fi_check.
GET BADI lo_badi.
CALL BADI lo_badi->check EXPORTING is_bkpf = ls_bkpf.
ENHANCEMENT-POINT zep_before_post SPOTS zes_fi_post STATIC.
ENHANCEMENT 1 zei_fi_post_log.    "active version
ENDENHANCEMENT.
`,
			want: []string{"badi BADI ZBADI_FI_CHECK 3", "enhancement ENHS ZES_FI_POST 5", "enhancement ENHO ZEI_FI_POST_LOG 6"},
		},
		{
			name: "new Open SQL: subqueries, CTE, parenthesised joins, dynamic and host sources",
			src: `REPORT zsql.
SELECT vbeln, kunnr FROM vbak
  WHERE kunnr IN ( SELECT kunnr FROM kna1 WHERE land1 = 'DE' )
    AND EXISTS ( SELECT * FROM vbap WHERE vbap~vbeln = vbak~vbeln )
  INTO TABLE @DATA(lt_orders).
SELECT * FROM ( vbrk AS k INNER JOIN vbrp AS p ON p~vbeln = k~vbeln ) INTO TABLE @DATA(lt_inv).
SELECT a~matnr FROM mara AS a LEFT OUTER JOIN makt AS t ON t~matnr = a~matnr INTO TABLE @DATA(lt_mat).
SELECT * FROM @lt_orders AS o INTO TABLE @DATA(lt_copy).
SELECT * FROM (lv_table) INTO TABLE @DATA(lt_dyn).
WITH +c AS ( SELECT kunnr FROM knvv ) SELECT * FROM +c INTO TABLE @DATA(lt_c).
SELECT * FROM i_journalentry INTO TABLE @DATA(lt_je) UP TO 10 ROWS.
OPEN CURSOR WITH HOLD @DATA(lv_c) FOR SELECT * FROM acdoca.
`,
			want: []string{
				"read TABL VBAK 2", "read TABL KNA1 3", "read TABL VBAP 4", "read TABL VBRK 6", "read TABL VBRP 6",
				"read TABL MARA 7", "read TABL MAKT 7", "read TABL KNVV 10", "read DDLS I_JOURNALENTRY 11",
				"read TABL ACDOCA 12",
			},
		},
		{
			name: "WHERE … LIKE is an operator, LIKE in declarations is a type",
			src: `REPORT zlike.
DATA: lv_vbeln LIKE vbak-vbeln,
      lv_copy  LIKE lv_vbeln,
      lt_copy  LIKE TABLE OF lv_vbeln,
      lv_date  LIKE sy-datum,
      lv_time  TYPE sy-uzeit.
SELECT * FROM kna1 WHERE name1 LIKE 'A%' INTO TABLE @DATA(lt_k).
`,
			want: []string{"type TABL VBAK 2", "type TABL SYST 5", "read TABL KNA1 7"},
		},
		{
			name: "cluster tables and chained WRITE",
			src: `REPORT zcluster.
EXPORT gt_data TO DATABASE indx(zz) ID 'KEY'.
IMPORT gt_data FROM DATABASE zindx_fi(zz) ID 'KEY'.
DELETE FROM DATABASE indx(zz) ID 'KEY'.
WRITE: / 'a', 'b'.
`,
			want: []string{"write TABL INDX 2", "read TABL ZINDX_FI 3"},
		},
		{
			name: "RAP EML, CAST, CASTING, CREATE DATA",
			src: `CLASS lhc_travel IMPLEMENTATION.
  METHOD approve.
    READ ENTITIES OF zi_travel IN LOCAL MODE ENTITY travel ALL FIELDS WITH CORRESPONDING #( keys ) RESULT DATA(lt).
    MODIFY ENTITIES OF zi_travel IN LOCAL MODE ENTITY travel UPDATE FIELDS ( status ) WITH VALUE #( ).
    DATA(lo_desc) = CAST cl_abap_structdescr( cl_abap_typedescr=>describe_by_name( 'VBAK' ) ).
    ASSIGN lr_data->* TO <ls> CASTING TYPE bseg.
    CREATE DATA lr_data TYPE STANDARD TABLE OF ekko.
  ENDMETHOD.
ENDCLASS.
`,
			want: []string{"read BDEF ZI_TRAVEL 3", "write BDEF ZI_TRAVEL 4", "type CLAS CL_ABAP_STRUCTDESCR 5",
				"call CLAS CL_ABAP_TYPEDESCR 5", "type TYPE BSEG 6", "type TYPE EKKO 7"},
		},
		{
			name: "case-insensitive, statements across lines, several per line",
			src: `report zmix.
select single * from Bkpf into @data(ls) where belnr = '1'. call function
  'bapi_acc_document_post'. Data lo type ref to Cl_Gui_Alv_Grid.
`,
			want: []string{"read TABL BKPF 2", "call FUNC BAPI_ACC_DOCUMENT_POST 3", "type CLAS CL_GUI_ALV_GRID 3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := refStrings(ABAP(tc.src))
			if !sameSet(got, tc.want) {
				t.Errorf("refs\n got: %s\nwant: %s", strings.Join(got, ", "), strings.Join(tc.want, ", "))
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}
