*******************************************************************
*   System-defined Include-files.                                 *
*******************************************************************
  INCLUDE lzfg_credittop.                    " Global Declarations
  INCLUDE lzfg_creditu01.                    " Function Modules
