*----------------------------------------------------------------------*
* Change a travel: the description only
*----------------------------------------------------------------------*

FUNCTION /dmo0/travel_set.
  UPDATE /dmo0/travel_a SET description = 'changed' WHERE travel_id = @iv_travel_id.
ENDFUNCTION.
