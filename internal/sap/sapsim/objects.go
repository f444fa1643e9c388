package sapsim

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

// object is a customer repository object with its source.
type object struct {
	Type        string // PROG, CLAS, FUNC, DDLS, ENHO, INCL, TABL, INTF
	Name        string
	Description string
	Package     string
	Group       string // function group of a FUNC
	CreatedBy   string
	ChangedAt   string
	Source      string
	Params      []sap.Parameter
	Implements  string // BAdI or enhancement spot an ENHO implements
	Kind        string // enhancement kind: badi, user_exit, append, key_user_field, cds_extension

	Exceptions []string // of a function module

	Seq       int64         // change-log seq of the last change (0: older than the log)
	extraRefs []abapref.Ref // references its XML names (an enhancement's implementing class)
	refs      []abapref.Ref // what the object uses (WBCROSSGT), extracted on load/activation
	relCount  int           // number of its relationship items
	generated bool          // derived by the landscape generator from genIndex
	genIndex  int
	version   int    // of a generated object: raised by TouchCustomObjects
	createdOn string // the first activation's date once ChangedAt moved on ("": ChangedAt)
}

const zrSalesReport = `REPORT zr_sales_report.
*----------------------------------------------------------------------*
* Sales report per customer: orders, items and net values.
* Reads VBAK/VBAP directly and uses BAPI_SALESORDER_GETLIST for checks.
*----------------------------------------------------------------------*
TABLES: vbak.

SELECT-OPTIONS: s_kunnr FOR vbak-kunnr,
                s_erdat FOR vbak-erdat.
PARAMETERS: p_vkorg TYPE vkorg DEFAULT '1000'.

TYPES: BEGIN OF ty_line,
         vbeln TYPE vbak-vbeln,
         kunnr TYPE vbak-kunnr,
         name1 TYPE kna1-name1,
         posnr TYPE vbap-posnr,
         matnr TYPE vbap-matnr,
         netwr TYPE vbap-netwr,
       END OF ty_line.
DATA: gt_lines  TYPE STANDARD TABLE OF ty_line,
      gt_orders TYPE STANDARD TABLE OF bapiorders,
      gt_return TYPE STANDARD TABLE OF bapiret2.

START-OF-SELECTION.
  SELECT k~vbeln k~kunnr c~name1 p~posnr p~matnr p~netwr
    FROM vbak AS k
    INNER JOIN vbap AS p ON p~vbeln = k~vbeln
    INNER JOIN kna1 AS c ON c~kunnr = k~kunnr
    INTO TABLE gt_lines
    WHERE k~kunnr IN s_kunnr
      AND k~erdat IN s_erdat
      AND k~vkorg = p_vkorg.

  LOOP AT s_kunnr INTO DATA(ls_kunnr).
    CALL FUNCTION 'BAPI_SALESORDER_GETLIST'
      EXPORTING
        customer_number    = ls_kunnr-low
        sales_organization = p_vkorg
      TABLES
        sales_orders       = gt_orders
        return             = gt_return.
  ENDLOOP.

  cl_salv_table=>factory( IMPORTING r_salv_table = DATA(lo_alv)
                          CHANGING  t_table      = gt_lines ).
  lo_alv->display( ).
`

const zrMaterialUpload = `REPORT zr_material_upload.
*----------------------------------------------------------------------*
* Legacy material upload: reads a file from the PC and creates
* materials with batch input on MM01 (no API).
*----------------------------------------------------------------------*
DATA: gt_file   TYPE STANDARD TABLE OF string,
      gt_bdc    TYPE STANDARD TABLE OF bdcdata,
      gt_msg    TYPE STANDARD TABLE OF bdcmsgcoll,
      gv_matnr  TYPE mara-matnr.

PARAMETERS: p_file TYPE string LOWER CASE.

START-OF-SELECTION.
  CALL FUNCTION 'GUI_UPLOAD'
    EXPORTING
      filename = p_file
    TABLES
      data_tab = gt_file.

  LOOP AT gt_file INTO DATA(lv_line).
    SPLIT lv_line AT ';' INTO gv_matnr DATA(lv_type) DATA(lv_text).
    SELECT SINGLE matnr FROM mara INTO @DATA(lv_exists) WHERE matnr = @gv_matnr.
    IF sy-subrc = 0.
      CONTINUE.
    ENDIF.
    CLEAR gt_bdc.
    PERFORM bdc_dynpro USING 'SAPLMGMM' '0060'.
    PERFORM bdc_field  USING 'RMMG1-MATNR' gv_matnr.
    PERFORM bdc_field  USING 'RMMG1-MTART' lv_type.
    PERFORM bdc_field  USING 'MAKT-MAKTX'  lv_text.
    CALL TRANSACTION 'MM01' USING gt_bdc MODE 'N' MESSAGES INTO gt_msg.
  ENDLOOP.

FORM bdc_dynpro USING program dynpro.
  APPEND VALUE #( program = program dynpro = dynpro dynbegin = 'X' ) TO gt_bdc.
ENDFORM.

FORM bdc_field USING fnam fval.
  APPEND VALUE #( fnam = fnam fval = fval ) TO gt_bdc.
ENDFORM.
`

const zrOpenItems = `REPORT zr_open_items_fi.
*----------------------------------------------------------------------*
* Open customer items per company code (reads BKPF/BSEG directly).
*----------------------------------------------------------------------*
PARAMETERS: p_bukrs TYPE bukrs DEFAULT '1000',
            p_gjahr TYPE gjahr DEFAULT '2025'.

SELECT h~belnr, h~budat, s~buzei, s~kunnr, s~dmbtr, s~shkzg
  FROM bkpf AS h
  INNER JOIN bseg AS s ON s~bukrs = h~bukrs AND s~belnr = h~belnr AND s~gjahr = h~gjahr
  WHERE h~bukrs = @p_bukrs
    AND h~gjahr = @p_gjahr
    AND s~kunnr <> @space
  INTO TABLE @DATA(gt_items).

SELECT saknr, txt50 FROM skat WHERE spras = @sy-langu AND ktopl = 'INT' INTO TABLE @DATA(gt_accounts).

LOOP AT gt_items INTO DATA(ls_item).
  WRITE: / ls_item-belnr, ls_item-budat, ls_item-kunnr, ls_item-dmbtr.
ENDLOOP.
`

const zfgPricingCalcBonus = `FUNCTION z_calc_bonus.
*"----------------------------------------------------------------------
*"*"Local Interface:
*"  IMPORTING
*"     VALUE(IV_KUNNR) TYPE  KUNNR
*"     VALUE(IV_GJAHR) TYPE  GJAHR OPTIONAL
*"  EXPORTING
*"     VALUE(EV_BONUS_PCT) TYPE  ZD_PCT
*"     VALUE(EV_REVENUE) TYPE  NETWR
*"  EXCEPTIONS
*"      CUSTOMER_NOT_FOUND
*"----------------------------------------------------------------------
  SELECT SINGLE kunnr FROM kna1 INTO @DATA(lv_kunnr) WHERE kunnr = @iv_kunnr.
  IF sy-subrc <> 0.
    RAISE customer_not_found.
  ENDIF.

  SELECT SINGLE zbonus_pct FROM zsales_bonus INTO @ev_bonus_pct WHERE kunnr = @iv_kunnr.

  " Revenue from pricing conditions (KONV is replaced by PRCD_ELEMENTS in S/4HANA)
  SELECT SUM( k~kwert ) FROM konv AS k
    INNER JOIN vbak AS v ON v~knumv = k~knumv
    WHERE v~kunnr = @iv_kunnr
    INTO @ev_revenue.
ENDFUNCTION.
`

const zclCustomerService = `CLASS zcl_customer_service DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    TYPES: BEGIN OF ty_customer,
             kunnr TYPE kunnr,
             name  TYPE name1_gp,
             city  TYPE ort01_gp,
             tier  TYPE zd_loyalty,
           END OF ty_customer.
    METHODS get_customer
      IMPORTING iv_kunnr           TYPE kunnr
      RETURNING VALUE(rs_customer) TYPE ty_customer
      RAISING   cx_static_check.
    METHODS log_access IMPORTING iv_kunnr TYPE kunnr.
ENDCLASS.

CLASS zcl_customer_service IMPLEMENTATION.
  METHOD get_customer.
    DATA: ls_address TYPE bapicustomer_04,
          ls_return  TYPE bapiret1.
    CALL FUNCTION 'BAPI_CUSTOMER_GETDETAIL2'
      EXPORTING
        customerno      = iv_kunnr
      IMPORTING
        customeraddress = ls_address
        return          = ls_return.
    IF ls_return-type = 'E'.
      RAISE EXCEPTION TYPE cx_sy_itab_line_not_found.
    ENDIF.
    SELECT SINGLE zz_loyalty_tier FROM kna1 INTO @rs_customer-tier WHERE kunnr = @iv_kunnr.
    rs_customer-kunnr = iv_kunnr.
    rs_customer-name  = ls_address-name.
    rs_customer-city  = ls_address-city.
    log_access( iv_kunnr ).
  ENDMETHOD.

  METHOD log_access.
    DATA(lv_user) = cl_abap_context_info=>get_user_technical_name( ).
    DATA(lv_date) = cl_abap_context_info=>get_system_date( ).
    MESSAGE |Customer { iv_kunnr } read by { lv_user } on { lv_date }| TYPE 'S'.
  ENDMETHOD.
ENDCLASS.
`

const zclPoHelper = `CLASS zcl_po_helper DEFINITION PUBLIC CREATE PUBLIC.
  PUBLIC SECTION.
    CLASS-METHODS create_po
      IMPORTING iv_vendor TYPE lifnr
                iv_matnr  TYPE matnr
                iv_menge  TYPE bstmg
      RETURNING VALUE(rv_ebeln) TYPE ebeln.
ENDCLASS.

CLASS zcl_po_helper IMPLEMENTATION.
  METHOD create_po.
    DATA: ls_header TYPE bapimepoheader,
          lt_items  TYPE STANDARD TABLE OF bapimepoitem,
          lt_return TYPE STANDARD TABLE OF bapiret2.
    ls_header-comp_code = '1000'.
    ls_header-doc_type  = 'NB'.
    ls_header-vendor    = iv_vendor.
    APPEND VALUE #( po_item = '00010' material = iv_matnr plant = '1000' quantity = iv_menge ) TO lt_items.
    CALL FUNCTION 'BAPI_PO_CREATE1'
      EXPORTING
        poheader         = ls_header
      IMPORTING
        exppurchaseorder = rv_ebeln
      TABLES
        poitem           = lt_items
        return           = lt_return.
    CALL FUNCTION 'BAPI_TRANSACTION_COMMIT' EXPORTING wait = abap_true.
  ENDMETHOD.
ENDCLASS.
`

const ziSalesOrder = `@AbapCatalog.sqlViewName: 'ZISALESORDER'
@AccessControl.authorizationCheck: #CHECK
@EndUserText.label: 'Sales orders with customer'
define view ZI_SALESORDER as select from vbak
  inner join kna1 on kna1.kunnr = vbak.kunnr
{
  key vbak.vbeln as SalesOrder,
      vbak.erdat as CreationDate,
      vbak.kunnr as SoldToParty,
      kna1.name1 as CustomerName,
      vbak.netwr as NetAmount,
      vbak.waerk as Currency
}
`

const zeiSdSales = `CLASS zcl_im_sd_sales_check DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_ex_badi_sd_sales.
ENDCLASS.

CLASS zcl_im_sd_sales_check IMPLEMENTATION.
  METHOD if_ex_badi_sd_sales~save_document_prepare.
    " Block orders for customers rated D in the legacy scoring.
    SELECT SINGLE zrating FROM zcust_rating INTO @DATA(lv_rating) WHERE kunnr = @fxvbak-kunnr.
    IF lv_rating = 'D'.
      MESSAGE e001(zsd) WITH fxvbak-kunnr.
    ENDIF.
  ENDMETHOD.
ENDCLASS.
`

const zeiPoCheck = `CLASS zcl_im_me_po_check DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_ex_me_process_po_cust.
ENDCLASS.

CLASS zcl_im_me_po_check IMPLEMENTATION.
  METHOD if_ex_me_process_po_cust~check.
    DATA(ls_header) = im_header->get_data( ).
    SELECT SINGLE lifnr FROM lfa1 INTO @DATA(lv_lifnr) WHERE lifnr = @ls_header-lifnr AND ktokk = 'LIEF'.
    IF sy-subrc <> 0.
      MESSAGE e002(zmm) WITH ls_header-lifnr.
    ENDIF.
  ENDMETHOD.
ENDCLASS.
`

const mv45afzz = `*---------------------------------------------------------------------*
*       FORM USEREXIT_SAVE_DOCUMENT (modification in MV45AFZZ)
*---------------------------------------------------------------------*
FORM userexit_save_document.
  " Copy the loyalty tier of the sold-to party into the order text.
  SELECT SINGLE zz_loyalty_tier FROM kna1 INTO @DATA(lv_tier) WHERE kunnr = @vbak-kunnr.
  IF lv_tier = 'GOLD'.
    vbak-zz_priority = 'X'.
  ENDIF.
  INCLUDE zxvvau04.
ENDFORM.
`

const zxvvau04 = `*&---------------------------------------------------------------------*
*& Include ZXVVAU04 (customer exit of SAPMV45A)
*&---------------------------------------------------------------------*
  DATA: ls_bonus TYPE zsales_bonus.
  SELECT SINGLE * FROM zsales_bonus INTO ls_bonus WHERE kunnr = vbak-kunnr.
  IF sy-subrc = 0 AND ls_bonus-zbonus_pct > 5.
    CALL FUNCTION 'POPUP_TO_CONFIRM'
      EXPORTING
        titlebar      = 'Bonus customer'
        text_question = 'Customer has a bonus above 5%. Continue?'.
  ENDIF.
`

const zrCustomerExport = `REPORT zr_customer_export.
*----------------------------------------------------------------------*
* Weekly customer export for the CRM (downloads a CSV to the PC).
*----------------------------------------------------------------------*
SELECT kunnr, name1, ort01, land1, zz_loyalty_tier FROM kna1 INTO TABLE @DATA(gt_kna1).
SELECT kunnr, zrating FROM zcust_rating INTO TABLE @DATA(gt_rating).

DATA gt_csv TYPE STANDARD TABLE OF string.
LOOP AT gt_kna1 INTO DATA(ls_kna1).
  READ TABLE gt_rating INTO DATA(ls_rating) WITH KEY kunnr = ls_kna1-kunnr.
  APPEND |{ ls_kna1-kunnr };{ ls_kna1-name1 };{ ls_kna1-ort01 };{ ls_kna1-land1 };{ ls_rating-zrating }| TO gt_csv.
ENDLOOP.

CALL METHOD cl_gui_frontend_services=>gui_download
  EXPORTING
    filename = 'C:\temp\customers.csv'
  CHANGING
    data_tab = gt_csv.
`

const zrStockReport = `REPORT zr_stock_report.
*----------------------------------------------------------------------*
* Stock per plant with material descriptions (MARD/MAKT) and movements (MSEG).
*----------------------------------------------------------------------*
PARAMETERS p_werks TYPE werks_d DEFAULT '1000'.

SELECT d~matnr, t~maktx, d~lgort, d~labst
  FROM mard AS d
  INNER JOIN makt AS t ON t~matnr = d~matnr AND t~spras = @sy-langu
  WHERE d~werks = @p_werks
  INTO TABLE @DATA(gt_stock).

SELECT mblnr, mjahr, zeile, bwart, matnr, menge FROM mseg
  WHERE werks = @p_werks AND bwart IN ('101', '261')
  INTO TABLE @DATA(gt_moves).

DATA(lv_info) = cl_abap_char_utilities=>horizontal_tab.
`

const s4ProductCheck = `CLASS zcl_product_sustainability DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    METHODS classify IMPORTING iv_product TYPE matnr RETURNING VALUE(rv_class) TYPE string.
ENDCLASS.

CLASS zcl_product_sustainability IMPLEMENTATION.
  METHOD classify.
    SELECT SINGLE yy1_sustainability FROM i_product WHERE product = @iv_product INTO @rv_class.
    IF rv_class IS INITIAL.
      rv_class = 'UNCLASSIFIED'.
    ENDIF.
    DATA(lv_today) = cl_abap_context_info=>get_system_date( ).
  ENDMETHOD.
ENDCLASS.
`

const s4SalesExt = `extend view entity I_SalesDocument with
{
  _Extension.YY1_CustomerPriority as YY1_CustomerPriority
}
`

const s4ZiCustomer = `@AccessControl.authorizationCheck: #CHECK
@EndUserText.label: 'Customers with sustainability class'
define view entity ZI_CUSTOMER_SUST as select from I_Customer
{
  key Customer,
      CustomerName,
      Country
}
`

// customObjects are the customer objects of a system.
func customObjects(systemType string) []*object {
	if systemType == "S4HANA" {
		return []*object{
			{Type: "CLAS", Name: "ZCL_PRODUCT_SUSTAINABILITY", Description: "Classify products by sustainability", Package: "ZS4_EXT", CreatedBy: "DEVELOPER", ChangedAt: "2025-09-12", Source: s4ProductCheck},
			{Type: "DDLS", Name: "ZI_CUSTOMER_SUST", Description: "Customers with sustainability class", Package: "ZS4_EXT", CreatedBy: "DEVELOPER", ChangedAt: "2025-09-14", Source: s4ZiCustomer},
			{Type: "DDLS", Name: "YY1_SALESDOC_EXT", Description: "Key-user extension of I_SalesDocument", Package: "$TMP", CreatedBy: "KEYUSER", ChangedAt: "2025-10-02", Source: s4SalesExt, Implements: "I_SALESDOCUMENT", Kind: "cds_extension"},
			{Type: "TABL", Name: "YY1_SUSTAINABILITY", Description: "Key-user custom field on the product (MARA)", Package: "$TMP", CreatedBy: "KEYUSER", ChangedAt: "2025-09-10", Implements: "MARA", Kind: "key_user_field"},
			{Type: "PROG", Name: "ZR_S4_SMOKE_TEST", Description: "Migration smoke test: counts per table", Package: "ZS4_MIG", CreatedBy: "MIGRATION", ChangedAt: "2025-11-01",
				Source: "REPORT zr_s4_smoke_test.\nSELECT COUNT(*) FROM kna1 INTO @DATA(lv_customers).\nSELECT COUNT(*) FROM mara INTO @DATA(lv_materials).\nSELECT COUNT(*) FROM acdoca INTO @DATA(lv_journal).\nWRITE: / lv_customers, lv_materials, lv_journal.\n"},
		}
	}
	return []*object{
		{Type: "PROG", Name: "ZR_SALES_REPORT", Description: "Sales report per customer", Package: "ZSD_REPORTS", CreatedBy: "JSMITH", ChangedAt: "2021-03-15", Source: zrSalesReport},
		{Type: "PROG", Name: "ZR_MATERIAL_UPLOAD", Description: "Legacy material upload (batch input MM01)", Package: "ZMM_MIGRATION", CreatedBy: "MMUELLER", ChangedAt: "2016-07-02", Source: zrMaterialUpload},
		{Type: "PROG", Name: "ZR_OPEN_ITEMS_FI", Description: "Open customer items per company code", Package: "ZFI_REPORTS", CreatedBy: "ABECKER", ChangedAt: "2019-11-20", Source: zrOpenItems},
		{Type: "PROG", Name: "ZR_CUSTOMER_EXPORT", Description: "Weekly customer CSV export for CRM", Package: "ZSD_INTERFACES", CreatedBy: "LROSSI", ChangedAt: "2018-05-09", Source: zrCustomerExport},
		{Type: "PROG", Name: "ZR_STOCK_REPORT", Description: "Stock per plant with movements", Package: "ZMM_REPORTS", CreatedBy: "MMUELLER", ChangedAt: "2020-02-27", Source: zrStockReport},
		{Type: "FUGR", Name: "ZFG_PRICING", Description: "Customer pricing and bonus", Package: "ZSD_PRICING", CreatedBy: "JSMITH", ChangedAt: "2017-10-11",
			Source: "FUNCTION-POOL zfg_pricing.\nINCLUDE lzfg_pricingtop.\nINCLUDE lzfg_pricinguxx.\n"},
		{Type: "FUNC", Name: "Z_CALC_BONUS", Description: "Calculate customer bonus from revenue", Package: "ZSD_PRICING", Group: "ZFG_PRICING", CreatedBy: "JSMITH", ChangedAt: "2022-01-18", Source: zfgPricingCalcBonus,
			Params: []sap.Parameter{p("IV_KUNNR", "import", "KUNNR", "Customer", false), p("IV_GJAHR", "import", "GJAHR", "Fiscal year", true),
				p("EV_BONUS_PCT", "export", "ZD_PCT", "Bonus percentage", false), p("EV_REVENUE", "export", "NETWR", "Revenue", false)}},
		{Type: "CLAS", Name: "ZCL_CUSTOMER_SERVICE", Description: "Customer read service with access log", Package: "ZSD_SERVICES", CreatedBy: "PDUBOIS", ChangedAt: "2023-06-30", Source: zclCustomerService},
		{Type: "CLAS", Name: "ZCL_PO_HELPER", Description: "Create purchase orders from MRP proposals", Package: "ZMM_SERVICES", CreatedBy: "KTANAKA", ChangedAt: "2022-09-05", Source: zclPoHelper},
		{Type: "DDLS", Name: "ZI_SALESORDER", Description: "Sales orders with customer", Package: "ZSD_CDS", CreatedBy: "SPATEL", ChangedAt: "2023-11-21", Source: ziSalesOrder},
		{Type: "ENHO", Name: "ZEI_SD_SALES_CHECK", Description: "BAdI BADI_SD_SALES: block D-rated customers", Package: "ZSD_ENH", CreatedBy: "JSMITH", ChangedAt: "2020-04-14", Source: zeiSdSales, Implements: "BADI_SD_SALES", Kind: "badi"},
		{Type: "ENHO", Name: "ZEI_ME_PO_CHECK", Description: "BAdI ME_PROCESS_PO_CUST: vendor account group check", Package: "ZMM_ENH", CreatedBy: "KTANAKA", ChangedAt: "2021-08-23", Source: zeiPoCheck, Implements: "ME_PROCESS_PO_CUST", Kind: "badi"},
		{Type: "INCL", Name: "MV45AFZZ", Description: "User exits of the sales order (modification)", Package: "VA", CreatedBy: "JSMITH", ChangedAt: "2015-02-03", Source: mv45afzz, Implements: "USEREXIT_SAVE_DOCUMENT", Kind: "user_exit"},
		{Type: "INCL", Name: "ZXVVAU04", Description: "Customer exit V45A0002 include", Package: "ZSD_EXITS", CreatedBy: "JSMITH", ChangedAt: "2015-02-03", Source: zxvvau04, Implements: "V45A0002", Kind: "user_exit"},
		{Type: "TABL", Name: "ZSALES_BONUS", Description: "Sales bonus percentage per customer", Package: "ZSD_PRICING", CreatedBy: "JSMITH", ChangedAt: "2017-10-11"},
		{Type: "TABL", Name: "ZCUST_RATING", Description: "Customer rating (legacy scoring)", Package: "ZSD_SCORING", CreatedBy: "LROSSI", ChangedAt: "2014-06-30"},
		{Type: "TABL", Name: "ZAKNA1", Description: "Append structure of KNA1: ZZ_LOYALTY_TIER", Package: "ZSD_APPENDS", CreatedBy: "JSMITH", ChangedAt: "2015-01-20", Implements: "KNA1", Kind: "append"},
		{Type: "TABL", Name: "ZAMARA", Description: "Append structure of MARA: ZZ_LEGACY_ID", Package: "ZMM_APPENDS", CreatedBy: "MMUELLER", ChangedAt: "2016-07-01", Implements: "MARA", Kind: "append"},
	}
}

// customFunction is the behaviour of a customer function module.
func customFunction(name string) func(s *System, u user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
	if name != "Z_CALC_BONUS" {
		return func(*System, user, sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{}}, nil
		}
	}
	return func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
		k := alpha(str(req.Imports, "IV_KUNNR"), 10)
		if _, ok := s.tables["KNA1"].rows[k]; !ok {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "ZSD", "010", "CUSTOMER_NOT_FOUND: customer %s", k)}}, nil
		}
		revenue := 0.0
		for _, h := range s.tables["VBAK"].rows {
			if h["KUNNR"] == k {
				v, _ := strconv.ParseFloat(h["NETWR"], 64)
				revenue += v
			}
		}
		pct := "0.00"
		if b, ok := s.tables["ZSALES_BONUS"].rows[k]; ok {
			pct = b["ZBONUS_PCT"]
		}
		return sap.ExecuteRFCResponse{Exports: map[string]any{"EV_BONUS_PCT": pct, "EV_REVENUE": fmt.Sprintf("%.2f", revenue)}, Return: []sap.BAPIReturn{}}, nil
	}
}

// seededChanges is the change history the system starts with (transports of the custom objects).
func seededChanges(systemType string, objects map[string]*object) []sap.Change {
	names := sortedNames(objects)
	var out []sap.Change
	for i, key := range names {
		o := objects[key]
		out = append(out, sap.Change{Seq: int64(i + 1), ObjectType: o.Type, ObjectName: o.Name, ChangeType: "created", ChangedAt: o.ChangedAt + "T09:00:00Z", ChangedBy: o.CreatedBy})
	}
	for i, key := range names {
		if i%2 == 0 {
			o := objects[key]
			out = append(out, sap.Change{Seq: int64(len(out) + 1), ObjectType: o.Type, ObjectName: o.Name, ChangeType: "modified", ChangedAt: "2025-10-0" + strconv.Itoa(1+i%9) + "T14:30:00Z", ChangedBy: o.CreatedBy})
		}
	}
	return out
}

// standardObjects are the SAP objects the repository search knows besides tables and
// function modules, with their Clean Core classification (SAP Cloudification Repository).
var standardObjects = map[string]struct{ typ, state, successor string }{
	"CL_ABAP_CONTEXT_INFO":     {"CLAS", "released", ""},
	"CL_ABAP_CHAR_UTILITIES":   {"CLAS", "released", ""},
	"CL_SALV_TABLE":            {"CLAS", "classicAPI", ""},
	"CL_GUI_FRONTEND_SERVICES": {"CLAS", "classicAPI", ""},
	"CL_BCS":                   {"CLAS", "notToBeReleased", "CL_BCS_MAIL_MESSAGE"},
	"I_PRODUCT":                {"DDLS", "released", ""},
	"I_CUSTOMER":               {"DDLS", "released", ""},
	"I_SALESDOCUMENT":          {"DDLS", "released", ""},
	"KONV":                     {"TABL", "notToBeReleased", "I_SLSPRCGCONDITIONRECORD"},
	"BADI_SD_SALES":            {"BADI", "unclassified", ""},
	"ME_PROCESS_PO_CUST":       {"BADI", "notToBeReleased", "MM_PUR_S4_PO_OPEN"},
	"POPUP_TO_CONFIRM":         {"FUNC", "classicAPI", ""},
	"GUI_UPLOAD":               {"FUNC", "classicAPI", ""},
}

func (s *System) source(typ, name string) (sap.ABAPSource, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, o := range s.sortedObjects() {
		if o.Name == name && (typ == "" || o.Type == typ) && o.Source != "" {
			return sap.ABAPSource{ObjectType: o.Type, Name: o.Name, Source: o.Source, Lines: strings.Count(o.Source, "\n") + 1}, nil
		}
	}
	if o, ok := s.generatedObject(typ, name); ok && o.Source != "" {
		return sap.ABAPSource{ObjectType: o.Type, Name: o.Name, Source: o.Source, Lines: strings.Count(o.Source, "\n") + 1}, nil
	}
	return sap.ABAPSource{}, errorf(http.StatusNotFound, sap.ErrNotFound, "NOT_FOUND", "no source for %s %s in %s", typ, name, s.info.SystemID)
}

// sortedObjects are the loaded custom objects in key order; callers hold s.mu.
func (s *System) sortedObjects() []*object {
	out := make([]*object, 0, len(s.matKeys))
	for _, k := range s.matKeys {
		out = append(out, s.objects[k])
	}
	return out
}

func wildcard(q string) *regexp.Regexp {
	q = strings.ToUpper(strings.TrimSpace(q))
	if !strings.Contains(q, "*") {
		q = "*" + q + "*"
	}
	parts := strings.Split(q, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// nameMatcher is wildcard matching without a regexp for the common shapes ("X", "*X*", "X*"),
// which a scan of a million generated names needs.
func nameMatcher(q string, re *regexp.Regexp) func(string) bool {
	q = strings.ToUpper(strings.TrimSpace(q))
	inner := strings.Trim(q, "*")
	if strings.Contains(inner, "*") {
		return re.MatchString
	}
	switch {
	case !strings.Contains(q, "*") || (strings.HasPrefix(q, "*") && strings.HasSuffix(q, "*")):
		return func(n string) bool { return strings.Contains(n, inner) }
	case strings.HasSuffix(q, "*"):
		return func(n string) bool { return strings.HasPrefix(n, inner) }
	}
	return func(n string) bool { return strings.HasSuffix(n, inner) }
}

func (s *System) searchObjects(req sap.SearchObjectsRequest) sap.SearchObjectsResponse {
	s.mu.RLock()
	defer s.mu.RUnlock()
	limit := req.Limit
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	re := wildcard(req.Query)
	typ := strings.ToUpper(req.ObjectType)
	res := sap.SearchObjectsResponse{Objects: []sap.ObjectRef{}}
	add := func(ref sap.ObjectRef) bool {
		if (typ != "" && ref.Type != typ) || (req.CustomOnly && !ref.Custom) {
			return true
		}
		if !re.MatchString(ref.Name) && !re.MatchString(strings.ToUpper(ref.Description)) {
			return true
		}
		res.Objects = append(res.Objects, ref)
		return len(res.Objects) < limit
	}
	for _, o := range s.sortedObjects() {
		if !add(sap.ObjectRef{Type: o.Type, Name: o.Name, Description: o.Description, Package: o.Package, Custom: true}) {
			return res
		}
	}
	for _, name := range sortedNames(s.tables) {
		t := s.tables[name]
		if t.schema.Custom {
			continue // listed as custom objects above
		}
		if !add(sap.ObjectRef{Type: "TABL", Name: name, Description: t.schema.Description, Package: "SAP"}) {
			return res
		}
	}
	for _, name := range sortedNames(s.funcs) {
		f := s.funcs[name]
		if strings.HasPrefix(name, "Z") {
			continue
		}
		if !add(sap.ObjectRef{Type: "FUNC", Name: name, Description: f.iface.Description, Package: f.iface.Group}) {
			return res
		}
	}
	for _, name := range sortedNames(standardObjects) {
		if !add(sap.ObjectRef{Type: standardObjects[name].typ, Name: name, Description: "SAP standard object", Package: "SAP"}) {
			return res
		}
	}
	// The generated landscape, by index; the scan stops when the page is full.
	match := nameMatcher(req.Query, re)
	for i := 0; i < s.gen.custom; i++ {
		if typ != "" && s.gen.customType(i) != typ {
			continue
		}
		if o, ok := s.genCustom(i, false); ok && !add(sap.ObjectRef{Type: o.Type, Name: o.Name, Description: o.Description, Package: o.Package, Custom: true}) {
			return res
		}
	}
	if req.CustomOnly {
		return res
	}
	for j := 0; j < s.gen.std; j++ {
		if typ != "" && s.gen.stdType(j) != typ {
			continue
		}
		if name := s.gen.stdName(j); match(name) {
			o := s.gen.stdObject(j)
			if !add(sap.ObjectRef{Type: o.typ, Name: o.name, Description: o.description, Package: o.pkg}) {
				return res
			}
		}
	}
	return res
}
