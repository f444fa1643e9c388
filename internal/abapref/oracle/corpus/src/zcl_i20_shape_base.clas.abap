CLASS zcl_i20_shape_base DEFINITION PUBLIC ABSTRACT CREATE PUBLIC.
  PUBLIC SECTION.
    INTERFACES zif_i20_shape.
    TYPES: BEGIN OF ty_point,
             x TYPE i,
             y TYPE i,
           END OF ty_point.
  PROTECTED SECTION.
    TYPES ty_points TYPE STANDARD TABLE OF ty_point WITH EMPTY KEY.
ENDCLASS.

CLASS zcl_i20_shape_base IMPLEMENTATION.
  METHOD zif_i20_shape~area.
    rv_area = 0.
  ENDMETHOD.

  METHOD zif_i20_shape~describe.
    rv_text = `shape`.
  ENDMETHOD.
ENDCLASS.
