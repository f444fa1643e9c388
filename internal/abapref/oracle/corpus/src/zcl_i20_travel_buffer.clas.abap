CLASS zcl_i20_travel_buffer DEFINITION PUBLIC FINAL CREATE PUBLIC.
  PUBLIC SECTION.
    TYPES tt_create TYPE TABLE FOR CREATE zi_i20_travel.
    TYPES ts_failed TYPE RESPONSE FOR FAILED EARLY zi_i20_travel.
    METHODS buffer
      IMPORTING it_create TYPE tt_create
                iv_any    TYPE any OPTIONAL
      EXPORTING es_failed TYPE ts_failed.
    METHODS on_added FOR EVENT added_rows OF cl_salv_events_table IMPORTING rows.
  PRIVATE SECTION.
    DATA mt_create TYPE tt_create.
    DATA ms_read TYPE STRUCTURE FOR READ RESULT zi_i20_travel.
ENDCLASS.

CLASS zcl_i20_travel_buffer IMPLEMENTATION.
  METHOD buffer.
    DATA lt_copy LIKE it_create.
    DATA lt_keys TYPE TABLE FOR READ IMPORT zi_i20_travel.
    lt_copy = it_create.
    APPEND LINES OF lt_copy TO mt_create.
    CLEAR: es_failed, lt_keys.
  ENDMETHOD.

  METHOD on_added.
    DATA lv_count TYPE i ##NEEDED.
    lv_count = lines( rows ).
  ENDMETHOD.
ENDCLASS.
