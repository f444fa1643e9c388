*******************************************************************
*   System-defined Include-files.                                 *
*******************************************************************
INCLUDE lzsapagent_writetop.
INCLUDE lzsapagent_writeuxx.
