package sapbackend

import (
	"context"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// crossRowLimit caps the rows read from one cross-reference table: the protocol answers at most
// 500 usages, and one using include may hold many rows of the same name.
const crossRowLimit = 5000

// crossTables says where the system's where-used list keeps references to an object type:
// CROSS (TYPE 'F' function modules, 'R' submitted programs) or WBCROSSGT (global types:
// classes, interfaces, tables, structures, data elements, table types, CDS entities). Other
// types (includes are in WBCROSSI, messages in CROSS 'N', …) are not mapped: ok is false.
func crossTables(objectType string) (cross []string, wbcrossgt, ok bool) {
	switch objectType {
	case "FUNC":
		return []string{"F"}, false, true
	case "PROG":
		return []string{"R"}, false, true
	case "CLAS", "INTF", "TABL", "STRU", "DTEL", "TTYP", "DDLS", "VIEW":
		return nil, true, true
	}
	return nil, false, false
}

// crossWhereUsed is where_used on a system without ADT usage references: RFC_READ_TABLE of
// WBCROSSGT and CROSS by NAME, each using INCLUDE mapped to its main object. Usages have no
// line: the tables do not store one.
func (b *Backend) crossWhereUsed(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, objectType, name string, limit int) (*sap.WhereUsedResponse, error) {
	lit := soaprfc.QuoteLiteral(name)
	cross, wb, ok := crossTables(objectType)
	if !ok {
		return nil, connector.NotSupported("where_used: system %s has no ADT usage references (SAP_BASIS below 7.50); "+
			"its where-used tables are read for FUNC, PROG, CLAS, INTF, TABL, STRU, DTEL, TTYP, DDLS and VIEW, not %s", b.sys.ID, objectType)
	}
	var includes []string
	collect := func(r soaprfc.Struct) error {
		includes = append(includes, strings.TrimSpace(r["INCLUDE"]))
		return nil
	}
	if wb {
		// A class's methods and attributes are stored as ZCL_X\ME:NAME (ask for that name to
		// find one method's users); the class itself as ZCL_X.
		where := "NAME = " + lit
		if _, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: "WBCROSSGT", Fields: []string{"INCLUDE"},
			Where: where, RowCount: crossRowLimit}, collect); err != nil {
			return nil, protoErr(err)
		}
	}
	for _, typ := range cross {
		where := "TYPE = " + soaprfc.QuoteLiteral(typ) + " AND NAME = " + lit
		if _, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: "CROSS", Fields: []string{"INCLUDE"},
			Where: where, RowCount: crossRowLimit}, collect); err != nil {
			return nil, protoErr(err)
		}
	}
	out := &sap.WhereUsedResponse{Usages: []sap.Usage{}}
	seen := map[sap.Usage]bool{{ObjectType: objectType, Name: name}: true}
	mapped := map[string]bool{} // one TFDIR look-up per include, however many rows name it
	for _, inc := range includes {
		if inc == "" || mapped[inc] {
			continue
		}
		mapped[inc] = true
		u, err := b.mainObject(ctx, c, cred, inc)
		if err != nil {
			return nil, err
		}
		if seen[u] { // the object itself (its own includes) or one already named
			continue
		}
		seen[u] = true
		out.Usages = append(out.Usages, u)
		if limit > 0 && len(out.Usages) >= limit {
			break
		}
	}
	return out, nil
}

// mainObject names the object an include belongs to: class pool includes (ZCL_X====…CP, CU,
// CM001, CCIMP, …) their class, interface pool includes (…IP, IU) their interface, a function
// module's include L<group>U<nn> the function module (TFDIR), other L<group>… includes and
// SAPL<group> the function group; any other include is named as a program.
func (b *Backend) mainObject(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, inc string) (sap.Usage, error) {
	if i := strings.Index(inc, "="); i > 0 {
		suffix := strings.TrimLeft(inc[i:], "=")
		if suffix == "IP" || suffix == "IU" {
			return sap.Usage{ObjectType: "INTF", Name: inc[:i]}, nil
		}
		return sap.Usage{ObjectType: "CLAS", Name: inc[:i]}, nil
	}
	ns, short := splitNamespace(inc)
	if strings.HasPrefix(short, "SAPL") {
		return sap.Usage{ObjectType: "FUGR", Name: ns + short[4:]}, nil
	}
	if group, kind, nn, ok := groupInclude(short); ok {
		if kind == "U" && isDigits(nn) {
			fm := ""
			err := readRows(ctx, c, cred, "TFDIR", []string{"FUNCNAME"},
				"PNAME = "+soaprfc.QuoteLiteral(ns+"SAPL"+group)+" AND INCLUDE = "+soaprfc.QuoteLiteral(nn),
				func(r soaprfc.Struct) { fm = strings.TrimSpace(r["FUNCNAME"]) })
			if err != nil {
				return sap.Usage{}, err
			}
			if fm != "" {
				return sap.Usage{ObjectType: "FUNC", Name: fm}, nil
			}
		}
		return sap.Usage{ObjectType: "FUGR", Name: ns + group}, nil
	}
	return sap.Usage{ObjectType: "PROG", Name: inc}, nil
}

// groupInclude splits a function group include L<group><kind><nn> (U01 function module,
// F01 forms, O01/I01 modules, E01 events, P01 local classes, UXX, TOP) without its namespace.
func groupInclude(short string) (group, kind, nn string, ok bool) {
	if !strings.HasPrefix(short, "L") || len(short) < 5 {
		return "", "", "", false
	}
	body := short[1:]
	if strings.HasSuffix(body, "TOP") {
		return body[:len(body)-3], "TOP", "", true
	}
	if strings.HasSuffix(body, "UXX") {
		return body[:len(body)-3], "U", "XX", true
	}
	kind, nn = body[len(body)-3:len(body)-2], body[len(body)-2:]
	if strings.Contains("UFOIEP", kind) && isDigits(nn) {
		return body[:len(body)-3], kind, nn, true
	}
	return "", "", "", false
}

// splitNamespace cuts a /NS/ prefix off: /NS/LFGU01 → /NS/, LFGU01.
func splitNamespace(name string) (string, string) {
	if strings.HasPrefix(name, "/") {
		if i := strings.Index(name[1:], "/"); i >= 0 {
			return name[:i+2], name[i+2:]
		}
	}
	return "", name
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
