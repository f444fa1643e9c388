CLASS ltc_exposure DEFINITION FINAL FOR TESTING DURATION SHORT RISK LEVEL HARMLESS.
  PRIVATE SECTION.
    CLASS-DATA go_env TYPE REF TO if_osql_test_environment.
    METHODS sums_open_items FOR TESTING.
ENDCLASS.

CLASS ltc_exposure IMPLEMENTATION.
  METHOD sums_open_items.
    go_env = cl_osql_test_environment=>create( i_dependency_list = VALUE #( ( 'BSEG' ) ( 'BKPF' ) ) ).
    cl_abap_unit_assert=>assert_equals( act = NEW zcl_credit_service( )->exposure( '0000100001' ) exp = 0 ).
  ENDMETHOD.
ENDCLASS.
