package sapbackend

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// writeTableFM is the remote-enabled function module of the abapGit package the repository
// ships in abap/zsapagent (function group ZSAPAGENT_WRITE); SAP has no standard module that
// writes a customer table generically.
const writeTableFM = "Z_SAPAGENT_WRITE_TABLE"

// maxValueLength is ZSAPAGENT_S_VALUE-VALUE's length.
const maxValueLength = 512

// writeTableInstalled remembers that the package answered once (a later removal shows as an
// error of the call itself).
type writeTableInstalled struct{ ok atomic.Bool }

// WriteTable writes rows through Z_SAPAGENT_WRITE_TABLE over SOAP RFC: each row's fields go as
// ROW/FIELDNAME/VALUE lines; the module checks them, writes and commits (or, in a test run,
// only checks). A system without the package answers NOT_SUPPORTED saying how to install it.
//
// On S/4HANA with odata enabled, the tables of releasedTables (KNA1, MARA, MAKT) go through
// their released APIs instead (writereleased.go).
func (b *Backend) WriteTable(ctx context.Context, cred connector.Credentials, req sap.WriteTableRequest) (*sap.WriteTableResponse, error) {
	table := strings.ToUpper(strings.TrimSpace(req.Table))
	mode := map[string]string{"insert": "I", "modify": "M"}[req.Mode]
	switch {
	case table == "":
		return nil, badRequest("write_table needs a table")
	case mode == "":
		return nil, badRequest("mode must be insert or modify")
	case len(req.Rows) == 0:
		return nil, badRequest("write_table needs rows")
	case len(req.Rows) > 10000:
		return nil, badRequest("at most 10000 rows per call")
	}
	if t := b.releasedWrite(ctx, cred, table); t != nil {
		return b.writeReleased(ctx, cred, table, t, req)
	}
	c, err := b.soap(sap.EndpointWriteTable)
	if err != nil {
		return nil, err
	}
	values := make([]soaprfc.Struct, 0, len(req.Rows)*4)
	for i, row := range req.Rows {
		fields := make([]string, 0, len(row))
		for f := range row {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			if len([]rune(row[f])) > maxValueLength {
				return nil, badRequest("row %d, field %s: values are at most %d characters", i+1, f, maxValueLength)
			}
			values = append(values, soaprfc.Struct{"ROW": strconv.Itoa(i + 1), "FIELDNAME": strings.ToUpper(f), "VALUE": row[f]})
		}
	}
	if err := b.ensureWritePackage(ctx, c, cred); err != nil {
		return nil, err
	}
	test := ""
	if req.TestRun {
		test = "X"
	}
	res, err := c.Call(ctx, rfcCred(cred), writeTableFM, soaprfc.Params{
		Imports: map[string]any{"IV_TABNAME": table, "IV_MODE": mode, "IV_TESTRUN": test},
		Tables:  map[string][]soaprfc.Struct{"IT_VALUES": values, "ET_ERRORS": nil, "RETURN": nil},
	})
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.WriteTableResponse{Return: []sap.BAPIReturn{}}
	out.Inserted, _ = strconv.Atoi(strings.TrimSpace(res.String("EV_INSERTED")))
	out.Updated, _ = strconv.Atoi(strings.TrimSpace(res.String("EV_UPDATED")))
	for _, e := range res.Table("ET_ERRORS") {
		n, _ := strconv.Atoi(strings.TrimSpace(e["ROW"]))
		out.Errors = append(out.Errors, sap.RowError{Row: n, Field: strings.TrimSpace(e["FIELDNAME"]), Message: strings.TrimSpace(e["MESSAGE"])})
	}
	for _, r := range res.Table("RETURN") {
		m := sap.BAPIReturn{Type: strings.TrimSpace(r["TYPE"]), ID: strings.TrimSpace(r["ID"]), Number: strings.TrimSpace(r["NUMBER"]), Message: strings.TrimSpace(r["MESSAGE"])}
		if m.Type == "E" || m.Type == "A" {
			return nil, writeRefusal(m)
		}
		out.Return = append(out.Return, m)
	}
	return out, nil
}

// writeRefusal maps the module's refusals (RETURN-NUMBER, see the ABAP source) onto protocol errors.
func writeRefusal(m sap.BAPIReturn) *sap.Error {
	status, code := http.StatusUnprocessableEntity, sap.ErrSAPException
	switch m.Number {
	case "001":
		status, code = http.StatusNotFound, sap.ErrNotFound
	case "002", "003":
		status, code = http.StatusForbidden, sap.ErrAuthorization
	case "004":
		status, code = http.StatusBadRequest, sap.ErrBadRequest
	case "005":
		status, code = http.StatusConflict, sap.ErrSAPException
	}
	return &sap.Error{Status: status, ErrorDetail: sap.ErrorDetail{Code: code, Message: m.Message, Exception: m.ID + "/" + m.Number}}
}

// ensureWritePackage asks RFC_GET_FUNCTION_INTERFACE once whether the module exists.
func (b *Backend) ensureWritePackage(ctx context.Context, c *soaprfc.Client, cred connector.Credentials) error {
	if b.writePkg.ok.Load() {
		return nil
	}
	_, err := c.Call(ctx, rfcCred(cred), "RFC_GET_FUNCTION_INTERFACE", soaprfc.Params{
		Imports: map[string]any{"FUNCNAME": writeTableFM}, Tables: map[string][]soaprfc.Struct{"PARAMS": nil}})
	var se *soaprfc.Error
	if errors.As(err, &se) && se.Exception == "FU_NOT_FOUND" {
		return connector.NotSupported("write_table needs the function module %s in system %s: install the abapGit package abap/zsapagent "+
			"(function group ZSAPAGENT_WRITE, docs/connector.md \"write_table\"); on S/4HANA with odata enabled, write_table of KNA1, "+
			"MARA and MAKT goes through the released APIs and needs no package", writeTableFM, b.sys.ID)
	}
	if err != nil {
		return protoErr(err)
	}
	b.writePkg.ok.Store(true)
	return nil
}
