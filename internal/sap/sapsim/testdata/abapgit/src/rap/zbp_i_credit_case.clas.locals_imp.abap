CLASS lhc_creditcase DEFINITION INHERITING FROM cl_abap_behavior_handler.
  PRIVATE SECTION.
    METHODS block FOR MODIFY IMPORTING keys FOR ACTION CreditCase~block RESULT result.
    METHODS checkrisk FOR VALIDATE ON SAVE IMPORTING keys FOR CreditCase~checkRisk.
ENDCLASS.

CLASS lhc_creditcase IMPLEMENTATION.
  METHOD block.
    MODIFY ENTITIES OF zi_credit_case IN LOCAL MODE
      ENTITY CreditCase UPDATE FIELDS ( RiskClass ) WITH VALUE #( FOR k IN keys ( %tky = k-%tky RiskClass = 'D' ) ).
    READ ENTITIES OF zi_credit_case IN LOCAL MODE
      ENTITY CreditCase ALL FIELDS WITH CORRESPONDING #( keys ) RESULT DATA(cases).
    result = VALUE #( FOR c IN cases ( %tky = c-%tky %param = c ) ).
  ENDMETHOD.

  METHOD checkrisk.
    SELECT SINGLE zz_credit_group FROM kna1 WHERE kunnr = '0000100001' INTO @DATA(lv_group).
  ENDMETHOD.
ENDCLASS.
