package sapsim

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// WriteTableFM is the function module of the abapGit package abap/zsapagent that the connector's
// write_table calls over SOAP RFC. The simulator has it installed unless Options.NoWritePackage.
const WriteTableFM = "Z_SAPAGENT_WRITE_TABLE"

// writeTableFunction is its interface, as abap/zsapagent/src/zsapagent_write.fugr.xml declares
// it (a test compares the two).
func writeTableFunction() *function {
	opt := func(name, typ, def, desc string) sap.Parameter {
		return sap.Parameter{Name: name, Kind: "import", Type: typ, Default: def, Description: desc, Optional: true}
	}
	return &function{iface: sap.FunctionInterface{Function: WriteTableFM, Group: "ZSAPAGENT_WRITE", Description: "sapagent: write rows into an allowed table",
		RemoteEnabled: true, Writes: true, Parameters: []sap.Parameter{
			p("IV_TABNAME", "import", "TABNAME", "Table to write (Z*, Y* or in ZSAPAGENT_WTALW)", false),
			opt("IV_MODE", "CHAR1", "'M'", "I: insert (existing keys refused), M: modify"),
			opt("IV_TESTRUN", "CHAR1", "SPACE", "X: check every row, save nothing"),
			p("EV_INSERTED", "export", "INT4", "Rows inserted (or, in a test run, to insert)", false),
			p("EV_UPDATED", "export", "INT4", "Rows updated (or, in a test run, to update)", false),
			p("IT_VALUES", "tables", "ZSAPAGENT_S_VALUE", "Rows as ROW, FIELDNAME, VALUE (external format)", false),
			p("ET_ERRORS", "tables", "ZSAPAGENT_S_ROWERR", "Refused rows and why", true),
			p("RETURN", "tables", "BAPIRET2", "Messages", true)}},
		// The simulator's own protocol has write_table; this module is reached over SOAP RFC.
		run: func(*System, user, sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "ZSAPAGENT", "000", "%s is called over SOAP RFC (write_table)", WriteTableFM)}}, nil
		}}
}

// soapWriteTable is Z_SAPAGENT_WRITE_TABLE over SOAP RFC: the rules of the ABAP source (Z/Y
// tables only: the simulated allowlist ZSAPAGENT_WTALW is empty; RETURN numbers 001-004, 010,
// 011) over the simulator's write_table checks.
func (s *System) soapWriteTable(u user, params *rfcNode, out *rfcWriter, hw http.ResponseWriter) *rfcFault {
	tab := strings.ToUpper(importString(params, "IV_TABNAME"))
	mode := strings.ToUpper(importString(params, "IV_MODE"))
	if mode == "" {
		mode = "M"
	}
	values := tableRows(params, "IT_VALUES")
	byRow := map[int]map[string]string{}
	for _, v := range values {
		n, _ := strconv.Atoi(str(v, "ROW"))
		if byRow[n] == nil {
			byRow[n] = map[string]string{}
		}
		byRow[n][strings.ToUpper(str(v, "FIELDNAME"))] = str(v, "VALUE")
	}
	rowNos := make([]int, 0, len(byRow))
	for n := range byRow {
		rowNos = append(rowNos, n)
	}
	sort.Ints(rowNos)
	rows := make([]map[string]string, len(rowNos))
	for i, n := range rowNos {
		rows[i] = byRow[n]
	}
	s.mu.RLock()
	_, exists := s.tables[tab]
	s.mu.RUnlock()
	fail := func(num, format string, args ...any) sap.WriteTableResponse {
		return sap.WriteTableResponse{Return: []sap.BAPIReturn{ret("E", "ZSAPAGENT", num, format, args...)}}
	}
	var res sap.WriteTableResponse
	switch {
	case !exists:
		res = fail("001", "Table %s is not an active transparent table", tab)
	case tab[0] != 'Z' && tab[0] != 'Y':
		res = fail("002", "Table %s is neither a Z or Y table nor listed in ZSAPAGENT_WTALW", tab)
	case mode != "I" && mode != "M":
		res = fail("004", "IV_MODE must be I (insert) or M (modify)")
	default:
		m := map[string]string{"I": "insert", "M": "modify"}[mode]
		r, err := s.writeTable(u, sap.WriteTableRequest{Table: tab, Mode: m, Rows: rows, TestRun: strings.EqualFold(importString(params, "IV_TESTRUN"), "X")})
		var se *sap.Error
		switch {
		case errors.As(err, &se) && se.Status == http.StatusForbidden:
			res = fail("003", "No authorization to change table %s (S_TABU_NAM or S_TABU_DIS, activity 02)", tab)
		case err != nil:
			res = fail("004", "%v", err)
		default:
			res = r
		}
	}
	out.open(hw)
	out.scalar("EV_INSERTED", strconv.Itoa(res.Inserted))
	out.scalar("EV_UPDATED", strconv.Itoa(res.Updated))
	out.w.WriteString("<ET_ERRORS>")
	for _, e := range res.Errors {
		row := e.Row
		if e.Row >= 1 && e.Row <= len(rowNos) {
			row = rowNos[e.Row-1]
		}
		out.structure("item", []string{"ROW", "FIELDNAME", "MESSAGE"}, map[string]string{"ROW": fmt.Sprint(row), "FIELDNAME": e.Field, "MESSAGE": e.Message})
	}
	out.w.WriteString("</ET_ERRORS>")
	out.value("IT_VALUES", values)
	out.w.WriteString("<RETURN>")
	for _, r := range res.Return {
		out.structure("item", bapiret2Order, s.returnLine(r))
	}
	out.w.WriteString("</RETURN>")
	out.close()
	return nil
}
