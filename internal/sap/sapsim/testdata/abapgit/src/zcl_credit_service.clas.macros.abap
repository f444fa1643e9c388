*"* use this source file for any macro definitions you need
*"* in the implementation part of the class
DEFINE _log.
  MESSAGE &1 TYPE 'S'.
END-OF-DEFINITION.
