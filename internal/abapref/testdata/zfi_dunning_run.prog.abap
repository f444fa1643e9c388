*&---------------------------------------------------------------------*
*& Report ZFI_DUNNING_RUN
*& Dunning proposal for customer open items (FI-AR) with SD credit data.
*& Old note: "SELECT * FROM bsid" was replaced by BSID_VIEW in 2019.
*&---------------------------------------------------------------------*
REPORT zfi_dunning_run MESSAGE-ID zfi.

TABLES: t001, knb5.
TYPE-POOLS: slis.

INCLUDE zfi_dunning_top.

TYPES: BEGIN OF ty_item,
         bukrs TYPE bukrs,
         kunnr TYPE kunnr,
         belnr TYPE belnr_d,
         dmbtr TYPE dmbtr,
         mahns TYPE knb5-mahns,
         name1 TYPE kna1-name1,
       END OF ty_item,
       tt_item TYPE STANDARD TABLE OF ty_item WITH EMPTY KEY.

DATA: gt_items  TYPE tt_item,
      gs_item   TYPE ty_item,
      gt_fcat   TYPE slis_t_fieldcat_alv,
      gt_log    TYPE STANDARD TABLE OF zfi_dun_log,
      gs_log    TYPE zfi_dun_log,
      go_mailer TYPE REF TO zif_fi_mailer,
      gv_text   TYPE string.

SELECT-OPTIONS: s_bukrs FOR t001-bukrs OBLIGATORY,
                s_kunnr FOR knb5-kunnr.
PARAMETERS: p_test AS CHECKBOX DEFAULT 'X',
            p_mahna TYPE mahna.

INITIALIZATION.
  gv_text = 'UPDATE knb5 SET mahns = 0'. " a literal, not a write

START-OF-SELECTION.
  AUTHORITY-CHECK OBJECT 'F_BKPF_BUK' ID 'BUKRS' FIELD s_bukrs-low ID 'ACTVT' FIELD '03'.
  IF sy-subrc <> 0.
    MESSAGE e010 WITH s_bukrs-low.
  ENDIF.

  " Open items with dunning data of the customer's company code segment
  SELECT b~bukrs, b~kunnr, b~belnr, b~dmbtr, k5~mahns, a~name1
    FROM bsid AS b
    INNER JOIN knb5 AS k5 ON k5~bukrs = b~bukrs AND k5~kunnr = b~kunnr
    LEFT OUTER JOIN kna1 AS a ON a~kunnr = b~kunnr
    WHERE b~bukrs IN @s_bukrs
      AND b~kunnr IN @s_kunnr
      AND b~zfbdt < @sy-datum
      AND NOT EXISTS ( SELECT belnr FROM zfi_dun_block WHERE kunnr = b~kunnr )
    INTO CORRESPONDING FIELDS OF TABLE @gt_items.

  IF gt_items IS NOT INITIAL.
    SELECT vbeln, kunnr, netwr FROM vbak
      FOR ALL ENTRIES IN @gt_items
      WHERE kunnr = @gt_items-kunnr
      INTO TABLE @DATA(gt_orders).
  ENDIF.

  LOOP AT gt_items ASSIGNING FIELD-SYMBOL(<ls_item>).
    CALL FUNCTION 'CREDIT_EXPOSURE'
      EXPORTING
        kkber       = '1000'
        kunnr       = <ls_item>-kunnr
      IMPORTING
        creditlimit = DATA(lv_limit).
    IF <ls_item>-mahns >= 3.
      DELETE gt_items.
      CONTINUE.
    ENDIF.
    gs_log = VALUE #( bukrs = <ls_item>-bukrs kunnr = <ls_item>-kunnr mahns = <ls_item>-mahns + 1 ).
    INSERT gs_log INTO TABLE gt_log.
  ENDLOOP.

  SORT gt_items BY kunnr.
  DELETE ADJACENT DUPLICATES FROM gt_items COMPARING kunnr.
  MODIFY gt_items FROM gs_item TRANSPORTING mahns WHERE mahns = 0.

  IF p_test IS INITIAL.
    MODIFY zfi_dun_log FROM TABLE @gt_log.
    UPDATE knb5 SET madat = @sy-datum WHERE kunnr IN @s_kunnr AND bukrs IN @s_bukrs.
    go_mailer = NEW zcl_fi_mailer_smtp( ).
    go_mailer->send( it_items = gt_items ).
    CALL FUNCTION 'Z_FI_DUNNING_NOTIFY' IN UPDATE TASK
      EXPORTING it_log = gt_log.
    COMMIT WORK.
  ENDIF.

  PERFORM build_fcat CHANGING gt_fcat.
  CALL FUNCTION 'REUSE_ALV_GRID_DISPLAY'
    EXPORTING
      it_fieldcat = gt_fcat
    TABLES
      t_outtab    = gt_items.

  SUBMIT rfmahn21 WITH p_test = p_test AND RETURN.

FORM build_fcat CHANGING ct_fcat TYPE slis_t_fieldcat_alv.
  DATA ls_fcat LIKE LINE OF ct_fcat.
  ls_fcat-fieldname = 'KUNNR'.
  ls_fcat-ref_tabname = 'KNA1'.
  APPEND ls_fcat TO ct_fcat.
  TRY.
      DATA(lv_pct) = zcl_fi_dunning_calc=>percent( iv_level = 2 ).
    CATCH cx_sy_arithmetic_error INTO DATA(lx_arith).
      MESSAGE lx_arith TYPE 'I'.
  ENDTRY.
ENDFORM.
