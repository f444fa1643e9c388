FUNCTION z_sapagent_write_table.
*"----------------------------------------------------------------------
*"*"Local Interface:
*"  IMPORTING
*"     VALUE(IV_TABNAME) TYPE  TABNAME
*"     VALUE(IV_MODE) TYPE  CHAR1 DEFAULT 'M'
*"     VALUE(IV_TESTRUN) TYPE  CHAR1 DEFAULT SPACE
*"  EXPORTING
*"     VALUE(EV_INSERTED) TYPE  INT4
*"     VALUE(EV_UPDATED) TYPE  INT4
*"  TABLES
*"      IT_VALUES STRUCTURE  ZSAPAGENT_S_VALUE
*"      ET_ERRORS STRUCTURE  ZSAPAGENT_S_ROWERR OPTIONAL
*"      RETURN STRUCTURE  BAPIRET2 OPTIONAL
*"----------------------------------------------------------------------
* Writes rows into one table for sapagent's write_table (docs/connector.md).
* Allowed are tables whose name starts with Z or Y and those listed in ZSAPAGENT_WTALW;
* the caller needs S_TABU_NAM (activity 02) for the table or S_TABU_DIS for its group.
* Every row is checked (fields, lengths, types, key, check tables); a row with an error
* is left out whole and listed in ET_ERRORS. IV_TESTRUN = 'X' checks and saves nothing.
* RETURN-NUMBER: 001 no such table, 002 not allowed, 003 no authorization, 004 bad mode,
* 005 locked, 006 database refused, 010 test run, 011 written.

  DATA lv_tab TYPE tabname.
  DATA lv_allowed TYPE tabname.
  DATA lv_class TYPE tabclass.
  DATA lv_group TYPE tddat-cclass.
  DATA lt_dfies TYPE ty_dfies_tab.
  DATA ls_dfies TYPE dfies.
  DATA lr_row TYPE REF TO data.
  DATA lr_old TYPE REF TO data.
  DATA lr_rows TYPE REF TO data.
  DATA lt_values TYPE STANDARD TABLE OF zsapagent_s_value WITH DEFAULT KEY.
  DATA ls_value TYPE zsapagent_s_value.
  DATA lt_rownos TYPE STANDARD TABLE OF int4 WITH DEFAULT KEY.
  DATA lv_row TYPE int4.
  DATA ls_error TYPE zsapagent_s_rowerr.
  DATA ls_return TYPE bapiret2.
  DATA lt_where TYPE ty_where_tab.
  DATA lv_where TYPE string.
  DATA lv_literal TYPE string.
  DATA lv_key TYPE string.
  DATA lt_keys TYPE HASHED TABLE OF string WITH UNIQUE KEY table_line.
  DATA lv_bad TYPE abap_bool.
  DATA lv_len TYPE i.
  DATA lv_count TYPE i.
  DATA lv_num TYPE c LENGTH 10.
  DATA lv_num2 TYPE c LENGTH 10.
  DATA lv_date TYPE d.
  DATA lt_dd05s TYPE STANDARD TABLE OF dd05s WITH DEFAULT KEY.
  DATA ls_dd05s TYPE dd05s.
  DATA lv_checktable TYPE tabname.
  DATA lx_conv TYPE REF TO cx_root.
  FIELD-SYMBOLS <ls_row> TYPE any.
  FIELD-SYMBOLS <ls_old> TYPE any.
  FIELD-SYMBOLS <lt_rows> TYPE STANDARD TABLE.
  FIELD-SYMBOLS <lv_field> TYPE any.

  CLEAR ev_inserted.
  CLEAR ev_updated.
  CLEAR et_errors[].
  CLEAR return[].
  ls_return-id = 'ZSAPAGENT'.
  ls_return-type = 'E'.
  lv_tab = iv_tabname.
  TRANSLATE lv_tab TO UPPER CASE.

  SELECT SINGLE tabclass FROM dd02l INTO lv_class
    WHERE tabname = lv_tab AND as4local = 'A' AND as4vers = '0000'.
  IF sy-subrc <> 0 OR lv_class <> 'TRANSP'.
    ls_return-number = '001'.
    CONCATENATE 'Table' lv_tab 'is not an active transparent table' INTO ls_return-message SEPARATED BY space.
    APPEND ls_return TO return.
    RETURN.
  ENDIF.

  IF lv_tab(1) <> 'Z' AND lv_tab(1) <> 'Y'.
    SELECT SINGLE tabname FROM zsapagent_wtalw INTO lv_allowed WHERE tabname = lv_tab.
    IF sy-subrc <> 0.
      ls_return-number = '002'.
      CONCATENATE 'Table' lv_tab 'is neither a Z or Y table nor listed in ZSAPAGENT_WTALW'
        INTO ls_return-message SEPARATED BY space.
      APPEND ls_return TO return.
      RETURN.
    ENDIF.
  ENDIF.

  AUTHORITY-CHECK OBJECT 'S_TABU_NAM' ID 'ACTVT' FIELD '02' ID 'TABLE' FIELD lv_tab.
  IF sy-subrc <> 0.
    SELECT SINGLE cclass FROM tddat INTO lv_group WHERE tabname = lv_tab.
    IF sy-subrc <> 0 OR lv_group IS INITIAL.
      lv_group = '&NC&'.
    ENDIF.
    AUTHORITY-CHECK OBJECT 'S_TABU_DIS' ID 'ACTVT' FIELD '02' ID 'DICBERCLS' FIELD lv_group.
    IF sy-subrc <> 0.
      ls_return-number = '003'.
      CONCATENATE 'No authorization to change table' lv_tab '(S_TABU_NAM or S_TABU_DIS, activity 02)'
        INTO ls_return-message SEPARATED BY space.
      APPEND ls_return TO return.
      RETURN.
    ENDIF.
  ENDIF.

  IF iv_mode <> 'I' AND iv_mode <> 'M'.
    ls_return-number = '004'.
    ls_return-message = 'IV_MODE must be I (insert) or M (modify)'.
    APPEND ls_return TO return.
    RETURN.
  ENDIF.

  CALL FUNCTION 'DDIF_FIELDINFO_GET'
    EXPORTING
      tabname        = lv_tab
    TABLES
      dfies_tab      = lt_dfies
    EXCEPTIONS
      not_found      = 1
      internal_error = 2
      OTHERS         = 3.
  IF sy-subrc <> 0.
    ls_return-number = '001'.
    CONCATENATE 'Table' lv_tab 'has no field information' INTO ls_return-message SEPARATED BY space.
    APPEND ls_return TO return.
    RETURN.
  ENDIF.

  CREATE DATA lr_row TYPE (lv_tab).
  CREATE DATA lr_old TYPE (lv_tab).
  CREATE DATA lr_rows TYPE STANDARD TABLE OF (lv_tab).
  ASSIGN lr_row->* TO <ls_row>.
  ASSIGN lr_old->* TO <ls_old>.
  ASSIGN lr_rows->* TO <lt_rows>.

  lt_values = it_values[].
  LOOP AT lt_values INTO ls_value.
    APPEND ls_value-row TO lt_rownos.
  ENDLOOP.
  SORT lt_rownos.
  DELETE ADJACENT DUPLICATES FROM lt_rownos.

  LOOP AT lt_rownos INTO lv_row.
    CLEAR <ls_row>.
    lv_bad = abap_false.
    LOOP AT lt_values INTO ls_value WHERE row = lv_row.
      TRANSLATE ls_value-fieldname TO UPPER CASE.
      CLEAR ls_error.
      ls_error-row = lv_row.
      ls_error-fieldname = ls_value-fieldname.
      READ TABLE lt_dfies INTO ls_dfies WITH KEY fieldname = ls_value-fieldname.
      IF sy-subrc <> 0.
        CONCATENATE 'field' ls_value-fieldname 'does not exist in' lv_tab INTO ls_error-message SEPARATED BY space.
      ELSEIF ls_dfies-datatype = 'CLNT'.
        CONTINUE.
      ENDIF.
      IF ls_error-message IS INITIAL.
        lv_len = strlen( ls_value-value ).
        IF ( ls_dfies-inttype = 'C' OR ls_dfies-inttype = 'N' OR ls_dfies-inttype = 'D' OR ls_dfies-inttype = 'T' )
            AND lv_len > ls_dfies-leng.
          lv_num = ls_dfies-leng.
          SHIFT lv_num LEFT DELETING LEADING '0 '.
          CONCATENATE 'value is longer than' lv_num 'characters' INTO ls_error-message SEPARATED BY space.
        ELSEIF ls_dfies-inttype = 'N' AND ls_value-value CN '0123456789 '.
          ls_error-message = 'value is not numeric'.
        ELSEIF ls_dfies-inttype = 'D' AND ls_value-value IS NOT INITIAL AND ls_value-value <> '00000000'.
          lv_date = ls_value-value.
          CALL FUNCTION 'DATE_CHECK_PLAUSIBILITY'
            EXPORTING
              date                      = lv_date
            EXCEPTIONS
              plausibility_check_failed = 1
              OTHERS                    = 2.
          IF sy-subrc <> 0.
            ls_error-message = 'value is not a valid date (YYYYMMDD)'.
          ENDIF.
        ENDIF.
      ENDIF.
      IF ls_error-message IS INITIAL.
        ASSIGN COMPONENT ls_dfies-fieldname OF STRUCTURE <ls_row> TO <lv_field>.
        IF sy-subrc <> 0.
          CONTINUE.
        ENDIF.
        TRY.
            <lv_field> = ls_value-value.
          CATCH cx_sy_conversion_error INTO lx_conv.
            ls_error-message = lx_conv->get_text( ).
        ENDTRY.
      ENDIF.
      IF ls_error-message IS INITIAL AND ls_dfies-checktable IS NOT INITIAL
          AND ls_dfies-checktable <> lv_tab AND ls_value-value IS NOT INITIAL.
        " A foreign key on one field besides the client: the value must be in the check table.
        SELECT * FROM dd05s INTO TABLE lt_dd05s
          WHERE tabname = lv_tab AND fieldname = ls_dfies-fieldname AND as4local = 'A'
          ORDER BY PRIMARY KEY.
        IF sy-subrc <> 0.
          CLEAR lt_dd05s.
        ENDIF.
        DELETE lt_dd05s WHERE checkfield = 'MANDT' OR checkfield = 'CLIENT' OR fortable = '*'.
        IF lines( lt_dd05s ) = 1.
          READ TABLE lt_dd05s INTO ls_dd05s INDEX 1.
          ASSERT sy-subrc = 0.
          lv_literal = ls_value-value.
          REPLACE ALL OCCURRENCES OF `'` IN lv_literal WITH `''`.
          CONCATENATE ls_dd05s-checkfield ` = '` lv_literal `'` INTO lv_where.
          lv_checktable = ls_dd05s-checktable.
          SELECT COUNT(*) FROM (lv_checktable) WHERE (lv_where).
          IF sy-subrc <> 0.
            CONCATENATE 'value' ls_value-value 'is not in check table' lv_checktable
              INTO ls_error-message SEPARATED BY space.
          ENDIF.
        ENDIF.
      ENDIF.
      IF ls_error-message IS NOT INITIAL.
        APPEND ls_error TO et_errors.
        lv_bad = abap_true.
        EXIT.
      ENDIF.
    ENDLOOP.
    IF lv_bad = abap_true.
      CONTINUE.
    ENDIF.

    CLEAR lt_where.
    CLEAR lv_key.
    LOOP AT lt_dfies INTO ls_dfies WHERE keyflag = abap_true.
      ASSIGN COMPONENT ls_dfies-fieldname OF STRUCTURE <ls_row> TO <lv_field>.
      ASSERT sy-subrc = 0.
      IF ls_dfies-datatype = 'CLNT'.
        <lv_field> = sy-mandt.
      ELSEIF <lv_field> IS INITIAL.
        CLEAR ls_error.
        ls_error-row = lv_row.
        ls_error-fieldname = ls_dfies-fieldname.
        CONCATENATE 'key field' ls_dfies-fieldname 'is empty' INTO ls_error-message SEPARATED BY space.
        APPEND ls_error TO et_errors.
        lv_bad = abap_true.
        EXIT.
      ENDIF.
      lv_literal = <lv_field>.
      REPLACE ALL OCCURRENCES OF `'` IN lv_literal WITH `''`.
      CONCATENATE lv_key lv_literal cl_abap_char_utilities=>horizontal_tab INTO lv_key.
      CONCATENATE ls_dfies-fieldname ` = '` lv_literal `'` INTO lv_where.
      IF lt_where IS NOT INITIAL.
        CONCATENATE `AND ` lv_where INTO lv_where.
      ENDIF.
      APPEND lv_where TO lt_where.
    ENDLOOP.
    IF lv_bad = abap_true.
      CONTINUE.
    ENDIF.
    INSERT lv_key INTO TABLE lt_keys.
    IF sy-subrc <> 0.
      CLEAR ls_error.
      ls_error-row = lv_row.
      ls_error-message = 'the key appears twice in this call'.
      APPEND ls_error TO et_errors.
      CONTINUE.
    ENDIF.

    SELECT SINGLE * FROM (lv_tab) INTO <ls_old> WHERE (lt_where).
    IF sy-subrc = 0.
      IF iv_mode = 'I'.
        CLEAR ls_error.
        ls_error-row = lv_row.
        ls_error-message = 'a row with this key already exists'.
        APPEND ls_error TO et_errors.
        CONTINUE.
      ENDIF.
      " Modify changes only the fields given: start from the stored row.
      <ls_row> = <ls_old>.
      LOOP AT lt_values INTO ls_value WHERE row = lv_row.
        TRANSLATE ls_value-fieldname TO UPPER CASE.
        READ TABLE lt_dfies INTO ls_dfies WITH KEY fieldname = ls_value-fieldname.
        IF sy-subrc = 0 AND ls_dfies-datatype <> 'CLNT'.
          ASSIGN COMPONENT ls_dfies-fieldname OF STRUCTURE <ls_row> TO <lv_field>.
          ASSERT sy-subrc = 0.
          <lv_field> = ls_value-value.
        ENDIF.
      ENDLOOP.
      ev_updated = ev_updated + 1.
    ELSE.
      ev_inserted = ev_inserted + 1.
    ENDIF.
    APPEND <ls_row> TO <lt_rows>.
  ENDLOOP.

  lv_count = lines( <lt_rows> ).
  lv_num = lv_count.
  SHIFT lv_num LEFT DELETING LEADING space.
  lv_count = lines( et_errors ).
  lv_num2 = lv_count.
  SHIFT lv_num2 LEFT DELETING LEADING space.
  ls_return-type = 'S'.
  IF iv_testrun = abap_true.
    ls_return-number = '010'.
    CONCATENATE 'Test run:' lv_num 'rows would be written to' lv_tab INTO ls_return-message SEPARATED BY space.
    CONCATENATE ls_return-message ',' INTO ls_return-message.
    CONCATENATE ls_return-message lv_num2 'refused' INTO ls_return-message SEPARATED BY space.
    APPEND ls_return TO return.
    RETURN.
  ENDIF.

  IF <lt_rows> IS NOT INITIAL.
    CALL FUNCTION 'ENQUEUE_E_TABLE'
      EXPORTING
        mode_rstable   = 'E'
        tabname        = lv_tab
      EXCEPTIONS
        foreign_lock   = 1
        system_failure = 2
        OTHERS         = 3.
    IF sy-subrc <> 0.
      CLEAR ev_inserted.
      CLEAR ev_updated.
      ls_return-type = 'E'.
      ls_return-number = '005'.
      CONCATENATE 'Table' lv_tab 'is locked by another user; nothing was written'
        INTO ls_return-message SEPARATED BY space.
      APPEND ls_return TO return.
      RETURN.
    ENDIF.
    lv_bad = abap_false.
    IF iv_mode = 'I'.
      INSERT (lv_tab) FROM TABLE <lt_rows> ACCEPTING DUPLICATE KEYS.
      lv_bad = boolc( sy-subrc <> 0 ).
    ELSE.
      MODIFY (lv_tab) FROM TABLE <lt_rows>.
      IF sy-subrc <> 0.
        lv_bad = abap_true.
      ENDIF.
    ENDIF.
    IF lv_bad = abap_true.
      ROLLBACK WORK.
      CALL FUNCTION 'DEQUEUE_E_TABLE'
        EXPORTING
          mode_rstable = 'E'
          tabname      = lv_tab.
      CLEAR ev_inserted.
      CLEAR ev_updated.
      ls_return-type = 'E'.
      ls_return-number = '006'.
      CONCATENATE 'The database refused the rows for' lv_tab '(a key was written meanwhile); nothing was written'
        INTO ls_return-message SEPARATED BY space.
      APPEND ls_return TO return.
      RETURN.
    ENDIF.
    COMMIT WORK AND WAIT.
    CALL FUNCTION 'DEQUEUE_E_TABLE'
      EXPORTING
        mode_rstable = 'E'
        tabname      = lv_tab.
  ENDIF.

  ls_return-number = '011'.
  CONCATENATE lv_num 'rows written to' lv_tab INTO ls_return-message SEPARATED BY space.
  APPEND ls_return TO return.

ENDFUNCTION.
