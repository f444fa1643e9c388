package sap

import "strings"

// SAP repository conventions the simulator and the connector both need.

// RelationKind is the protocol's kind of an index relationship (docs/connector-protocol.md):
// how the source uses an object (abapref's usage) grouped by the used object's TADIR type.
func RelationKind(usage, toType string) string {
	switch usage {
	case "include":
		return "includes"
	case "extend":
		return "extends"
	}
	switch toType {
	case "TABL":
		return "uses_table"
	case "FUNC":
		return "calls_function"
	case "CLAS", "INTF":
		return "uses_class"
	case "DDLS":
		return "uses_view"
	}
	return "uses"
}

// PoolInclude is an include of a class or interface pool: the name padded with = to 30
// characters, then the include's suffix (ZCL_X=========================CP, …CM001, …IU).
func PoolInclude(name, suffix string) string {
	if len(name) < 30 {
		name += strings.Repeat("=", 30-len(name))
	}
	return name + suffix
}
