CLASS zcl_credit_service DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    METHODS exposure
      IMPORTING iv_kunnr          TYPE kunnr
      RETURNING VALUE(rv_amount) TYPE zd_credit_amount.
  PRIVATE SECTION.
    DATA mo_reader TYPE REF TO lcl_open_items.
ENDCLASS.

CLASS zcl_credit_service IMPLEMENTATION.
  METHOD exposure.
    mo_reader = NEW lcl_open_items( ).
    rv_amount = mo_reader->sum( iv_kunnr ).
    MODIFY zcredit_exposure FROM @( VALUE #( kunnr = iv_kunnr exposure = rv_amount ) ).
  ENDMETHOD.
ENDCLASS.
