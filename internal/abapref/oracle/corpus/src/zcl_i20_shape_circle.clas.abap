CLASS zcl_i20_shape_circle DEFINITION PUBLIC INHERITING FROM zcl_i20_shape_base CREATE PUBLIC.
  PUBLIC SECTION.
    METHODS zif_i20_shape~area REDEFINITION.
    METHODS count_rows
      IMPORTING !iv_size  TYPE int4
      CHANGING  !cs_row   TYPE any
      RETURNING VALUE(rv) TYPE int4.
  PRIVATE SECTION.
    TYPES: BEGIN OF ty_named,
             type TYPE string,
             name TYPE string,
           END OF ty_named.
    DATA mt_named TYPE SORTED TABLE OF ty_named WITH UNIQUE KEY type name
                       WITH NON-UNIQUE SORTED KEY by_type COMPONENTS type.
    DATA mv_center TYPE ty_point.
    DATA mt_outline TYPE ty_points.
ENDCLASS.

CLASS zcl_i20_shape_circle IMPLEMENTATION.
  METHOD zif_i20_shape~area.
    rv_area = mv_center-x * mv_center-y.
  ENDMETHOD.

  METHOD count_rows.
    DATA lv_row LIKE sy-tabix.
    DATA lo_struct TYPE REF TO cl_abap_structdescr.
    DATA lr_data TYPE REF TO data.
    DATA lo_shape TYPE REF TO zcl_i20_shape_base.
    FIELD-SYMBOLS <lv_value> TYPE any.
    ASSIGN COMPONENT 'X' OF STRUCTURE cs_row TO <lv_value>.
    lo_struct ?= cl_abap_typedescr=>describe_by_data( cs_row ).
    CREATE DATA lr_data TYPE HANDLE lo_struct.
    SELECT COUNT(*) FROM cross INTO @lv_row UP TO @iv_size ROWS.
    CREATE OBJECT lo_shape TYPE ('ZCL_I20_SHAPE_CIRCLE')
      EXPORTING
        type = 'CIRCLE'.
    rv = lv_row + lo_shape->zif_i20_shape~area( ) + strlen( zcl_i20_shape_base=>zif_i20_shape~describe( ) ).
  ENDMETHOD.
ENDCLASS.
