// Package abapref extracts from ABAP and CDS source the references a real SAP
// system keeps in its cross-reference index (WBCROSSGT / CROSS): the tables a
// program reads and writes, the function modules, classes and interfaces it
// uses, the types it declares with, the programs and transactions it calls.
// It reads source only; it does not know the DDIC, so kinds the source cannot
// tell apart (a data element from a structure) share one type. See
// docs/abap-references.md for what is and is not extracted.
package abapref

import (
	"strings"
)

// Kind says how an object is used.
type Kind string

const (
	Read        Kind = "read"        // SELECT … FROM / JOIN, CDS select from / join, IMPORT FROM DATABASE
	Write       Kind = "write"       // INSERT / UPDATE / MODIFY / DELETE on a database table, EXPORT TO DATABASE
	Call        Kind = "call"        // CALL FUNCTION, static method call, SUBMIT, CALL TRANSACTION, PERFORM IN PROGRAM
	Instantiate Kind = "instantiate" // NEW class( ), CREATE OBJECT … TYPE class
	TypeUse     Kind = "type"        // TYPE / LIKE / TYPE REF TO / INCLUDE STRUCTURE / TABLES / CAST / exceptions
	Attribute   Kind = "attribute"   // class=>constant or attribute
	Implement   Kind = "implement"   // INTERFACES, INHERITING FROM
	Include     Kind = "include"     // INCLUDE program
	BAdI        Kind = "badi"        // GET BADI / CALL BADI
	Enhancement Kind = "enhancement" // ENHANCEMENT-POINT / -SECTION spots, ENHANCEMENT implementations
	Message     Kind = "message"     // MESSAGE e001(class), MESSAGE ID 'class'
	Authority   Kind = "authority"   // AUTHORITY-CHECK OBJECT 'object'
	Extend      Kind = "extend"      // CDS extend view
	Association Kind = "association" // CDS association / composition target
)

// Ref is one referenced object. Type is the TADIR object type where the source
// tells it (TABL, FUNC, CLAS, INTF, PROG, TRAN, DDLS, ENHS, ENHO, MSAG, SUSO,
// BADI); "TYPE" is a DDIC type whose kind (data element, structure, table
// type, type group) only the DDIC knows. Name is upper-case; Line is 1-based,
// the first use (0: named by XML, not by a source line; see FunctionInterfaces).
type Ref struct {
	Kind Kind   `json:"kind"`
	Type string `json:"type"`
	Name string `json:"name"`
	Line int    `json:"line"`
}

// Extract dispatches on the TADIR type of the object: CDS sources (DDLS, DDLX,
// DCLS) go to CDS, everything else to ABAP.
func Extract(objType, src string) []Ref {
	switch strings.ToUpper(objType) {
	case "DDLS", "DDLX", "DCLS":
		return CDS(src)
	}
	return ABAP(src)
}

type refKey struct {
	kind      Kind
	typ, name string
}

type collector struct {
	refs []Ref
	seen map[refKey]bool
}

func (c *collector) add(kind Kind, typ, name string, line int) {
	name = strings.TrimLeft(name, "!@")
	if name == "" || name == "#" || strings.ContainsAny(name, "()[]'`") {
		return
	}
	k := refKey{kind, typ, name}
	if c.seen == nil {
		c.seen = map[refKey]bool{}
	}
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	c.refs = append(c.refs, Ref{Kind: kind, Type: typ, Name: name, Line: line})
}

// stripNamespace drops a /NAMESPACE/ prefix.
func stripNamespace(name string) string {
	if strings.HasPrefix(name, "/") {
		if i := strings.IndexByte(name[1:], '/'); i >= 0 {
			return name[i+2:]
		}
	}
	return name
}

// classType tells an interface from a class by SAP's naming convention.
func classType(name string) string {
	n := stripNamespace(name)
	for _, p := range []string{"IF_", "ZIF_", "YIF_", "LIF_"} {
		if strings.HasPrefix(n, p) {
			return "INTF"
		}
	}
	return "CLAS"
}

// sqlSourceType tells a CDS view from a database table by the virtual data
// model's naming rules (I_, C_, R_, … and their Z/Y variants, YY1_ for key-user
// views). Anything else is taken for a table.
func sqlSourceType(name string) string {
	n := stripNamespace(name)
	if strings.HasPrefix(n, "YY1_") {
		return "DDLS"
	}
	if len(n) > 0 && (n[0] == 'Z' || n[0] == 'Y') {
		n = n[1:]
	}
	if len(n) > 2 && n[1] == '_' && strings.IndexByte("ICRPAEX", n[0]) >= 0 {
		return "DDLS"
	}
	return "TABL"
}
