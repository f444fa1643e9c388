package abapref

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A subclass uses its superclass's public and protected types unqualified:
// they are no DDIC references (the private ones it cannot see stay references).
func TestABAPInInheritedTypes(t *testing.T) {
	base := `CLASS zcl_base DEFINITION PUBLIC INHERITING FROM zcl_root CREATE PUBLIC.
  PUBLIC SECTION.
    TYPES: BEGIN OF ty_point, x TYPE i, END OF ty_point.
  PROTECTED SECTION.
    TYPES ty_points TYPE STANDARD TABLE OF ty_point WITH EMPTY KEY.
  PRIVATE SECTION.
    TYPES ty_secret TYPE string.
ENDCLASS.
CLASS zcl_base IMPLEMENTATION.
ENDCLASS.`
	root := `CLASS zcl_root DEFINITION PUBLIC CREATE PUBLIC.
  PUBLIC SECTION.
    TYPES ty_id TYPE n LENGTH 10.
ENDCLASS.
CLASS zcl_root IMPLEMENTATION.
ENDCLASS.`
	name, c, ok := GlobalClass(base)
	require.True(t, ok)
	require.Equal(t, "ZCL_BASE", name)
	require.Equal(t, ClassTypes{Super: "ZCL_ROOT", Types: []string{"TY_POINT", "TY_POINTS"}}, c)
	classes := Classes{name: c}
	name, c, _ = GlobalClass(root)
	classes[name] = c

	sub := `CLASS lcl_sub DEFINITION INHERITING FROM zcl_base.
  PUBLIC SECTION.
    DATA ms_point TYPE ty_point.
    DATA mt_points TYPE ty_points.
    DATA mv_id TYPE ty_id.
    DATA mv_secret TYPE ty_secret.
ENDCLASS.`
	var got []string
	for _, r := range ABAPIn(sub, classes) {
		got = append(got, string(r.Kind)+" "+r.Name)
	}
	require.Equal(t, []string{"implement ZCL_BASE", "type TY_SECRET"}, got)
	// without the classes every unknown name is a DDIC type, as before
	require.Len(t, ABAP(sub), 5)
}
