*"* use this source file for the definition and implementation of
*"* local helper classes, interface definitions and type
*"* declarations
CLASS lcl_open_items DEFINITION.
  PUBLIC SECTION.
    METHODS sum IMPORTING iv_kunnr TYPE kunnr RETURNING VALUE(rv_sum) TYPE zd_credit_amount.
ENDCLASS.

CLASS lcl_open_items IMPLEMENTATION.
  METHOD sum.
    " Open items straight from the FI tables (BSID is gone in S/4HANA).
    SELECT s~dmbtr, s~shkzg FROM bseg AS s
      INNER JOIN bkpf AS h ON h~bukrs = s~bukrs AND h~belnr = s~belnr AND h~gjahr = s~gjahr
      WHERE s~kunnr = @iv_kunnr AND s~augbl = @space
      INTO TABLE @DATA(lt_items).
    LOOP AT lt_items INTO DATA(ls_item).
      rv_sum = rv_sum + COND #( WHEN ls_item-shkzg = 'S' THEN ls_item-dmbtr ELSE - ls_item-dmbtr ).
    ENDLOOP.
  ENDMETHOD.
ENDCLASS.
