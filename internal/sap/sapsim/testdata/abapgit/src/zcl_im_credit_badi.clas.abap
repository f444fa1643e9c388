CLASS zcl_im_credit_badi DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_ex_badi_sd_sales.
ENDCLASS.

CLASS zcl_im_credit_badi IMPLEMENTATION.
  METHOD if_ex_badi_sd_sales~save_document_prepare.
    CALL FUNCTION 'Z_CREDIT_CHECK'
      EXPORTING
        iv_kunnr = fxvbak-kunnr
      IMPORTING
        ev_ok    = DATA(lv_ok).
    IF lv_ok = abap_false.
      MESSAGE e010(zcr) WITH fxvbak-kunnr.
    ENDIF.
  ENDMETHOD.
ENDCLASS.
