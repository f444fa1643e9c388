

##NEEDED
FUNCTION /dmo0/travel_check.
  MESSAGE e001(/dmo0/travel) WITH iv_travel_id.
ENDFUNCTION.
