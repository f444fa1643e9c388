CLASS zcl_i20_amdp DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES if_amdp_marker_hdb.
    TYPES: BEGIN OF ty_total,
             type   TYPE waers,
             amount TYPE wrbtr,
           END OF ty_total,
           tt_total TYPE STANDARD TABLE OF ty_total WITH EMPTY KEY.
    TYPES: BEGIN OF ENUM ty_mode STRUCTURE mode,
             quick,
             full,
           END OF ENUM ty_mode STRUCTURE mode.
    CLASS-METHODS totals
      IMPORTING VALUE(iv_bukrs) TYPE bukrs
      EXPORTING VALUE(et_total) TYPE tt_total.
    METHODS run IMPORTING iv_mode TYPE ty_mode.
ENDCLASS.

CLASS zcl_i20_amdp IMPLEMENTATION.
  METHOD totals BY DATABASE PROCEDURE FOR HDB LANGUAGE SQLSCRIPT OPTIONS READ-ONLY USING bsid.
    declare lv_dummy nvarchar(1);
    select 'X' into lv_dummy from dummy;
    et_total = select waers as type, sum( dmbtr ) as amount
                 from bsid where bukrs = :iv_bukrs group by waers;
  ENDMETHOD.

  METHOD run.
    DATA lt_total TYPE tt_total.
    IF iv_mode = mode-full.
      totals( EXPORTING iv_bukrs = '1000' IMPORTING et_total = lt_total ).
    ENDIF.
  ENDMETHOD.
ENDCLASS.
