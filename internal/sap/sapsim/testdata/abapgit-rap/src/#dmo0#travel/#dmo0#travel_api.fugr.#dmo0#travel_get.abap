"! <p class="shorttext synchronized">Read a travel</p>
"! @parameter iv_travel_id | Travel number
FUNCTION /dmo0/travel_get.
*"----------------------------------------------------------------------
*"*"Local Interface:
*"  IMPORTING
*"     VALUE(IV_TRAVEL_ID) TYPE  /DMO0/TRAVEL_ID
*"----------------------------------------------------------------------
  SELECT SINGLE * FROM /dmo0/travel_a WHERE travel_id = @iv_travel_id INTO @DATA(ls_travel).
ENDFUNCTION.
