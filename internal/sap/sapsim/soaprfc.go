package sapsim

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// SOAPRFCPath is SAP's SOAP RFC service (SICF /default_host/sap/bc/soap/rfc). The simulator
// serves it per system under the system's ID: POST /<SID>/sap/bc/soap/rfc?sap-client=100.
const SOAPRFCPath = "sap/bc/soap/rfc"

const rfcNS = "urn:sap-com:document:sap:rfc:functions"

// rfcNode is one element of a request envelope: a scalar's text or child elements.
type rfcNode struct {
	name     string
	text     string
	children []*rfcNode
}

// value turns a parameter element into what the functions take: a string, a structure
// (map[string]any) or table rows (one <item> per row).
func (n *rfcNode) value() (any, bool) {
	if len(n.children) == 0 {
		return n.text, false
	}
	if n.children[0].name == "item" {
		rows := make([]map[string]any, 0, len(n.children))
		for _, it := range n.children {
			rows = append(rows, it.structure())
		}
		return rows, true
	}
	return n.structure(), false
}

func (n *rfcNode) structure() map[string]any {
	m := make(map[string]any, len(n.children))
	for _, c := range n.children {
		v, _ := c.value()
		m[c.name] = v
	}
	return m
}

// parseRFCEnvelope reads a SOAP 1.1 envelope and returns the function module (namespaces
// written "_-" turned back into "/") and its parameters.
func parseRFCEnvelope(r io.Reader) (string, *rfcNode, error) {
	dec := xml.NewDecoder(r)
	var stack []*rfcNode
	var fm *rfcNode
	inBody := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case !inBody && t.Name.Local == "Body":
				inBody = true
			case inBody && fm == nil && len(stack) == 0:
				if t.Name.Space != rfcNS {
					return "", nil, fmt.Errorf("the body element %s is not in namespace %s", t.Name.Local, rfcNS)
				}
				fm = &rfcNode{name: t.Name.Local}
				stack = append(stack, fm)
			case len(stack) > 0:
				n := &rfcNode{name: t.Name.Local}
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
				stack = append(stack, n)
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if fm == nil {
		return "", nil, errors.New("the envelope has no function module in its body")
	}
	return strings.ReplaceAll(fm.name, "_-", "/"), fm, nil
}

// rfcFault is an ABAP exception raised by a function module.
type rfcFault struct {
	name, text string
}

// serveSOAPRFC answers one SOAP RFC call for sys.
func (s *System) serveSOAPRFC(w http.ResponseWriter, r *http.Request) {
	s.init()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "SOAP RFC takes POST", http.StatusMethodNotAllowed)
		return
	}
	u, ok := s.icfLogon(w, r)
	if !ok {
		return
	}
	if err := s.fault(r.Context()); err != nil {
		var se *sap.Error
		status := http.StatusServiceUnavailable
		if errors.As(err, &se) {
			status = se.Status
		}
		http.Error(w, err.Error(), status)
		return
	}
	fm, params, err := parseRFCEnvelope(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "the request is not a SOAP RFC envelope: "+err.Error(), http.StatusBadRequest)
		return
	}
	sid := s.soapSession(w, r, u)
	out := &rfcWriter{w: bufio.NewWriterSize(w, 32<<10), fm: fm}
	// Each function writes its answer or returns a fault before writing anything.
	var fault *rfcFault
	switch fm {
	case "RFC_READ_TABLE":
		fault = s.soapReadTable(u, params, out, w)
	case "DDIF_FIELDINFO_GET":
		fault = s.soapFieldInfo(params, out, w)
	case "RFC_GET_FUNCTION_INTERFACE":
		fault = s.soapFunctionInterface(params, out, w)
	case "RFC_PING": // no parameters, does nothing: what the connector's health probe calls
		out.open(w)
		out.close()
	case WriteTableFM:
		if _, err := s.functionInterface(WriteTableFM); err == nil {
			fault = s.soapWriteTable(u, params, out, w) // writefm.go
			break
		}
		fault = s.soapFunction(u, fm, params, sid, out, w)
	default:
		fault = s.soapFunction(u, fm, params, sid, out, w)
	}
	if fault != nil {
		writeRFCFault(w, fm, fault)
		return
	}
	_ = out.w.Flush()
}

// icfLogon checks Basic auth and sap-client as the ICF does for SOAP RFC and OData; a failure
// is answered with 401 and an HTML logon page, never saying which of user, password or client
// was wrong.
func (s *System) icfLogon(w http.ResponseWriter, r *http.Request) (user, bool) {
	name, pass, ok := r.BasicAuth()
	u, err := s.logon(Credentials{User: name, Password: pass})
	if c := r.URL.Query().Get("sap-client"); !ok || name == "" || err != nil || (c != "" && c != client) {
		w.Header().Set("WWW-Authenticate", `Basic realm="SAP NetWeaver Application Server [`+s.info.SystemID+`/`+client+`]"`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, "<html><head><title>Logon Error Message</title></head><body><h1>Logon failed</h1></body></html>")
		return user{}, false
	}
	return u, true
}

// soapSession is the ABAP session of a call: the SAP_SESSIONID cookie's value, set on the first
// answer. A BAPI's staged changes live in it until BAPI_TRANSACTION_COMMIT in the same session.
// The session belongs to its user: another user's call with the same cookie gets its own.
func (s *System) soapSession(w http.ResponseWriter, r *http.Request, u user) string {
	cookie := "SAP_SESSIONID_" + s.info.SystemID + "_" + client
	if c, err := r.Cookie(cookie); err == nil && c.Value != "" {
		return "soap/" + u.name + "/" + c.Value
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: cookie, Value: id, Path: "/", HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: "sap-usercontext", Value: "sap-client=" + client, Path: "/"})
	return "soap/" + u.name + "/" + id
}

func writeRFCFault(w http.ResponseWriter, fm string, f *rfcFault) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	tag := strings.ReplaceAll(fm, "/", "_-")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Header/><soap-env:Body><soap-env:Fault><faultcode>soap-env:Client</faultcode><faultstring>`)
	b.WriteString(esc(f.name))
	b.WriteString(`</faultstring><detail><rfc:` + tag + `.Exception xmlns:rfc="` + rfcNS + `"><Name>` + esc(f.name) + `</Name><Text>` + esc(f.text) + `</Text><Message><ID></ID><Number></Number></Message></rfc:` + tag + `.Exception></detail></soap-env:Fault></soap-env:Body></soap-env:Envelope>`)
	_, _ = io.WriteString(w, b.String())
}

// rfcWriter writes a <FM.Response> envelope, opened on the first write.
type rfcWriter struct {
	w      *bufio.Writer
	fm     string
	opened bool
}

func (o *rfcWriter) open(hw http.ResponseWriter) {
	if o.opened {
		return
	}
	o.opened = true
	hw.Header().Set("Content-Type", "text/xml; charset=utf-8")
	hw.WriteHeader(http.StatusOK)
	tag := strings.ReplaceAll(o.fm, "/", "_-")
	o.w.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	o.w.WriteString(`<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Header/><soap-env:Body><urn:` + tag + `.Response xmlns:urn="` + rfcNS + `">`)
}

func (o *rfcWriter) close() {
	o.w.WriteString(`</urn:` + strings.ReplaceAll(o.fm, "/", "_-") + `.Response></soap-env:Body></soap-env:Envelope>`)
}

func (o *rfcWriter) scalar(name, v string) {
	if v == "" {
		o.w.WriteString("<" + name + "/>")
		return
	}
	o.w.WriteString("<" + name + ">")
	_ = xml.EscapeText(o.w, []byte(v))
	o.w.WriteString("</" + name + ">")
}

// fields writes a structure's fields in the given order.
func (o *rfcWriter) fields(names []string, vals map[string]string) {
	for _, n := range names {
		o.scalar(n, vals[n])
	}
}

func (o *rfcWriter) structure(name string, names []string, vals map[string]string) {
	o.w.WriteString("<" + name + ">")
	o.fields(names, vals)
	o.w.WriteString("</" + name + ">")
}

// value writes an export or a table row field of a function's result.
func (o *rfcWriter) value(name string, v any) {
	switch x := v.(type) {
	case map[string]any:
		o.w.WriteString("<" + name + ">")
		for _, k := range sortedNames(x) {
			o.value(k, x[k])
		}
		o.w.WriteString("</" + name + ">")
	case []map[string]any:
		o.w.WriteString("<" + name + ">")
		for _, row := range x {
			o.value("item", row)
		}
		o.w.WriteString("</" + name + ">")
	case string:
		o.scalar(name, x)
	case nil:
		o.scalar(name, "")
	default:
		o.scalar(name, fmt.Sprint(x))
	}
}

func importString(params *rfcNode, name string) string {
	for _, c := range params.children {
		if c.name == name {
			return strings.TrimSpace(c.text)
		}
	}
	return ""
}

func tableRows(params *rfcNode, name string) []map[string]any {
	for _, c := range params.children {
		if c.name == name {
			if v, isTable := c.value(); isTable {
				return v.([]map[string]any)
			}
		}
	}
	return nil
}

// faultOf turns an error of the simulator into the ABAP exception SAP raises.
func faultOf(err error, fallback string) *rfcFault {
	var se *sap.Error
	if errors.As(err, &se) && se.Exception != "" {
		return &rfcFault{name: se.Exception, text: se.Message}
	}
	return &rfcFault{name: fallback, text: err.Error()}
}

var readFieldsOrder = []string{"FIELDNAME", "OFFSET", "LENGTH", "TYPE", "FIELDTEXT"}

// soapReadTable is RFC_READ_TABLE: DATA lines are the fields fixed-width (or joined by
// DELIMITER); DATA comes before FIELDS, as SAP writes it. NO_DATA = 'X' answers FIELDS only.
func (s *System) soapReadTable(u user, params *rfcNode, out *rfcWriter, hw http.ResponseWriter) *rfcFault {
	req := sap.ReadTableRequest{Table: importString(params, "QUERY_TABLE")}
	req.RowSkip, _ = strconv.Atoi(importString(params, "ROWSKIPS"))
	req.RowCount, _ = strconv.Atoi(importString(params, "ROWCOUNT"))
	noData := strings.EqualFold(importString(params, "NO_DATA"), "X")
	delim := importString(params, "DELIMITER")
	opts := tableRows(params, "OPTIONS")
	for _, o := range opts {
		req.Options = append(req.Options, str(o, "TEXT"))
	}
	for _, f := range tableRows(params, "FIELDS") {
		req.Fields = append(req.Fields, str(f, "FIELDNAME"))
	}
	if noData {
		req.RowSkip, req.RowCount = 0, 1
	}
	res, err := s.readTable(u, req)
	if err != nil {
		return faultOf(err, "TABLE_NOT_AVAILABLE")
	}
	if delim != "" {
		// SAP keeps the fields at fixed width and puts the delimiter between them, so each
		// OFFSET also counts the delimiters before it.
		delim = delim[:1]
		for i := range res.Fields {
			res.Fields[i].Offset += i
		}
		if n := len(res.Fields); n > 0 && res.Fields[n-1].Offset+res.Fields[n-1].Length > sap.MaxReadTableWidth {
			return &rfcFault{name: "DATA_BUFFER_EXCEEDED", text: fmt.Sprintf("the selected fields and delimiters are wider than %d characters", sap.MaxReadTableWidth)}
		}
	}
	out.open(hw)
	out.w.WriteString("<DATA>")
	if !noData {
		var line strings.Builder
		for _, row := range res.Rows {
			line.Reset()
			for j, v := range row {
				if j > 0 {
					line.WriteString(delim)
				}
				fmt.Fprintf(&line, "%-*s", res.Fields[j].Length, v)
			}
			out.w.WriteString("<item>")
			out.scalar("WA", strings.TrimRight(line.String(), " "))
			out.w.WriteString("</item>")
		}
	}
	out.w.WriteString("</DATA><FIELDS>")
	for _, f := range res.Fields {
		out.structure("item", readFieldsOrder, map[string]string{"FIELDNAME": f.Name, "OFFSET": fmt.Sprintf("%06d", f.Offset),
			"LENGTH": fmt.Sprintf("%06d", f.Length), "TYPE": f.Type, "FIELDTEXT": f.Description})
	}
	out.w.WriteString("</FIELDS>")
	out.value("OPTIONS", opts)
	out.close()
	return nil
}

var dfiesOrder = []string{"TABNAME", "FIELDNAME", "LANGU", "POSITION", "OFFSET", "DOMNAME", "ROLLNAME", "CHECKTABLE", "LENG", "INTLEN",
	"OUTPUTLEN", "DECIMALS", "DATATYPE", "INTTYPE", "CONVEXIT", "FIELDTEXT", "SCRTEXT_L", "KEYFLAG", "LOWERCASE"}

// alphaDomains have the ALPHA conversion exit (numbers stored with leading zeros).
var alphaDomains = map[string]bool{"KUNNR": true, "LIFNR": true, "MATNR": true, "VBELN": true, "EBELN": true, "SAKNR": true, "BELNR": true, "AUFNR": true}

// outputLength is a field's output length: what RFC_READ_TABLE renders it in, at least its length.
func outputLength(f sap.Field) int {
	switch f.Type {
	case "CURR", "QUAN", "DEC":
		return f.Length + 2
	case "DATS":
		return 10
	case "TIMS":
		return 8
	}
	return f.Length
}

// soapFieldInfo is DDIF_FIELDINFO_GET: DFIES_TAB in the table's field order.
func (s *System) soapFieldInfo(params *rfcNode, out *rfcWriter, hw http.ResponseWriter) *rfcFault {
	name := strings.ToUpper(importString(params, "TABNAME"))
	schema, err := s.tableSchema(name)
	if err != nil {
		return &rfcFault{name: "NOT_FOUND", text: fmt.Sprintf("table %s is not active in the dictionary", name)}
	}
	lang := importString(params, "LANGU")
	if lang == "" {
		lang = "E"
	}
	out.open(hw)
	out.scalar("DDOBJTYPE", "TRANSP")
	out.w.WriteString("<DFIES_TAB>")
	offset := 0
	for i, f := range schema.Fields {
		row := map[string]string{"TABNAME": name, "FIELDNAME": f.Name, "LANGU": lang, "POSITION": fmt.Sprintf("%04d", i+1),
			"OFFSET": fmt.Sprintf("%06d", offset), "DOMNAME": f.Domain, "ROLLNAME": f.DataElement, "CHECKTABLE": f.CheckTable,
			"LENG": fmt.Sprintf("%06d", f.Length), "INTLEN": fmt.Sprintf("%06d", f.Length), "OUTPUTLEN": fmt.Sprintf("%06d", outputLength(f)),
			"DECIMALS": fmt.Sprintf("%06d", f.Decimals), "DATATYPE": f.Type, "INTTYPE": typeLetter(f.Type), "FIELDTEXT": f.Description, "SCRTEXT_L": f.Description}
		if alphaDomains[f.Domain] {
			row["CONVEXIT"] = "ALPHA"
		}
		if f.Key {
			row["KEYFLAG"] = "X"
		}
		offset += f.Length
		out.structure("item", dfiesOrder, row)
	}
	out.w.WriteString("</DFIES_TAB><LINES_DESCR/>")
	out.structure("X030L_WA", []string{"TABNAME", "TABLEN", "KEYLEN"}, map[string]string{"TABNAME": name, "TABLEN": fmt.Sprintf("%06d", offset)})
	out.close()
	return nil
}

var paramsOrder = []string{"PARAMCLASS", "PARAMETER", "TABNAME", "FIELDNAME", "EXID", "POSITION", "OFFSET", "INTLENGTH", "DECIMALS", "DEFAULT", "PARAMTEXT", "OPTIONAL"}

var paramClass = map[string]string{"import": "I", "export": "E", "changing": "C", "tables": "T"}

// soapFunctionInterface is RFC_GET_FUNCTION_INTERFACE: PARAMS with one line per parameter and
// exception (PARAMCLASS X).
func (s *System) soapFunctionInterface(params *rfcNode, out *rfcWriter, hw http.ResponseWriter) *rfcFault {
	fi, err := s.functionInterface(strings.ToUpper(importString(params, "FUNCNAME")))
	if err != nil {
		return faultOf(err, "FU_NOT_FOUND")
	}
	out.open(hw)
	out.w.WriteString("<PARAMS>")
	pos := 0
	line := func(class, name, typ, text, def string, optional bool) {
		pos++
		row := map[string]string{"PARAMCLASS": class, "PARAMETER": name, "TABNAME": typ, "EXID": "C", "POSITION": fmt.Sprintf("%06d", pos),
			"OFFSET": "000000", "INTLENGTH": "000000", "DECIMALS": "000000", "PARAMTEXT": text, "DEFAULT": def}
		if !strings.Contains(typ, "-") && typ != "" {
			row["EXID"] = "u"
		}
		if optional {
			row["OPTIONAL"] = "X"
		}
		out.structure("item", paramsOrder, row)
	}
	for _, p := range fi.Parameters {
		line(paramClass[p.Kind], p.Name, p.Type, p.Description, p.Default, p.Optional)
	}
	for _, e := range fi.Exceptions {
		line("X", e, "", "", "", false)
	}
	out.w.WriteString("</PARAMS>")
	out.scalar("REMOTE_BASXML_SUPPORTED", "")
	out.scalar("REMOTE_CALL", "R")
	out.scalar("UPDATE_TASK", "")
	out.close()
	return nil
}

var bapiret2Order = []string{"TYPE", "ID", "NUMBER", "MESSAGE", "LOG_NO", "LOG_MSG_NO", "MESSAGE_V1", "MESSAGE_V2", "MESSAGE_V3", "MESSAGE_V4",
	"PARAMETER", "ROW", "FIELD", "SYSTEM"}

func (s *System) returnLine(r sap.BAPIReturn) map[string]string {
	return map[string]string{"TYPE": r.Type, "ID": r.ID, "NUMBER": r.Number, "MESSAGE": r.Message, "LOG_MSG_NO": "000000", "ROW": "0",
		"FIELD": r.Field, "SYSTEM": s.info.SystemID + "CLNT" + client}
}

// soapFunction runs any other function module of the simulator (BAPIs, RFC_SYSTEM_INFO,
// BAPI_TRANSACTION_COMMIT/ROLLBACK) in the caller's ABAP session and writes its parameters.
func (s *System) soapFunction(u user, fm string, params *rfcNode, sid string, out *rfcWriter, hw http.ResponseWriter) *rfcFault {
	s.mu.RLock()
	f, ok := s.funcs[fm]
	s.mu.RUnlock()
	if !ok {
		return &rfcFault{name: "FU_NOT_FOUND", text: fmt.Sprintf("function module %s does not exist in %s", fm, s.info.SystemID)}
	}
	if u.restricted && f.iface.Writes && fm != "BAPI_TRANSACTION_COMMIT" {
		// S_RFC missing: the RFC runtime refuses the call before the module runs.
		return &rfcFault{name: "RFC_NO_AUTHORITY", text: fmt.Sprintf("User %s has no RFC authorization for function module %s", u.name, fm)}
	}
	req := sap.ExecuteRFCRequest{Function: fm, Imports: map[string]any{}, Tables: map[string][]map[string]any{}, Session: sid}
	for _, c := range params.children {
		v, isTable := c.value()
		if isTable {
			req.Tables[c.name] = v.([]map[string]any)
		} else {
			req.Imports[c.name] = v
		}
	}
	res, err := s.executeRFC(u, req, "")
	if err != nil {
		return faultOf(err, "SYSTEM_FAILURE")
	}
	out.open(hw)
	written := map[string]bool{}
	for _, p := range f.iface.Parameters {
		if p.Name == "RETURN" && (p.Kind == "export" || p.Kind == "tables") {
			written[p.Name] = true
			if p.Kind == "tables" {
				out.w.WriteString("<RETURN>")
				for _, r := range res.Return {
					out.structure("item", bapiret2Order, s.returnLine(r))
				}
				out.w.WriteString("</RETURN>")
				continue
			}
			var first sap.BAPIReturn
			for i, r := range res.Return {
				if i == 0 || r.Type == "E" || r.Type == "A" {
					first = r
					if r.Type == "E" || r.Type == "A" {
						break
					}
				}
			}
			out.structure("RETURN", bapiret2Order, s.returnLine(first))
			continue
		}
		switch p.Kind {
		case "export", "changing":
			if v, ok := res.Exports[p.Name]; ok {
				written[p.Name] = true
				out.value(p.Name, v)
			}
		case "tables":
			written[p.Name] = true
			if rows, ok := res.Tables[p.Name]; ok {
				out.value(p.Name, rows)
			} else {
				out.value(p.Name, req.Tables[p.Name])
			}
		}
	}
	// Exports the interface does not list still reach the caller.
	rest := make([]string, 0, len(res.Exports))
	for k := range res.Exports {
		if !written[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out.value(k, res.Exports[k])
	}
	out.close()
	return nil
}
