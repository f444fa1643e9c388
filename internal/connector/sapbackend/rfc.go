package sapbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// TableSchema reads the fields with DDIF_FIELDINFO_GET and the table's class, delivery class
// and text from DD02L/DD02T with RFC_READ_TABLE. The row count is not read (it would need a
// full read of the table): it stays 0.
func (b *Backend) TableSchema(ctx context.Context, cred connector.Credentials, req sap.TableSchemaRequest) (*sap.TableSchema, error) {
	c, err := b.soap(sap.EndpointTableSchema)
	if err != nil {
		return nil, err
	}
	table := strings.ToUpper(strings.TrimSpace(req.Table))
	if table == "" {
		return nil, badRequest("table_schema needs a table")
	}
	fields, err := c.FieldInfo(ctx, rfcCred(cred), table, "")
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.TableSchema{Table: table, Fields: soaprfc.SchemaFields(fields),
		Custom: strings.HasPrefix(table, "Z") || strings.HasPrefix(table, "Y")}
	lit := soaprfc.QuoteLiteral(table)
	if err := readRows(ctx, c, cred, "DD02L", []string{"TABCLASS", "CONTFLAG"}, "TABNAME = "+lit+" AND AS4LOCAL = 'A'", func(r soaprfc.Struct) {
		out.TableClass, out.DeliveryClass = r["TABCLASS"], r["CONTFLAG"]
	}); err != nil {
		return nil, err
	}
	lang := soaprfc.QuoteLiteral(languageKey(b.sys.Language))
	if err := readRows(ctx, c, cred, "DD02T", []string{"DDTEXT"}, "TABNAME = "+lit+" AND DDLANGUAGE = "+lang+" AND AS4LOCAL = 'A'", func(r soaprfc.Struct) {
		out.Description = r["DDTEXT"]
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// languageKeys are SAP's one-letter language keys of ISO codes.
var languageKeys = map[string]string{"EN": "E", "DE": "D", "FR": "F", "ES": "S", "IT": "I", "JA": "J", "PT": "P", "NL": "N", "ZH": "1", "RU": "R", "PL": "L"}

// languageKey is SAP's one-letter language key of an ISO code, as DD02T stores it.
func languageKey(iso string) string {
	iso = strings.ToUpper(strings.TrimSpace(iso))
	if k, ok := languageKeys[iso]; ok {
		return k
	}
	if iso == "" {
		return "E"
	}
	return iso[:1]
}

func readRows(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, table string, fields []string, where string, row func(soaprfc.Struct)) error {
	_, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: table, Fields: fields, Where: where, RowCount: 1},
		func(r soaprfc.Struct) error { row(r); return nil })
	return protoErr(err)
}

// ReadTable reads through RFC_READ_TABLE: the options lines are joined with blanks and cut
// again into SAP's 72-character lines at safe places; fields wider than 512 characters in all
// are read in key-joined chunks by the client.
func (b *Backend) ReadTable(ctx context.Context, cred connector.Credentials, req sap.ReadTableRequest) (*sap.ReadTableResponse, error) {
	c, err := b.soap(sap.EndpointReadTable)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Table) == "" {
		return nil, badRequest("read_table needs a table")
	}
	if req.RowSkip < 0 || req.RowCount < 0 {
		return nil, badRequest("row_skip and row_count must not be negative")
	}
	// The client knows the layout only after the first call; rows come as field maps.
	var rows []soaprfc.Struct
	info, err := c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{
		Table: req.Table, Fields: req.Fields, Where: strings.Join(req.Options, " "),
		RowSkip: req.RowSkip, RowCount: req.RowCount,
	}, func(r soaprfc.Struct) error { rows = append(rows, r); return nil })
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.ReadTableResponse{Fields: []sap.ReadField{}, Rows: make([][]string, 0, len(rows))}
	for _, col := range info.Columns {
		out.Fields = append(out.Fields, sap.ReadField{Name: col.Name, Offset: col.Offset, Length: col.Length, Type: col.Type, Description: col.Text})
	}
	for _, r := range rows {
		row := make([]string, len(info.Columns))
		for i, col := range info.Columns {
			row[i] = r[col.Name]
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// ExecuteRFC runs a function module over SOAP RFC. With commit the function and
// BAPI_TRANSACTION_COMMIT run in one SAP session (rolled back when RETURN holds an E or A
// message); test_run sets the BAPI's TESTRUN and rolls back. The server has already refused a
// commit the config does not allow; a test run never saves, so it needs no write permission.
// Each call is its own SAP session: a session id in the request does not keep staged work.
func (b *Backend) ExecuteRFC(ctx context.Context, cred connector.Credentials, req sap.ExecuteRFCRequest) (*sap.ExecuteRFCResponse, error) {
	fm := strings.ToUpper(strings.TrimSpace(req.Function))
	if fm == "" {
		return nil, badRequest("execute_rfc needs a function")
	}
	if route := b.releasedRoute(ctx, cred, fm); route != nil {
		return route(ctx, cred, req) // S/4HANA: the released OData API instead of the BAPI (odata.go)
	}
	c, err := b.soap(sap.EndpointExecuteRFC)
	if err != nil {
		return nil, err
	}
	// A function the config names as a writer is a write even without commit (it may commit
	// by itself); on a read_only system only its test run may run.
	if (req.Commit || (b.namedWriter(fm) && !req.TestRun)) && !b.sys.WritesFunction(fm) {
		return nil, &sap.Error{Status: 403, ErrorDetail: sap.ErrorDetail{Code: sap.ErrAuthorization,
			Message: fmt.Sprintf("%s may not write on system %s (read_only or write_function_modules in the connector's config)", fm, b.sys.ID)}}
	}
	p, err := params(req)
	if err != nil {
		return nil, err
	}
	if !req.Commit && !req.TestRun {
		res, err := c.Call(ctx, rfcCred(cred), fm, p)
		if err != nil {
			return nil, protoErr(err)
		}
		return response(res, nil, false), nil
	}
	res, err := c.ExecuteBAPI(ctx, rfcCred(cred), fm, p, soaprfc.BAPIOptions{TestRun: req.TestRun})
	if err != nil {
		return nil, protoErr(err)
	}
	return response(res.Result, res.Return, res.Committed), nil
}

func (b *Backend) namedWriter(fm string) bool {
	for _, w := range b.sys.WriteFunctionModules {
		if strings.EqualFold(w, fm) {
			return true
		}
	}
	return false
}

// params converts the protocol's JSON values: scalars become their text (numbers keep their
// digits, true is 'X'), objects become structures, table rows structures.
func params(req sap.ExecuteRFCRequest) (soaprfc.Params, error) {
	p := soaprfc.Params{Imports: map[string]any{}, Tables: map[string][]soaprfc.Struct{}}
	for name, v := range req.Imports {
		if obj, ok := v.(map[string]any); ok {
			s, err := structOf(name, obj)
			if err != nil {
				return p, err
			}
			p.Imports[strings.ToUpper(name)] = s
			continue
		}
		s, err := scalar(name, v)
		if err != nil {
			return p, err
		}
		p.Imports[strings.ToUpper(name)] = s
	}
	for name, rows := range req.Tables {
		t := make([]soaprfc.Struct, 0, len(rows))
		for _, r := range rows {
			s, err := structOf(name, r)
			if err != nil {
				return p, err
			}
			t = append(t, s)
		}
		p.Tables[strings.ToUpper(name)] = t
	}
	return p, nil
}

func structOf(name string, obj map[string]any) (soaprfc.Struct, error) {
	s := soaprfc.Struct{}
	for f, v := range obj {
		txt, err := scalar(name+"-"+f, v)
		if err != nil {
			return nil, err
		}
		s[strings.ToUpper(f)] = txt
	}
	return s, nil
}

func scalar(name string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case float64:
		return fmt.Sprint(x), nil
	case bool:
		if x {
			return "X", nil
		}
		return "", nil
	}
	return "", badRequest("%s: a value must be a string, number, boolean or (for a structure) an object of those", name)
}

func response(res *soaprfc.Result, ret []soaprfc.Struct, committed bool) *sap.ExecuteRFCResponse {
	out := &sap.ExecuteRFCResponse{Exports: map[string]any{}, Tables: map[string][]map[string]any{}, Return: []sap.BAPIReturn{}, Committed: committed}
	for name, v := range res.Exports {
		if s, ok := v.(soaprfc.Struct); ok {
			m := map[string]any{}
			for k, fv := range s {
				m[k] = fv
			}
			out.Exports[name] = m
			continue
		}
		out.Exports[name] = v
	}
	for name, rows := range res.Tables {
		t := make([]map[string]any, 0, len(rows))
		for _, r := range rows {
			m := map[string]any{}
			for k, fv := range r {
				m[k] = fv
			}
			t = append(t, m)
		}
		out.Tables[name] = t
	}
	if ret == nil {
		ret = res.Table("RETURN")
		if s := res.Struct("RETURN"); len(ret) == 0 && s != nil {
			ret = []soaprfc.Struct{s}
		}
	}
	for _, m := range ret {
		if strings.TrimSpace(m["TYPE"]) == "" && strings.TrimSpace(m["MESSAGE"]) == "" {
			continue // BAPI_TRANSACTION_COMMIT's empty RETURN
		}
		out.Return = append(out.Return, sap.BAPIReturn{Type: strings.TrimSpace(m["TYPE"]), ID: strings.TrimSpace(m["ID"]),
			Number: strings.TrimSpace(m["NUMBER"]), Message: strings.TrimSpace(m["MESSAGE"]), Field: strings.TrimSpace(m["FIELD"])})
	}
	return out
}
