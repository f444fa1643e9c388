REPORT zi20_pragma_post.
* Posting through the BAPI with pragmas on their own lines.
TYPES: BEGIN OF ty_line,
         type TYPE blart,
         like TYPE bukrs,
       END OF ty_line.
DATA gs_line TYPE ty_line.
DATA gt_lines TYPE STANDARD TABLE OF ty_line WITH DEFAULT KEY.
DATA gs_header TYPE bapiache09.
DATA gt_return TYPE STANDARD TABLE OF bapiret2 WITH DEFAULT KEY.
DATA gv_copy LIKE gs_header.

START-OF-SELECTION.
  gs_header-comp_code = gs_line-like.
  gv_copy = gs_header.
  ##FM_PAR_MIS
  CALL FUNCTION 'BAPI_ACC_DOCUMENT_POST'
    EXPORTING
      documentheader = gs_header
    TABLES
      return         = gt_return.
  PERFORM show TABLES gt_lines.

FORM show TABLES pt_lines STRUCTURE gs_line.
  DATA lv_lines TYPE i ##NEEDED.
  lv_lines = lines( pt_lines ).
  TRY.
      lv_lines = 1 / lv_lines.
    CATCH cx_sy_zerodivide ##NO_HANDLER.
  ENDTRY.
ENDFORM.
