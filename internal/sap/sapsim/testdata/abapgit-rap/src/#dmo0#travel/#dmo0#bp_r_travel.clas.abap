"! <p class="shorttext synchronized">Behaviour pool of the travel</p>
CLASS /dmo0/bp_r_travel DEFINITION PUBLIC ABSTRACT FINAL FOR BEHAVIOR OF /dmo0/r_travel.
ENDCLASS.

CLASS /dmo0/bp_r_travel IMPLEMENTATION.
ENDCLASS.
