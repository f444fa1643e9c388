*&---------------------------------------------------------------------*
*& List travels
*&---------------------------------------------------------------------*
REPORT /dmo0/r_travel_list.

DATA lt_travel TYPE /dmo0/t_travel.
DATA lo_error TYPE REF TO /dmo0/cx_travel_error.
SELECT * FROM /dmo0/travel_a INTO TABLE @lt_travel.
CALL FUNCTION '/DMO0/TRAVEL_GET'
  EXPORTING
    iv_travel_id = '00000001'.
CALL FUNCTION 'BAPI_TRANSACTION_COMMIT'.
