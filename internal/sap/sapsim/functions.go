package sapsim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// function is a remote-enabled function module: its interface and what it does. run reads
// under the system's read lock and returns the changes to apply (nil for reads); changes run
// under the write lock when committed.
type function struct {
	iface sap.FunctionInterface
	run   func(s *System, u user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change)
}

// change is one staged write of a BAPI.
type change struct {
	table string
	row   map[string]string // merged into the row with the same key
	what  string            // change-log object name
}

// session holds the writes of a logical unit of work until BAPI_TRANSACTION_COMMIT. keys are
// the idempotency scopes of the calls that staged them: if the session ends without a commit,
// those calls are forgotten, so their retries stage again.
type session struct {
	staged  []change
	keys    []string
	touched time.Time
}

func p(name, kind, typ, desc string, optional bool) sap.Parameter {
	return sap.Parameter{Name: name, Kind: kind, Type: typ, Description: desc, Optional: optional}
}

var bapiret2 = p("RETURN", "tables", "BAPIRET2", "Return messages", true)

func ret(typ, id, num, format string, args ...any) sap.BAPIReturn {
	return sap.BAPIReturn{Type: typ, ID: id, Number: num, Message: fmt.Sprintf(format, args...)}
}

func str(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	default:
		return strings.TrimSpace(fmt.Sprint(v))
	}
}

func sub(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	if v == nil {
		return map[string]any{}
	}
	return v
}

// alpha applies the ALPHA conversion exit: numeric values are padded with zeros.
func alpha(v string, length int) string {
	v = strings.TrimSpace(v)
	if v == "" || strings.Trim(v, "0123456789") != "" || len(v) >= length {
		return v
	}
	return strings.Repeat("0", length-len(v)) + v
}

func (s *System) matnrLength() int {
	if s.info.SystemType == "S4HANA" {
		return 40
	}
	return 18
}

// functions are the standard function modules of both systems.
func functions() map[string]*function {
	fs := map[string]*function{
		"RFC_SYSTEM_INFO": {iface: sap.FunctionInterface{Group: "SRFC", Description: "Return system information", Parameters: []sap.Parameter{p("RFCSI_EXPORT", "export", "RFCSI", "System information", false)}},
			run: func(s *System, _ user, _ sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				i := s.info
				// RFCSI as SAP fills it: RFCHOST is the application server's host name cut to 8
				// characters, RFCDBHOST the database host, RFCCHARTYP 4103 a Unicode system.
				host := i.Host
				if len(host) > 8 {
					host = host[:8]
				}
				chartyp := "1100"
				if i.Unicode {
					chartyp = "4103"
				}
				return sap.ExecuteRFCResponse{Exports: map[string]any{"RFCSI_EXPORT": map[string]any{"RFCPROTO": "011", "RFCCHARTYP": chartyp, "RFCINTTYP": "LIT",
					"RFCFLOTYP": "IE3", "RFCDEST": i.Host + "_" + i.SystemID + "_00", "RFCHOST": host, "RFCSYSID": i.SystemID, "RFCDATABS": i.SystemID,
					"RFCDBHOST": i.Host, "RFCDBSYS": i.Database, "RFCSAPRL": i.BasisRel, "RFCMACH": "  390", "RFCOPSYS": "Linux", "RFCTZONE": "     0",
					"RFCDAYST": "", "RFCIPADDR": "10.0.0.10", "RFCKERNRL": i.BasisRel[:min(3, len(i.BasisRel))], "RFCHOST2": i.Host, "RFCSI_RESV": "", "RFCIPV6ADDR": "10.0.0.10"}}}, nil
			}},
		"RFC_READ_TABLE": {iface: sap.FunctionInterface{Group: "SDTX", Description: "External access to R/3 tables via RFC", Parameters: []sap.Parameter{
			p("QUERY_TABLE", "import", "DD02L-TABNAME", "Table name", false), p("DELIMITER", "import", "SONV-FLAG", "Field delimiter", true),
			p("ROWSKIPS", "import", "SO_INT", "Rows to skip", true), p("ROWCOUNT", "import", "SO_INT", "Rows to return", true),
			p("OPTIONS", "tables", "RFC_DB_OPT", "WHERE clause lines (72 characters)", true), p("FIELDS", "tables", "RFC_DB_FLD", "Fields to read", true),
			p("DATA", "tables", "TAB512", "Rows (512 characters)", false)}, Exceptions: []string{"TABLE_NOT_AVAILABLE", "DATA_BUFFER_EXCEEDED", "OPTION_NOT_VALID", "FIELD_NOT_VALID", "NOT_AUTHORIZED"}},
			run: rfcReadTable},
		"BAPI_COMPANYCODE_GETDETAIL": {iface: sap.FunctionInterface{Group: "1008", Description: "Company code details", Parameters: []sap.Parameter{
			p("COMPANYCODEID", "import", "BAPI0002_2-COMP_CODE", "Company code", false), p("COMPANYCODE_DETAIL", "export", "BAPI0002_2", "Details", false), bapiret2}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				row, ok := s.tables["T001"].rows[str(req.Imports, "COMPANYCODEID")]
				if !ok {
					return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "FN", "021", "Company code %s does not exist", str(req.Imports, "COMPANYCODEID"))}}, nil
				}
				return sap.ExecuteRFCResponse{Exports: map[string]any{"COMPANYCODE_DETAIL": map[string]any{"COMP_CODE": row["BUKRS"], "COMP_NAME": row["BUTXT"], "CITY": row["ORT01"],
					"COUNTRY": row["LAND1"], "CURRENCY": row["WAERS"], "LANGU": row["SPRAS"], "CHRT_ACCTS": row["KTOPL"]}}, Return: []sap.BAPIReturn{}}, nil
			}},
		"BAPI_MATERIAL_GET_DETAIL": {iface: sap.FunctionInterface{Group: "MG03", Description: "Material: display details", Parameters: []sap.Parameter{
			p("MATERIAL", "import", "BAPIMATDET-MATERIAL", "Material number", false), p("PLANT", "import", "BAPIMATALL-PLANT", "Plant", true),
			p("MATERIAL_GENERAL_DATA", "export", "BAPIMATDOA", "General data", false), p("RETURN", "export", "BAPIRETURN", "Return message", false)}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				m := alpha(str(req.Imports, "MATERIAL"), s.matnrLength())
				row, ok := s.tables["MARA"].rows[m]
				if !ok {
					return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "M3", "305", "The material %s does not exist", m)}}, nil
				}
				desc := s.tables["MAKT"].rows[m+"\x00E"]["MAKTX"]
				return sap.ExecuteRFCResponse{Exports: map[string]any{"MATERIAL_GENERAL_DATA": map[string]any{"MATL_DESC": desc, "MATL_TYPE": row["MTART"], "IND_SECTOR": row["MBRSH"],
					"MATL_GROUP": row["MATKL"], "BASE_UOM": row["MEINS"], "GROSS_WT": row["BRGEW"], "NET_WEIGHT": row["NTGEW"], "UNIT_OF_WT": row["GEWEI"], "CREATED_ON": row["ERSDA"]}},
					Return: []sap.BAPIReturn{ret("S", "M3", "800", "Material %s read", m)}}, nil
			}},
		"BAPI_MATERIAL_SAVEDATA": {iface: sap.FunctionInterface{Group: "MG03", Description: "Create and change material master data", Writes: true, Parameters: []sap.Parameter{
			p("HEADDATA", "import", "BAPIMATHEAD", "Header: MATERIAL, IND_SECTOR, MATL_TYPE", false), p("CLIENTDATA", "import", "BAPI_MARA", "Client data: MATL_GROUP, BASE_UOM, ...", true),
			p("MATERIALDESCRIPTION", "tables", "BAPI_MAKT", "Descriptions: LANGU, MATL_DESC", true), p("RETURN", "export", "BAPIRET2", "Return message", false)}},
			run: bapiMaterialSave},
		"BAPI_CUSTOMER_GETDETAIL2": {iface: sap.FunctionInterface{Group: "V02D", Description: "Customer details", Parameters: []sap.Parameter{
			p("CUSTOMERNO", "import", "BAPI1007-CUSTOMER", "Customer", false), p("COMPANYCODE", "import", "BAPI1007-COMP_CODE", "Company code", true),
			p("CUSTOMERADDRESS", "export", "BAPICUSTOMER_04", "Address", false), p("CUSTOMERGENERALDETAIL", "export", "BAPICUSTOMER_KNA1", "General data", false), p("RETURN", "export", "BAPIRET1", "Return", false)}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				k := alpha(str(req.Imports, "CUSTOMERNO"), 10)
				row, ok := s.tables["KNA1"].rows[k]
				if !ok {
					return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "F2", "153", "Customer %s does not exist", k)}}, nil
				}
				return sap.ExecuteRFCResponse{Exports: map[string]any{
					"CUSTOMERADDRESS":       map[string]any{"CUSTOMER": k, "NAME": row["NAME1"], "CITY": row["ORT01"], "POSTL_COD1": row["PSTLZ"], "STREET": row["STRAS"], "COUNTRY": row["LAND1"], "TEL1_NUMBR": row["TELF1"]},
					"CUSTOMERGENERALDETAIL": map[string]any{"CUSTOMER": k, "ACCNT_GRP": row["KTOKD"], "CREATED_ON": row["ERDAT"], "VAT_REG_NO": row["STCEG"]}},
					Return: []sap.BAPIReturn{}}, nil
			}},
		"BAPI_CUSTOMER_CHANGEFROMDATA1": {iface: sap.FunctionInterface{Group: "V02D", Description: "Change customer master data", Writes: true, Parameters: []sap.Parameter{
			p("CUSTOMERNO", "import", "BAPI1007-CUSTOMER", "Customer", false), p("PI_COMPANYDATA", "import", "BAPIKNA106", "NAME, CITY, POSTL_COD1, STREET, COUNTRY, TEL1_NUMBR", true),
			p("RETURN", "export", "BAPIRETURN1", "Return", false)}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				k := alpha(str(req.Imports, "CUSTOMERNO"), 10)
				if _, ok := s.tables["KNA1"].rows[k]; !ok {
					return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "F2", "153", "Customer %s does not exist", k)}}, nil
				}
				data := sub(req.Imports, "PI_COMPANYDATA")
				row := map[string]string{"KUNNR": k}
				for bapi, field := range map[string]string{"NAME": "NAME1", "CITY": "ORT01", "POSTL_COD1": "PSTLZ", "STREET": "STRAS", "COUNTRY": "LAND1", "TEL1_NUMBR": "TELF1"} {
					if v := str(data, bapi); v != "" {
						row[field] = v
					}
				}
				if country := row["LAND1"]; country != "" {
					if _, ok := s.tables["T005"].rows[country]; !ok {
						return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "AM", "215", "Country %s does not exist", country)}}, nil
					}
				}
				return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("S", "F2", "056", "Changes have been made for customer %s", k)}},
					[]change{{table: "KNA1", row: row, what: "KNA1"}}
			}},
		"BAPI_SALESORDER_GETLIST": {iface: sap.FunctionInterface{Group: "2032", Description: "List of all orders for customer", Parameters: []sap.Parameter{
			p("CUSTOMER_NUMBER", "import", "BAPI1007-CUSTOMER", "Customer", false), p("SALES_ORGANIZATION", "import", "VKORG", "Sales organization", false),
			p("SALES_ORDERS", "tables", "BAPIORDERS", "Orders", true), bapiret2}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				k := alpha(str(req.Imports, "CUSTOMER_NUMBER"), 10)
				org := str(req.Imports, "SALES_ORGANIZATION")
				var orders []map[string]any
				items := s.tables["VBAP"]
				for _, h := range s.tables["VBAK"].sortedRows() {
					if h["KUNNR"] != k || (org != "" && h["VKORG"] != org) {
						continue
					}
					for _, it := range items.sortedRows() {
						if it["VBELN"] == h["VBELN"] {
							orders = append(orders, map[string]any{"SD_DOC": h["VBELN"], "ITM_NUMBER": it["POSNR"], "MATERIAL": it["MATNR"], "REQ_QTY": it["KWMENG"],
								"NET_VALUE": it["NETWR"], "CURRENCY": it["WAERK"], "DOC_DATE": h["ERDAT"], "DOC_TYPE": h["AUART"]})
						}
					}
				}
				if orders == nil {
					orders = []map[string]any{}
				}
				return sap.ExecuteRFCResponse{Tables: map[string][]map[string]any{"SALES_ORDERS": orders}, Return: []sap.BAPIReturn{}}, nil
			}},
		"BAPI_SALESORDER_CREATEFROMDAT2": {iface: sap.FunctionInterface{Group: "2032", Description: "Create sales order", Writes: true, Parameters: []sap.Parameter{
			p("ORDER_HEADER_IN", "import", "BAPISDHD1", "DOC_TYPE, SALES_ORG, DISTR_CHAN, DIVISION", false), p("TESTRUN", "import", "BAPIFLAG-BAPIFLAG", "Test run", true),
			p("SALESDOCUMENT", "export", "BAPIVBELN-VBELN", "Order number", false),
			p("ORDER_PARTNERS", "tables", "BAPIPARNR", "PARTN_ROLE (AG), PARTN_NUMB", false), p("ORDER_ITEMS_IN", "tables", "BAPISDITM", "ITM_NUMBER, MATERIAL, TARGET_QTY", true), bapiret2}},
			run: bapiSalesOrderCreate},
		"BAPI_PO_GETDETAIL": {iface: sap.FunctionInterface{Group: "MEWP", Description: "Purchase order details", Parameters: []sap.Parameter{
			p("PURCHASEORDER", "import", "BAPIEKKO-PO_NUMBER", "Purchase order", false), p("PO_HEADER", "export", "BAPIEKKOL", "Header", false), p("PO_ITEMS", "tables", "BAPIEKPO", "Items", true), bapiret2}},
			run: func(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
				po := alpha(str(req.Imports, "PURCHASEORDER"), 10)
				h, ok := s.tables["EKKO"].rows[po]
				if !ok {
					return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "06", "019", "Purchase order %s does not exist", po)}}, nil
				}
				var items []map[string]any
				for _, it := range s.tables["EKPO"].sortedRows() {
					if it["EBELN"] == po {
						items = append(items, map[string]any{"PO_ITEM": it["EBELP"], "MATERIAL": it["MATNR"], "PLANT": it["WERKS"], "QUANTITY": it["MENGE"], "NET_PRICE": it["NETPR"]})
					}
				}
				return sap.ExecuteRFCResponse{Exports: map[string]any{"PO_HEADER": map[string]any{"PO_NUMBER": po, "CO_CODE": h["BUKRS"], "DOC_TYPE": h["BSART"], "VENDOR": h["LIFNR"],
					"PURCH_ORG": h["EKORG"], "DOC_DATE": h["BEDAT"], "CURRENCY": h["WAERS"]}}, Tables: map[string][]map[string]any{"PO_ITEMS": items}, Return: []sap.BAPIReturn{}}, nil
			}},
		"BAPI_PO_CREATE1": {iface: sap.FunctionInterface{Group: "2012", Description: "Create purchase order", Writes: true, Parameters: []sap.Parameter{
			p("POHEADER", "import", "BAPIMEPOHEADER", "COMP_CODE, DOC_TYPE, VENDOR, PURCH_ORG, PUR_GROUP", false), p("TESTRUN", "import", "BAPIFLAG-BAPIFLAG", "Test run", true),
			p("EXPPURCHASEORDER", "export", "BAPIMEPOHEADER-PO_NUMBER", "Purchase order number", false), p("POITEM", "tables", "BAPIMEPOITEM", "PO_ITEM, MATERIAL, PLANT, QUANTITY, NET_PRICE", false), bapiret2}},
			run: bapiPOCreate},
		"BAPI_TRANSACTION_COMMIT": {iface: sap.FunctionInterface{Group: "BAPT", Description: "Execute external commit when using BAPIs", Writes: true, Parameters: []sap.Parameter{
			p("WAIT", "import", "BAPITA-WAIT", "Wait for the update task", true), p("RETURN", "export", "BAPIRET2", "Return", false)}}},
		"BAPI_TRANSACTION_ROLLBACK": {iface: sap.FunctionInterface{Group: "BAPT", Description: "Execute external rollback when using BAPIs", Parameters: []sap.Parameter{
			p("RETURN", "export", "BAPIRET2", "Return", false)}}},
	}
	released := map[string]bool{} // none of these are released for ABAP Cloud; they are classic APIs (or no API)
	for name, f := range fs {
		f.iface.Function = name
		f.iface.RemoteEnabled = true
		f.iface.Released = released[name]
	}
	return fs
}

func (s *System) functionInterface(name string) (sap.FunctionInterface, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f, ok := s.funcs[name]
	if !ok {
		return sap.FunctionInterface{}, errorf(http.StatusNotFound, sap.ErrNotFound, "FU_NOT_FOUND", "function module %s does not exist in %s", name, s.info.SystemID)
	}
	return f.iface, nil
}

// rfcWrites reports whether a call can change data (so a keyed call is run once): a writing
// function module, BAPI_TRANSACTION_COMMIT included, not in a test run.
func (s *System) rfcWrites(req sap.ExecuteRFCRequest) bool {
	s.mu.RLock()
	f, ok := s.funcs[strings.ToUpper(strings.TrimSpace(req.Function))]
	s.mu.RUnlock()
	return ok && f.iface.Writes && !req.TestRun && !strings.EqualFold(str(req.Imports, "TESTRUN"), "X")
}

// executeRFC runs a function module. Writes are staged in the caller's session and applied by
// BAPI_TRANSACTION_COMMIT (or right away with Commit); a test run stages nothing. scope is the
// call's idempotency scope ("" for none), remembered by the session it stages into.
func (s *System) executeRFC(u user, req sap.ExecuteRFCRequest, scope string) (sap.ExecuteRFCResponse, error) {
	name := strings.ToUpper(strings.TrimSpace(req.Function))
	s.mu.RLock()
	f, ok := s.funcs[name]
	s.mu.RUnlock()
	if !ok {
		return sap.ExecuteRFCResponse{}, errorf(http.StatusNotFound, sap.ErrNotFound, "FU_NOT_FOUND", "function module %s does not exist in %s", name, s.info.SystemID)
	}
	if u.restricted && f.iface.Writes && name != "BAPI_TRANSACTION_COMMIT" {
		return sap.ExecuteRFCResponse{}, errorf(http.StatusForbidden, sap.ErrAuthorization, "NOT_AUTHORIZED",
			"No RFC authorization for function module %s (S_RFC) for user %s", name, u.name)
	}
	switch name {
	case "BAPI_TRANSACTION_COMMIT":
		n := s.commit(req.Session, u)
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("S", "BAPI", "000", "%d staged changes committed", n)}, Committed: true}, nil
	case "BAPI_TRANSACTION_ROLLBACK":
		s.mu.Lock()
		s.dropSession(req.Session)
		s.mu.Unlock()
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("S", "BAPI", "001", "Rolled back")}}, nil
	}
	if name == "RFC_READ_TABLE" {
		// Same authorizations as read_table.
		if t, ok := s.tables[strings.ToUpper(str(req.Imports, "QUERY_TABLE"))]; ok {
			if err := s.authorizedTable(u, t); err != nil {
				return sap.ExecuteRFCResponse{}, err
			}
		}
	}
	testRun := req.TestRun || strings.EqualFold(str(req.Imports, "TESTRUN"), "X")
	s.mu.RLock()
	res, changes := f.run(s, u, req)
	s.mu.RUnlock()
	if res.Return == nil {
		res.Return = []sap.BAPIReturn{}
	}
	if failed(res.Return) || len(changes) == 0 {
		return res, nil
	}
	if testRun {
		res.Return = append(res.Return, ret("S", "BAPI", "002", "Test run: nothing was saved"))
		return res, nil
	}
	s.mu.Lock()
	ses := s.sessionFor(req.Session)
	ses.staged = append(ses.staged, changes...)
	if scope != "" && !req.Commit {
		ses.keys = append(ses.keys, scope)
	}
	s.mu.Unlock()
	if req.Commit {
		s.commit(req.Session, u)
		res.Committed = true
	}
	return res, nil
}

func failed(rs []sap.BAPIReturn) bool {
	for _, r := range rs {
		if r.Type == "E" || r.Type == "A" {
			return true
		}
	}
	return false
}

// sessionFor returns the session (callers hold s.mu); old sessions are dropped, as an RFC
// connection's unit of work ends with the connection.
func (s *System) sessionFor(id string) *session {
	now := time.Now()
	for k, v := range s.sessions {
		if now.Sub(v.touched) > 30*time.Minute {
			s.dropSession(k)
		}
	}
	ses, ok := s.sessions[id]
	if !ok {
		ses = &session{}
		s.sessions[id] = ses
	}
	ses.touched = now
	return ses
}

// dropSession ends a unit of work without a commit: its staged changes are lost, and so is the
// memory of the keyed calls that staged them (callers hold s.mu).
func (s *System) dropSession(id string) {
	if ses, ok := s.sessions[id]; ok {
		delete(s.sessions, id)
		s.memo.forget(ses.keys)
	}
}

func (s *System) commit(id string, u user) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.sessions[id]
	if !ok {
		return 0
	}
	delete(s.sessions, id)
	s.apply(ses.staged, u)
	return len(ses.staged)
}

// apply writes staged changes with their change documents and change log (callers hold s.mu):
// BAPI_TRANSACTION_COMMIT and OData writes (odata.go) both end here.
func (s *System) apply(staged []change, u user) {
	for _, c := range staged {
		t := s.tables[c.table]
		row := map[string]string{}
		for _, f := range t.schema.Fields {
			if f.Type == "CLNT" {
				row[f.Name] = client
			}
		}
		for k, v := range c.row {
			row[k] = v
		}
		if old, ok := t.rows[t.keyOf(row)]; ok {
			s.changeDocument(t, old, row, u.name)
			for k, v := range c.row {
				old[k] = v
			}
		} else {
			s.changeDocument(t, nil, row, u.name)
			t.put(row)
		}
		s.logChange("DATA", c.what, "modified", u.name)
	}
}

func bapiMaterialSave(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
	head := sub(req.Imports, "HEADDATA")
	m := alpha(str(head, "MATERIAL"), s.matnrLength())
	if m == "" {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "MG", "138", "Enter a material number (HEADDATA-MATERIAL)")}}, nil
	}
	var changes []change
	_, exists := s.tables["MARA"].rows[m]
	if !exists {
		mt, ind := str(head, "MATL_TYPE"), str(head, "IND_SECTOR")
		if mt == "" || ind == "" {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "M3", "305", "The material %s does not exist; to create it give HEADDATA-MATL_TYPE and IND_SECTOR", m)}}, nil
		}
		if _, ok := s.tables["T134"].rows[mt]; !ok {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "MG", "124", "Material type %s does not exist", mt)}}, nil
		}
		cd := sub(req.Imports, "CLIENTDATA")
		changes = append(changes, change{table: "MARA", what: "MARA", row: map[string]string{"MATNR": m, "MTART": mt, "MBRSH": ind, "MATKL": str(cd, "MATL_GROUP"),
			"MEINS": firstNonEmpty(str(cd, "BASE_UOM"), "ST"), "ERSDA": time.Now().UTC().Format("20060102"), "ERNAM": "SAPAGENT"}})
	} else if cd := sub(req.Imports, "CLIENTDATA"); len(cd) > 0 {
		row := map[string]string{"MATNR": m, "LAEDA": time.Now().UTC().Format("20060102")}
		if v := str(cd, "MATL_GROUP"); v != "" {
			row["MATKL"] = v
		}
		if v := str(cd, "BASE_UOM"); v != "" {
			row["MEINS"] = v
		}
		changes = append(changes, change{table: "MARA", what: "MARA", row: row})
	}
	for _, d := range req.Tables["MATERIALDESCRIPTION"] {
		lang := strings.ToUpper(firstNonEmpty(str(d, "LANGU"), "E"))
		desc := str(d, "MATL_DESC")
		if len([]rune(desc)) > 40 {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "MG", "150", "Material description is longer than 40 characters")}}, nil
		}
		changes = append(changes, change{table: "MAKT", what: "MAKT", row: map[string]string{"MATNR": m, "SPRAS": lang[:1], "MAKTX": desc}})
	}
	if len(changes) == 0 {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("W", "MG", "160", "No data was changed for material %s", m)}}, nil
	}
	verb := "changed"
	if !exists {
		verb = "created"
	}
	return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("S", "MG", "160", "Material %s %s", m, verb)}}, changes
}

func bapiSalesOrderCreate(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
	head := sub(req.Imports, "ORDER_HEADER_IN")
	var soldTo string
	for _, p := range req.Tables["ORDER_PARTNERS"] {
		if strings.EqualFold(str(p, "PARTN_ROLE"), "AG") {
			soldTo = alpha(str(p, "PARTN_NUMB"), 10)
		}
	}
	if _, ok := s.tables["KNA1"].rows[soldTo]; !ok {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "V1", "390", "Sold-to party %q does not exist (ORDER_PARTNERS with PARTN_ROLE AG)", soldTo)}}, nil
	}
	org := firstNonEmpty(str(head, "SALES_ORG"), "1000")
	if _, ok := s.tables["TVKO"].rows[org]; !ok {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "V1", "311", "Sales organization %s does not exist", org)}}, nil
	}
	items := req.Tables["ORDER_ITEMS_IN"]
	if len(items) == 0 {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "V1", "761", "The order has no items (ORDER_ITEMS_IN)")}}, nil
	}
	vbeln := s.nextNumber("VBAK", "VBELN", 10)
	today := time.Now().UTC().Format("20060102")
	changes := []change{{table: "VBAK", what: "VBAK", row: map[string]string{"VBELN": vbeln, "ERDAT": today, "ERNAM": "SAPAGENT", "AUART": firstNonEmpty(str(head, "DOC_TYPE"), "OR"),
		"VKORG": org, "VTWEG": firstNonEmpty(str(head, "DISTR_CHAN"), "10"), "SPART": firstNonEmpty(str(head, "DIVISION"), "00"), "KUNNR": soldTo, "NETWR": "0.00", "WAERK": "EUR"}}}
	for i, it := range items {
		m := alpha(str(it, "MATERIAL"), s.matnrLength())
		mara, ok := s.tables["MARA"].rows[m]
		if !ok {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "V1", "392", "Material %s does not exist (item %d)", m, i+1)}}, nil
		}
		posnr := alpha(firstNonEmpty(str(it, "ITM_NUMBER"), strconv.Itoa((i+1)*10)), 6)
		changes = append(changes, change{table: "VBAP", what: "VBAP", row: map[string]string{"VBELN": vbeln, "POSNR": posnr, "MATNR": m,
			"KWMENG": firstNonEmpty(str(it, "TARGET_QTY"), "1"), "VRKME": mara["MEINS"], "NETWR": "0.00", "WAERK": "EUR", "WERKS": "1000"}})
	}
	return sap.ExecuteRFCResponse{Exports: map[string]any{"SALESDOCUMENT": vbeln},
		Return: []sap.BAPIReturn{ret("S", "V1", "311", "Standard Order %s has been saved", vbeln)}}, changes
}

func bapiPOCreate(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
	head := sub(req.Imports, "POHEADER")
	vendor := alpha(str(head, "VENDOR"), 10)
	if _, ok := s.tables["LFA1"].rows[vendor]; !ok {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "06", "321", "Vendor %q does not exist", vendor)}}, nil
	}
	items := req.Tables["POITEM"]
	if len(items) == 0 {
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "ME", "083", "Purchase order has no items (POITEM)")}}, nil
	}
	ebeln := s.nextNumber("EKKO", "EBELN", 10)
	changes := []change{{table: "EKKO", what: "EKKO", row: map[string]string{"EBELN": ebeln, "BUKRS": firstNonEmpty(str(head, "COMP_CODE"), "1000"),
		"BSART": firstNonEmpty(str(head, "DOC_TYPE"), "NB"), "LIFNR": vendor, "EKORG": firstNonEmpty(str(head, "PURCH_ORG"), "1000"),
		"EKGRP": firstNonEmpty(str(head, "PUR_GROUP"), "001"), "BEDAT": time.Now().UTC().Format("20060102"), "WAERS": "EUR"}}}
	for i, it := range items {
		m := alpha(str(it, "MATERIAL"), s.matnrLength())
		mara, ok := s.tables["MARA"].rows[m]
		if !ok {
			return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "ME", "047", "Material %s does not exist (item %d)", m, i+1)}}, nil
		}
		changes = append(changes, change{table: "EKPO", what: "EKPO", row: map[string]string{"EBELN": ebeln, "EBELP": alpha(firstNonEmpty(str(it, "PO_ITEM"), strconv.Itoa((i+1)*10)), 5),
			"MATNR": m, "WERKS": firstNonEmpty(str(it, "PLANT"), "1000"), "MENGE": firstNonEmpty(str(it, "QUANTITY"), "1"), "MEINS": mara["MEINS"], "NETPR": firstNonEmpty(str(it, "NET_PRICE"), "0.00")}})
	}
	return sap.ExecuteRFCResponse{Exports: map[string]any{"EXPPURCHASEORDER": ebeln},
		Return: []sap.BAPIReturn{ret("S", "06", "017", "Standard PO created under the number %s", ebeln)}}, changes
}

// nextNumber is the next free number of a numeric key (number ranges, simplified); callers
// hold the read lock.
func (s *System) nextNumber(tab, field string, width int) string {
	max := 0
	for _, r := range s.tables[tab].rows {
		if n, err := strconv.Atoi(r[field]); err == nil && n > max {
			max = n
		}
	}
	for _, ses := range s.sessions {
		for _, c := range ses.staged {
			if c.table == tab {
				if n, err := strconv.Atoi(c.row[field]); err == nil && n > max {
					max = n
				}
			}
		}
	}
	return pad(max+1, width)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// rfcReadTable is RFC_READ_TABLE itself, over read_table.
func rfcReadTable(s *System, _ user, req sap.ExecuteRFCRequest) (sap.ExecuteRFCResponse, []change) {
	rt := sap.ReadTableRequest{Table: str(req.Imports, "QUERY_TABLE")}
	rt.RowSkip, _ = strconv.Atoi(str(req.Imports, "ROWSKIPS"))
	rt.RowCount, _ = strconv.Atoi(str(req.Imports, "ROWCOUNT"))
	for _, o := range req.Tables["OPTIONS"] {
		rt.Options = append(rt.Options, str(o, "TEXT"))
	}
	for _, f := range req.Tables["FIELDS"] {
		rt.Fields = append(rt.Fields, str(f, "FIELDNAME"))
	}
	delim := str(req.Imports, "DELIMITER")
	res, err := s.readTableLocked(user{name: serviceUser}, rt)
	if err != nil {
		e := err.(*sap.Error)
		return sap.ExecuteRFCResponse{Return: []sap.BAPIReturn{ret("E", "SDTX", "000", "%s: %s", e.Exception, e.Message)}}, nil
	}
	fields := make([]map[string]any, len(res.Fields))
	for i, f := range res.Fields {
		fields[i] = map[string]any{"FIELDNAME": f.Name, "OFFSET": fmt.Sprintf("%06d", f.Offset), "LENGTH": fmt.Sprintf("%06d", f.Length), "TYPE": f.Type, "FIELDTEXT": f.Description}
	}
	data := make([]map[string]any, len(res.Rows))
	for i, row := range res.Rows {
		var b strings.Builder
		for j, v := range row {
			if delim != "" {
				if j > 0 {
					b.WriteString(delim)
				}
				b.WriteString(v)
			} else {
				fmt.Fprintf(&b, "%-*s", res.Fields[j].Length, v)
			}
		}
		data[i] = map[string]any{"WA": b.String()}
	}
	return sap.ExecuteRFCResponse{Tables: map[string][]map[string]any{"FIELDS": fields, "DATA": data}, Return: []sap.BAPIReturn{}}, nil
}

// sortedNames lists map keys in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
