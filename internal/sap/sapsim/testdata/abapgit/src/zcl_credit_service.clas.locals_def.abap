*"* use this source file for any type of declarations (class
*"* definitions, interfaces or type declarations) you need for
*"* components in the private section
TYPES ty_items TYPE STANDARD TABLE OF bseg WITH EMPTY KEY.
