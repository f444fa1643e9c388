FUNCTION z_credit_check.
*"  IMPORTING VALUE(IV_KUNNR) TYPE KUNNR
*"  EXPORTING VALUE(EV_OK) TYPE ABAP_BOOL
  SELECT SINGLE zlimit FROM zcredit_limit INTO @DATA(lv_limit) WHERE kunnr = @iv_kunnr.
  ev_ok = xsdbool( lv_limit > 0 ).
ENDFUNCTION.
