package sapsim

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/sap"
)

// The simulator's ADT interface: each system answers SAP's ADT REST services under its SID,
// e.g. GET /ECC/sap/bc/adt/discovery, so internal/sap/adt reaches it with BaseURL
// http://host/ECC. It answers with the element and attribute names of the recordings in
// internal/sap/adt/testdata/adt (adt_conformance_test.go checks that) over the same objects,
// tables and where-used index as the connector protocol.

const adtPrefix = "/sap/bc/adt"

// adtState is a system's ADT sessions (CSRF tokens by session cookie) and release switch. It
// lives beside System rather than in it so that the ADT interface stays in this file.
type adtState struct {
	mu       sync.Mutex
	legacy   bool                   // discovery as SAP_BASIS 7.40 answers it
	sessions map[string]*adtSession // session cookie value -> session
}

type adtSession struct {
	user  string
	token string
}

// maxADTSessions bounds the sessions a system keeps; clients that never send their cookie back
// would otherwise grow the map without end.
const maxADTSessions = 10000

var adtStates sync.Map // *System -> *adtState

func (s *System) adt() *adtState {
	v, _ := adtStates.LoadOrStore(s, &adtState{sessions: map[string]*adtSession{}})
	return v.(*adtState)
}

// SetLegacyADT makes the system's ADT discovery that of a release before SAP_BASIS 7.50: no
// free-style data preview, no usage references, no DDIC table sources.
func (s *System) SetLegacyADT(legacy bool) {
	st := s.adt()
	st.mu.Lock()
	st.legacy = legacy
	st.mu.Unlock()
}

// adtCollection is one app:collection of the discovery document.
type adtCollection struct {
	workspace, title, href, accept, term, scheme string
	modern                                       bool // only SAP_BASIS >= 7.50 has it
}

var adtCollections = []adtCollection{
	{"Repository Information System", "Search", "/sap/bc/adt/repository/informationsystem/search", "", "search", "http://www.sap.com/adt/categories/respository", false},
	{"Repository Information System", "Usage References", "/sap/bc/adt/repository/informationsystem/usageReferences", "", "usageReferences", "http://www.sap.com/adt/categories/respository", true},
	{"Data Preview", "Freestyle Data Preview for DDIC", "/sap/bc/adt/datapreview/freestyle", "", "DatapreviewFreeStyle", "http://www.sap.com/adt/categories/datapreview", true},
	{"Dictionary", "Database Table", "/sap/bc/adt/ddic/tables", "application/vnd.sap.adt.tables.v2+xml", "tabldt", "http://www.sap.com/wbobj/dictionary", true},
	{"Dictionary", "Data Definitions", "/sap/bc/adt/ddic/ddl/sources", "application/vnd.sap.adt.ddlsource+xml", "ddlsources", "http://www.sap.com/adt/categories/ddic/ddlsources", false},
	{"Source Code Library", "Programs", "/sap/bc/adt/programs/programs", "application/vnd.sap.adt.programs.programs.v2+xml", "programs", "http://www.sap.com/adt/categories/programs", false},
	{"Source Code Library", "Includes", "/sap/bc/adt/programs/includes", "application/vnd.sap.adt.programs.includes.v2+xml", "includes", "http://www.sap.com/adt/categories/programs", false},
	{"Source Code Library", "Classes", "/sap/bc/adt/oo/classes", "application/vnd.sap.adt.oo.classes.v4+xml", "classes", "http://www.sap.com/adt/categories/oo", false},
	{"Source Code Library", "Interfaces", "/sap/bc/adt/oo/interfaces", "application/vnd.sap.adt.oo.interfaces.v5+xml", "interfaces", "http://www.sap.com/adt/categories/oo", false},
	{"Source Code Library", "Function Groups", "/sap/bc/adt/functions/groups", "application/vnd.sap.adt.functions.groups.v3+xml", "groups", "http://www.sap.com/adt/categories/functions", false},
}

// adtTypes maps the simulator's object types onto ADT's: the collection an object lives in,
// its ADT type and the word ADT's where-used title uses.
var adtTypes = map[string]struct{ collection, adtType, label string }{
	"PROG": {"/sap/bc/adt/programs/programs", "PROG/P", "Program"},
	"INCL": {"/sap/bc/adt/programs/includes", "PROG/I", "Include"},
	"CLAS": {"/sap/bc/adt/oo/classes", "CLAS/OC", "Class"},
	"INTF": {"/sap/bc/adt/oo/interfaces", "INTF/OI", "Interface"},
	"DDLS": {"/sap/bc/adt/ddic/ddl/sources", "DDLS/DF", "Data Definition"},
	"TABL": {"/sap/bc/adt/ddic/tables", "TABL/DT", "Database Table"},
	"FUNC": {"/sap/bc/adt/functions/groups", "FUGR/FF", "Function Module"},
}

func adtName(name string) string { return url.PathEscape(strings.ToLower(name)) }

// adtURI is an object's ADT URI; ok is false for types ADT has no source collection for here.
func (s *System) adtURI(typ, name, group string) (string, bool) {
	t, ok := adtTypes[typ]
	if !ok {
		return "", false
	}
	if typ == "FUNC" {
		if group == "" {
			return "", false
		}
		return t.collection + "/" + adtName(group) + "/fmodules/" + adtName(name), true
	}
	return t.collection + "/" + adtName(name), true
}

// parseADTURI reads an object URI back (…/source/main, a query or a fragment may follow).
func parseADTURI(uri string) (typ, name string, ok bool) {
	uri, _, _ = strings.Cut(uri, "?")
	uri, _, _ = strings.Cut(uri, "#")
	uri = strings.TrimSuffix(strings.TrimSuffix(uri, "/source/main"), "/")
	for t, a := range adtTypes {
		rest, found := strings.CutPrefix(uri, a.collection+"/")
		if !found || rest == "" {
			continue
		}
		segs := strings.Split(rest, "/")
		switch {
		case t == "FUNC" && len(segs) == 3 && segs[1] == "fmodules":
			rest = segs[2]
		case t != "FUNC" && len(segs) == 1:
		default:
			continue
		}
		n, err := url.PathUnescape(rest)
		if err != nil || n == "" {
			return "", "", false
		}
		return t, strings.ToUpper(n), true
	}
	return "", "", false
}

// serveADT answers one ADT request; path starts with /sap/bc/adt.
func (s *System) serveADT(w http.ResponseWriter, r *http.Request, path string) {
	s.init()
	u, ok := s.adtLogon(w, r)
	if !ok {
		return
	}
	if !s.adtCSRF(w, r, u) {
		return
	}
	if err := s.fault(r.Context()); err != nil {
		adtFail(w, err)
		return
	}
	st := s.adt()
	st.mu.Lock()
	legacy := st.legacy
	st.mu.Unlock()
	q := r.URL.Query()
	switch {
	case path == adtPrefix+"/discovery" && r.Method == http.MethodGet:
		writeADT(w, "application/atomsvc+xml", s.adtDiscovery(legacy))
	case path == adtPrefix+"/repository/informationsystem/search" && r.Method == http.MethodGet && q.Get("operation") == "quickSearch":
		writeADT(w, "application/xml", s.adtSearch(q))
	case !legacy && path == adtPrefix+"/repository/informationsystem/usageReferences/scope" && r.Method == http.MethodPost:
		s.adtUsage(w, q.Get("uri"), true)
	case !legacy && path == adtPrefix+"/repository/informationsystem/usageReferences" && r.Method == http.MethodPost:
		s.adtUsage(w, q.Get("uri"), false)
	case !legacy && path == adtPrefix+"/datapreview/freestyle" && r.Method == http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			adtException(w, http.StatusBadRequest, "ExceptionInvalidData", "the request body is unreadable")
			return
		}
		s.adtPreview(w, u, string(body), q.Get("rowNumber"))
	case strings.HasSuffix(path, "/source/main") && r.Method == http.MethodGet:
		s.adtSource(w, path, legacy)
	default:
		adtException(w, http.StatusNotFound, "ExceptionResourceNotFound", fmt.Sprintf("Resource %s does not exist", path))
	}
}

// adtLogon checks Basic authentication and sap-client like the ICF logon of an ADT service.
func (s *System) adtLogon(w http.ResponseWriter, r *http.Request) (user, bool) {
	name, pass, ok := r.BasicAuth()
	c := r.URL.Query().Get("sap-client")
	if ok && (c == "" || c == client) {
		if u, err := s.logon(Credentials{User: name, Password: pass}); err == nil && name != "" {
			return u, true
		}
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm="SAP NetWeaver Application Server [%s/%s]"`, s.info.SystemID, client))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = io.WriteString(w, "Logon failed: name or password is incorrect, or the client does not exist")
	return user{}, false
}

func (s *System) sessionCookie() string { return "SAP_SESSIONID_" + s.info.SystemID + "_" + client }

// adtCSRF hands out a token on "x-csrf-token: Fetch" and requires it, with the session cookie
// it belongs to, on every modifying request.
func (s *System) adtCSRF(w http.ResponseWriter, r *http.Request, u user) bool {
	st := s.adt()
	st.mu.Lock()
	defer st.mu.Unlock()
	var sess *adtSession
	if c, err := r.Cookie(s.sessionCookie()); err == nil {
		if x := st.sessions[c.Value]; x != nil && x.user == u.name {
			sess = x
		}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if strings.EqualFold(r.Header.Get("x-csrf-token"), "fetch") {
			if sess == nil {
				if len(st.sessions) >= maxADTSessions {
					st.sessions = map[string]*adtSession{} // like an ICM restart: every session ends
				}
				id, tok := randomHex(16), randomHex(12)
				sess = &adtSession{user: u.name, token: base64.StdEncoding.EncodeToString([]byte(tok))}
				st.sessions[id] = sess
				http.SetCookie(w, &http.Cookie{Name: s.sessionCookie(), Value: id, Path: "/", HttpOnly: true})
				http.SetCookie(w, &http.Cookie{Name: "sap-usercontext", Value: "sap-client=" + client, Path: "/"})
			}
			w.Header().Set("x-csrf-token", sess.token)
		}
		return true
	}
	if sess != nil && r.Header.Get("x-csrf-token") == sess.token {
		return true
	}
	w.Header().Set("x-csrf-token", "Required")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, "CSRF token validation failed")
	return false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeADT(w http.ResponseWriter, contentType string, body string) {
	w.Header().Set("Content-Type", contentType+"; charset=utf-8")
	_, _ = io.WriteString(w, body)
}

// esc escapes text for an XML element or attribute (the ADT and SOAP RFC answers).
func esc(v string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(v))
	return b.String()
}

// adtException writes ADT's error body (exc:exception), as the recordings show it.
func adtException(w http.ResponseWriter, status int, typeID, msg string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	m := esc(msg)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><exc:exception xmlns:exc="http://www.sap.com/abapxml/types/communicationframework">`+
		`<namespace id="com.sap.adt"/><type id="%s"/><message lang="EN">%s</message><localizedMessage lang="EN">%s</localizedMessage><properties/></exc:exception>`,
		esc(typeID), m, m)
}

// adtFail maps a simulator error onto ADT's answer.
func adtFail(w http.ResponseWriter, err error) {
	var se *sap.Error
	if !errors.As(err, &se) {
		adtException(w, http.StatusInternalServerError, "ExceptionInternal", err.Error())
		return
	}
	typeID := "ExceptionInternal"
	switch se.Status {
	case http.StatusNotFound:
		typeID = "ExceptionResourceNotFound"
	case http.StatusForbidden:
		typeID = "ExceptionResourceNoAccess"
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		typeID = "ExceptionInvalidData"
	}
	adtException(w, se.Status, typeID, se.Message)
}

func (s *System) adtDiscovery(legacy bool) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><app:service xmlns:app="http://www.w3.org/2007/app" xmlns:atom="http://www.w3.org/2005/Atom">`)
	ws := ""
	for _, c := range adtCollections {
		if legacy && c.modern {
			continue
		}
		if c.workspace != ws {
			if ws != "" {
				b.WriteString(`</app:workspace>`)
			}
			ws = c.workspace
			fmt.Fprintf(&b, `<app:workspace><atom:title>%s</atom:title>`, esc(ws))
		}
		fmt.Fprintf(&b, `<app:collection href="%s"><atom:title>%s</atom:title>`, esc(c.href), esc(c.title))
		if c.accept != "" {
			fmt.Fprintf(&b, `<app:accept>%s</app:accept>`, esc(c.accept))
		}
		fmt.Fprintf(&b, `<atom:category term="%s" scheme="%s"/></app:collection>`, esc(c.term), esc(c.scheme))
	}
	b.WriteString(`</app:workspace></app:service>`)
	return b.String()
}

// funcGroup is the function group of a function module, "" when unknown.
func (s *System) funcGroup(name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if o := s.objects["FUNC/"+name]; o != nil {
		return o.Group
	}
	if f := s.funcs[name]; f != nil {
		return f.iface.Group
	}
	if o, ok := s.generatedObject("FUNC", name); ok {
		return o.Group
	}
	return ""
}

// adtObjectPackage is the package of a custom object, "" when unknown.
func (s *System) adtObjectPackage(typ, name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if o := s.objects[typ+"/"+name]; o != nil {
		return o.Package
	}
	if o, ok := s.generatedObject(typ, name); ok {
		return o.Package
	}
	return ""
}

func (s *System) adtSearch(q url.Values) string {
	limit, _ := strconv.Atoi(q.Get("maxResults"))
	if limit <= 0 {
		limit = 100
	}
	typ := ""
	if want := strings.ToUpper(q.Get("objectType")); want != "" {
		typ = want
		for t, a := range adtTypes {
			if a.adtType == want || strings.HasPrefix(want, a.adtType+"/") {
				typ = t
			}
		}
	}
	res := s.searchObjects(sap.SearchObjectsRequest{Query: q.Get("query"), ObjectType: typ, Limit: limit})
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<adtcore:objectReferences xmlns:adtcore="http://www.sap.com/adt/core">` + "\n")
	for _, o := range res.Objects {
		group := ""
		if o.Type == "FUNC" {
			group = s.funcGroup(o.Name)
		}
		uri, ok := s.adtURI(o.Type, o.Name, group)
		if !ok {
			continue // no ADT collection for the type here
		}
		fmt.Fprintf(&b, `  <adtcore:objectReference adtcore:uri="%s" adtcore:type="%s" adtcore:name="%s" adtcore:packageName="%s" adtcore:description="%s"/>`+"\n",
			esc(uri), adtTypes[o.Type].adtType, esc(o.Name), esc(o.Package), esc(o.Description))
	}
	b.WriteString(`</adtcore:objectReferences>` + "\n")
	return b.String()
}

func (s *System) adtSource(w http.ResponseWriter, path string, legacy bool) {
	typ, name, ok := parseADTURI(path)
	if !ok || (legacy && typ == "TABL") {
		adtException(w, http.StatusNotFound, "ExceptionResourceNotFound", fmt.Sprintf("Resource %s does not exist", path))
		return
	}
	if typ == "TABL" {
		s.adtTableSource(w, name)
		return
	}
	src, err := s.source(typ, name)
	if err != nil {
		adtFail(w, err)
		return
	}
	writeADT(w, "text/plain", src.Source)
}

// adtTableSource is a table's definition in the DDL-like syntax ADT shows for tables.
func (s *System) adtTableSource(w http.ResponseWriter, name string) {
	schema, err := s.tableSchema(name)
	if err != nil {
		adtFail(w, err)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@EndUserText.label : '%s'\n@AbapCatalog.tableCategory : #TRANSPARENT\ndefine table %s {\n", schema.Description, strings.ToLower(name))
	for _, f := range schema.Fields {
		key := ""
		if f.Key {
			key = "key "
		}
		typ := strings.ToLower(f.DataElement)
		if typ == "" {
			typ = fmt.Sprintf("abap.%s(%d)", strings.ToLower(f.Type), f.Length)
		}
		fmt.Fprintf(&b, "  %s%s : %s;\n", key, strings.ToLower(f.Name), typ)
	}
	b.WriteString("}\n")
	writeADT(w, "text/plain", b.String())
}

// adtUsage answers the usage references scope (scope true) and search calls for an object URI.
func (s *System) adtUsage(w http.ResponseWriter, uri string, scope bool) {
	typ, name, ok := parseADTURI(uri)
	if !ok || !s.adtKnows(typ, name) {
		adtException(w, http.StatusNotFound, "ExceptionResourceNotFound", fmt.Sprintf("Object %s does not exist", uri))
		return
	}
	a := adtTypes[typ]
	display := name + " (" + a.label + ")"
	scopeXML := func() string {
		return fmt.Sprintf(`  <usagereferences:objectIdentifier displayName="%s" globalType="%s"/>`+"\n"+
			`  <usagereferences:grade definitions="false" elements="false" indirectReferences="true"/>`+"\n"+
			`  <usagereferences:objectTypes>`+"\n"+
			`    <usagereferences:type name="CLAS/OC" isSelected="true" isDefault="true"/>`+"\n"+
			`    <usagereferences:type name="INTF/OI" isSelected="true" isDefault="true"/>`+"\n"+
			`    <usagereferences:type name="PROG/P" isSelected="true" isDefault="true"/>`+"\n"+
			`    <usagereferences:type name="FUGR/FF" isSelected="true" isDefault="true"/>`+"\n"+
			`    <usagereferences:type name="DDLS/DF" isSelected="true" isDefault="true"/>`+"\n"+
			`  </usagereferences:objectTypes>`+"\n"+
			`  <usagereferences:payload>%s</usagereferences:payload>`+"\n",
			esc(display), a.adtType, base64.StdEncoding.EncodeToString([]byte(typ+"/"+name)))
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	if scope {
		b.WriteString(`<usagereferences:usageScopeResult xmlns:usagereferences="http://www.sap.com/adt/ris/usageReferences" localUsage="false">` + "\n")
		b.WriteString(scopeXML())
		b.WriteString(`</usagereferences:usageScopeResult>` + "\n")
		writeADT(w, "application/vnd.sap.adt.repository.usagereferences.scope.response.v1+xml", b.String())
		return
	}
	res := s.whereUsed(sap.WhereUsedRequest{ObjectType: typ, Name: name, Limit: 500})
	type hit struct{ typ, name string }
	seen := map[hit]bool{}
	var hits []hit
	for _, u := range res.Usages {
		h := hit{u.ObjectType, u.Name}
		if !seen[h] {
			seen[h] = true
			hits = append(hits, h)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].typ+hits[i].name < hits[j].typ+hits[j].name })
	var objs strings.Builder
	n := 0
	for _, h := range hits {
		group := ""
		if h.typ == "FUNC" {
			group = s.funcGroup(h.name)
		}
		ouri, ok := s.adtURI(h.typ, h.name, group)
		if !ok {
			continue
		}
		n++
		pkg := s.adtObjectPackage(h.typ, h.name)
		puri := "/sap/bc/adt/packages/" + adtName(pkg)
		fmt.Fprintf(&objs, `    <usagereferences:referencedObject uri="%s" parentUri="%s" isResult="true" canHaveChildren="false" usageInformation="gradeDirect">`+"\n"+
			`      <usagereferences:adtObject xmlns:adtcore="http://www.sap.com/adt/core" adtcore:name="%s" adtcore:type="%s">`+"\n"+
			`        <adtcore:packageRef adtcore:uri="%s" adtcore:type="DEVC/K" adtcore:name="%s"/>`+"\n"+
			`      </usagereferences:adtObject>`+"\n"+
			`    </usagereferences:referencedObject>`+"\n",
			esc(ouri), esc(puri), esc(h.name), adtTypes[h.typ].adtType, esc(puri), esc(pkg))
	}
	fmt.Fprintf(&b, `<usagereferences:usageReferenceResult xmlns:usagereferences="http://www.sap.com/adt/ris/usageReferences" numberOfResults="%d" resultDescription="%s" referencedObjectIdentifier="">`+"\n",
		n, esc("["+s.info.SystemID+"] Where-Used List: "+display))
	b.WriteString("  <usagereferences:scope>\n" + scopeXML() + "  </usagereferences:scope>\n")
	if n == 0 {
		b.WriteString("  <usagereferences:referencedObjects/>\n")
	} else {
		b.WriteString("  <usagereferences:referencedObjects>\n" + objs.String() + "  </usagereferences:referencedObjects>\n")
	}
	b.WriteString(`</usagereferences:usageReferenceResult>` + "\n")
	writeADT(w, "application/vnd.sap.adt.repository.usagereferences.result.v1+xml", b.String())
}

// previewSQL is the subset of ABAP SQL the free-style preview understands here:
// SELECT <fields|*|COUNT(*)> FROM <table> [WHERE <condition>] [UP TO n ROWS] [.]
var previewSQL = regexp.MustCompile(`(?is)^\s*SELECT\s+(.+?)\s+FROM\s+([A-Za-z0-9_/]+)(?:\s+WHERE\s+(.+?))?(?:\s+UP\s+TO\s+(\d+)\s+ROWS)?\s*\.?\s*$`)

func (s *System) adtPreview(w http.ResponseWriter, u user, sql, rowNumber string) {
	m := previewSQL.FindStringSubmatch(sql)
	if m == nil {
		adtException(w, http.StatusBadRequest, "ExceptionInvalidData", "only SELECT <fields> FROM <table> [WHERE …] [UP TO n ROWS] is supported")
		return
	}
	limit, _ := strconv.Atoi(rowNumber)
	if limit <= 0 {
		limit = 100
	}
	if n, err := strconv.Atoi(m[4]); err == nil && n > 0 && n < limit {
		limit = n
	}
	name := strings.ToUpper(m[2])
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tables[name]
	if !ok {
		adtException(w, http.StatusNotFound, "ExceptionResourceNotFound", fmt.Sprintf("Table %s does not exist in %s", name, s.info.SystemID))
		return
	}
	if err := s.authorizedTable(u, t); err != nil {
		adtFail(w, err)
		return
	}
	fieldSet := make(map[string]bool, len(t.fieldIdx))
	for n := range t.fieldIdx {
		fieldSet[n] = true
	}
	where, err := parseWhere(m[3], fieldSet)
	if err != nil {
		adtException(w, http.StatusBadRequest, "ExceptionInvalidData", "the WHERE condition is not valid: "+err.Error())
		return
	}
	list := strings.TrimSpace(m[1])
	count := strings.EqualFold(strings.ReplaceAll(list, " ", ""), "COUNT(*)")
	var cols []sap.Field
	if !count && list != "*" {
		for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			fd, ok := t.field(strings.ToUpper(f))
			if !ok {
				adtException(w, http.StatusBadRequest, "ExceptionInvalidData", fmt.Sprintf("Column %s is unknown in table %s", strings.ToUpper(f), name))
				return
			}
			cols = append(cols, fd)
		}
	} else if !count {
		cols = t.schema.Fields
	}
	total := 0
	var rows []map[string]string
	take := func(row map[string]string) {
		if where != nil && !where.eval(row) {
			return
		}
		total++
		if len(rows) < limit {
			rows = append(rows, row)
		}
	}
	if t.virtual != nil { // a system table: rows derived as they are read
		s.readVirtual(t, where, 0, 0, take)
	} else {
		for _, row := range t.sortedRows() {
			take(row)
		}
	}
	executed := strings.TrimRight(strings.TrimSpace(sql), ". ")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><dataPreview:tableData xmlns:dataPreview="http://www.sap.com/adt/dataPreview">`)
	column := func(name, typ, desc string, key bool, data []string) {
		fmt.Fprintf(&b, `<dataPreview:columns><dataPreview:metadata dataPreview:name="%s" dataPreview:type="%s" dataPreview:description="%s" dataPreview:keyAttribute="%t" dataPreview:colType="" dataPreview:isKeyFigure="false"/><dataPreview:dataSet>`,
			esc(name), esc(typ), esc(desc), key)
		for _, d := range data {
			fmt.Fprintf(&b, `<dataPreview:data>%s</dataPreview:data>`, esc(d))
		}
		b.WriteString(`</dataPreview:dataSet></dataPreview:columns>`)
	}
	if count {
		fmt.Fprintf(&b, `<dataPreview:totalRows>1</dataPreview:totalRows><dataPreview:isHanaAnalyticalView>false</dataPreview:isHanaAnalyticalView><dataPreview:executedQueryString>%s INTO @LS_RESULT.</dataPreview:executedQueryString><dataPreview:queryExecutionTime>0.1000000</dataPreview:queryExecutionTime>`, esc(executed))
		column("COUNT", "8", "COUNT", false, []string{strconv.Itoa(total)})
	} else {
		fmt.Fprintf(&b, `<dataPreview:totalRows>%d</dataPreview:totalRows><dataPreview:isHanaAnalyticalView>false</dataPreview:isHanaAnalyticalView><dataPreview:executedQueryString>%s   INTO     TABLE @DATA(LT_RESULT)   UP TO %d  ROWS   .</dataPreview:executedQueryString><dataPreview:queryExecutionTime>0.1000000</dataPreview:queryExecutionTime>`,
			total, esc(executed), limit)
		for _, c := range cols {
			data := make([]string, len(rows))
			for i, row := range rows {
				data[i] = row[c.Name]
			}
			column(c.Name, typeLetter(c.Type), c.Name, c.Key, data)
		}
	}
	b.WriteString(`</dataPreview:tableData>`)
	writeADT(w, "application/vnd.sap.adt.datapreview.table.v1+xml", b.String())
}

func (s *System) adtKnows(typ, name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if typ == "FUNC" && s.funcs[name] != nil {
		return true
	}
	return s.knows(typ, name)
}
