package sapbackend

import (
	"context"
	"errors"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// paramKinds maps RFC_GET_FUNCTION_INTERFACE's PARAMCLASS onto the protocol's kinds; X
// (exceptions) is listed apart.
var paramKinds = map[string]string{"I": "import", "E": "export", "C": "changing", "T": "tables"}

// FunctionInterface reads the parameters with RFC_GET_FUNCTION_INTERFACE (REMOTE_CALL 'R' is
// remote-enabled), the function group from TFDIR and the short text from TFTIT. TFDIR/TFTIT
// need S_TABU_DIS; without it group and description stay empty. SAP does not say whether a
// function writes: writes is true when the connector's write_function_modules names it.
// released stays false (the Cloudification Repository is not read).
func (b *Backend) FunctionInterface(ctx context.Context, cred connector.Credentials, req sap.FunctionInterfaceRequest) (*sap.FunctionInterface, error) {
	c, err := b.soap(sap.EndpointFunctionInterface)
	if err != nil {
		return nil, err
	}
	fm := strings.ToUpper(strings.TrimSpace(req.Function))
	if fm == "" {
		return nil, badRequest("function_interface needs a function")
	}
	res, err := c.Call(ctx, rfcCred(cred), "RFC_GET_FUNCTION_INTERFACE", soaprfc.Params{
		Imports: map[string]any{"FUNCNAME": fm},
		Tables:  map[string][]soaprfc.Struct{"PARAMS": nil},
	})
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.FunctionInterface{Function: fm, Parameters: []sap.Parameter{},
		RemoteEnabled: strings.TrimSpace(res.String("REMOTE_CALL")) == "R", Writes: b.namedWriter(fm)}
	for _, p := range res.Table("PARAMS") {
		class, name := strings.TrimSpace(p["PARAMCLASS"]), strings.TrimSpace(p["PARAMETER"])
		if class == "X" {
			out.Exceptions = append(out.Exceptions, name)
			continue
		}
		kind, ok := paramKinds[class]
		if !ok || name == "" {
			continue
		}
		out.Parameters = append(out.Parameters, sap.Parameter{Name: name, Kind: kind, Type: paramType(p),
			Optional: strings.TrimSpace(p["OPTIONAL"]) == "X", Default: strings.TrimSpace(p["DEFAULT"]),
			Description: strings.TrimSpace(p["PARAMTEXT"])})
	}
	lit := soaprfc.QuoteLiteral(fm)
	if err := optionalRow(ctx, c, cred, "TFDIR", []string{"PNAME"}, "FUNCNAME = "+lit, func(r soaprfc.Struct) {
		out.Group = groupOfProgram(r["PNAME"])
	}); err != nil {
		return nil, err
	}
	lang := soaprfc.QuoteLiteral(languageKey(b.sys.Language))
	if err := optionalRow(ctx, c, cred, "TFTIT", []string{"STEXT"}, "FUNCNAME = "+lit+" AND SPRAS = "+lang, func(r soaprfc.Struct) {
		out.Description = strings.TrimSpace(r["STEXT"])
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// paramType is the parameter's type: TABNAME, or TABNAME-FIELDNAME for a LIKE reference.
func paramType(p soaprfc.Struct) string {
	tab, field := strings.TrimSpace(p["TABNAME"]), strings.TrimSpace(p["FIELDNAME"])
	if field != "" && !strings.Contains(tab, "-") {
		return tab + "-" + field
	}
	return tab
}

// groupOfProgram is the function group of its main program: SAPLZFG → ZFG, /NS/SAPLFG → /NS/FG.
func groupOfProgram(pname string) string {
	ns, p := splitNamespace(strings.TrimSpace(pname))
	if !strings.HasPrefix(p, "SAPL") {
		return ""
	}
	return ns + p[len("SAPL"):]
}

// optionalRow reads one row like readRows, but a missing authorization only leaves the row out.
func optionalRow(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, table string, fields []string, where string, row func(soaprfc.Struct)) error {
	err := readRows(ctx, c, cred, table, fields, where, row)
	var se *sap.Error
	if errors.As(err, &se) && se.Code == sap.ErrAuthorization {
		return nil
	}
	return err
}
