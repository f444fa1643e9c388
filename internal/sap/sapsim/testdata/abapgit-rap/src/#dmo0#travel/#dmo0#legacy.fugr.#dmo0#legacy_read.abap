* Legacy read, kept for the old interface
"! Reads a travel the old way
FUNCTION /dmo0/legacy_read.
  CALL FUNCTION '/DMO0/TRAVEL_GET'.
ENDFUNCTION.
