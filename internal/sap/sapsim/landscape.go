// Package sapsim is a simulated SAP landscape speaking the connector protocol (internal/sap): an
// ECC source system and an S/4HANA target, each with DDIC tables and thousands of rows,
// customer objects with ABAP source, BAPIs that change state and honour commits, a change
// log, users with authorizations, and knobs for latency and faults. Its data is deterministic.
// It is a product component: demos, tests, the dev stack and the offline model run against it.
package sapsim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// Connector keys of the simulated systems.
const (
	ECCConnectorKey = "sim-ecc-key"
	S4HConnectorKey = "sim-s4h-key"
)

const client = "100"

// serviceUser is the connector's own technical user: calls without X-SAP-User run as it.
const serviceUser = "SAPAGENT"

// DefaultUsers are the SAP users of both systems and their passwords.
func DefaultUsers() map[string]string {
	return map[string]string{"DEVELOPER": "dev-pass-1", "RESTRICTED": "restricted-pass-1"}
}

// Options are the fault and latency knobs.
type Options struct {
	Latency     time.Duration // added to every call
	ErrorRate   float64       // share of calls failing with SYSTEM_UNAVAILABLE
	TimeoutRate float64       // share of calls that hang until the caller gives up, then TIMEOUT
	Seed        int64         // of the fault sequence (the data never changes)
	// GeneratedObjects adds a generated landscape to each system: about this many standard
	// objects and a twentieth as many custom objects, derived from their index (generate.go).
	// 0: the built-in landscape only.
	GeneratedObjects int
	// NoWritePackage leaves out the abapGit package abap/zsapagent (Z_SAPAGENT_WRITE_TABLE), as
	// on a system where it was never installed.
	NoWritePackage bool
}

// Credentials are what a call presents (IdempotencyKey: the Idempotency-Key header of a write).
type Credentials struct {
	ConnectorKey   string
	User           string
	Password       string
	IdempotencyKey string
}

// Landscape is several simulated systems in one process.
type Landscape struct {
	systems map[string]*System
}

// NewLandscape builds the ECC and S/4HANA systems. Their data is generated on first use.
func NewLandscape(opts Options) *Landscape {
	faults := rand.New(rand.NewPCG(uint64(opts.Seed), 7))
	l := &Landscape{systems: map[string]*System{}}
	for _, def := range []struct{ sid, typ, key, release, basis, host string }{
		{"ECC", "ECC", ECCConnectorKey, "EHP8 FOR SAP ERP 6.0", "750", "eccprd01"},
		{"S4H", "S4HANA", S4HConnectorKey, "SAP S/4HANA 2023 FPS02", "758", "s4hprd01"},
	} {
		s := &System{opts: opts, faults: faults, faultMu: &sync.Mutex{}, key: def.key, sessions: map[string]*session{}, memo: newMemo(),
			gen: newGenerator(opts.GeneratedObjects), genChanged: map[int]genChange{}, stdSeq: map[string]int64{}, discovered: map[int64][]string{}, dtels: map[string]dataElement{}}
		s.info = sap.SystemInfo{SystemID: def.sid, SystemType: def.typ, Release: def.release, BasisRel: def.basis, Client: client,
			Host: def.host, Database: "HDB", Unicode: true, Components: components(def.typ)}
		if def.typ == "ECC" {
			s.info.Database = "ORA"
		}
		l.systems[def.sid] = s
	}
	return l
}

func components(typ string) []sap.Component {
	if typ == "S4HANA" {
		return []sap.Component{{Name: "SAP_BASIS", Release: "758", SP: "0002"}, {Name: "SAP_ABA", Release: "75I", SP: "0002"}, {Name: "S4CORE", Release: "108", SP: "0002"}, {Name: "SAP_UI", Release: "758", SP: "0003"}}
	}
	return []sap.Component{{Name: "SAP_BASIS", Release: "750", SP: "0025"}, {Name: "SAP_ABA", Release: "750", SP: "0025"}, {Name: "SAP_APPL", Release: "618", SP: "0023"}, {Name: "EA-APPL", Release: "618", SP: "0023"}}
}

// System returns a system by SID ("ECC", "S4H").
func (l *Landscape) System(sid string) (*System, bool) {
	s, ok := l.systems[strings.ToUpper(sid)]
	return s, ok
}

// SystemIDs lists the systems.
func (l *Landscape) SystemIDs() []string {
	out := make([]string, 0, len(l.systems))
	for sid := range l.systems {
		out = append(out, sid)
	}
	sort.Strings(out)
	return out
}

// System is one simulated SAP system. Safe for concurrent use.
type System struct {
	opts    Options
	faults  *rand.Rand
	faultMu *sync.Mutex
	key     string
	info    sap.SystemInfo

	once     sync.Once
	mu       sync.RWMutex
	tables   map[string]*table
	objects  map[string]*object // custom objects by TYPE/NAME
	funcs    map[string]*function
	changes  []sap.Change
	sessions map[string]*session
	memo     *memo      // keyed writes already run (idempotency.go)
	odata    odataState // CSRF tokens of the OData services (odata.go)

	gen        *generator             // the generated landscape (generate.go)
	genChanged map[int]genChange      // generated custom objects changed since generation
	matKeys    []string               // keys of objects, sorted: the index phases' order
	touchNext  int                    // TouchCustomObjects' rotation
	stdSeq     map[string]int64       // TYPE/NAME of changed standard objects -> latest seq
	discovered map[int64][]string     // change seq -> TYPE/NAME of SAP objects its custom code named first
	cdNext     int                    // last change-document number (CDHDR-CHANGENR)
	dtels      map[string]dataElement // data elements loaded from abapGit
	gitReport  *LoadReport            // summary of the last abapGit load
	customNS   []string               // namespaces (/NS/) of loaded custom objects: custom whatever their prefix
	customName map[string]bool        // names of loaded custom objects outside Z*, Y* and those namespaces
	objVersion int                    // raised whenever custom objects change (catalog staleness)
	catMu      sync.Mutex
	cat        *catalogSnapshot
}

// Info describes the system.
func (s *System) Info() sap.SystemInfo {
	s.init()
	s.mu.RLock()
	defer s.mu.RUnlock()
	info := s.info
	if n := len(s.changes); n > 0 {
		info.ChangeSeq = s.changes[n-1].Seq
	}
	return info
}

func (s *System) init() {
	s.once.Do(func() {
		s.tables = map[string]*table{}
		for _, spec := range standardTables {
			if spec.only == "" || spec.only == s.info.SystemType {
				s.tables[spec.name] = buildTable(withAppends(spec, s.info.SystemType), s.info.SystemType, false)
			}
		}
		for _, spec := range customTables {
			if spec.only == "" || spec.only == s.info.SystemType {
				s.tables[spec.name] = buildTable(spec, s.info.SystemType, true)
			}
		}
		for name, t := range sysTableDefs(s.info.SystemType) {
			s.tables[name] = t
		}
		s.fill()
		s.objects = map[string]*object{}
		for _, o := range customObjects(s.info.SystemType) {
			s.objects[o.Type+"/"+o.Name] = o
		}
		s.funcs = functions()
		if !s.opts.NoWritePackage {
			s.funcs[WriteTableFM] = writeTableFunction() // the abapGit package abap/zsapagent (writefm.go)
		}
		for _, o := range s.objects {
			if o.Type == "FUNC" {
				s.funcs[o.Name] = &function{iface: sap.FunctionInterface{Function: o.Name, Group: o.Group, Description: o.Description, RemoteEnabled: true,
					Parameters: o.Params}, run: customFunction(o.Name)}
			}
		}
		s.changes = seededChanges(s.info.SystemType, s.objects)
		for _, c := range s.changes {
			s.objects[c.ObjectType+"/"+c.ObjectName].Seq = c.Seq
		}
		for _, o := range s.objects {
			s.prepare(o)
		}
		s.rebuildKeys()
	})
}

// withAppends adds the customer append fields of each system (ZZ on ECC, YY1 key-user fields
// on S/4HANA).
func withAppends(spec tableSpec, systemType string) tableSpec {
	var extra []fieldSpec
	switch {
	case systemType == "ECC" && spec.name == "KNA1":
		extra = []fieldSpec{appendField("ZZ_LOYALTY_TIER")}
	case systemType == "ECC" && spec.name == "MARA":
		extra = []fieldSpec{appendField("ZZ_LEGACY_ID")}
	case systemType == "S4HANA" && spec.name == "MARA":
		extra = []fieldSpec{appendField("YY1_SUSTAINABILITY")}
	}
	if extra == nil {
		return spec
	}
	spec.fields = append(append([]fieldSpec(nil), spec.fields...), extra...)
	return spec
}

func errorf(status int, code, exception, format string, args ...any) *sap.Error {
	return &sap.Error{Status: status, ErrorDetail: sap.ErrorDetail{Code: code, Exception: exception, Message: fmt.Sprintf(format, args...)}}
}

// Call runs one connector endpoint with a JSON request body. The answer is the protocol's
// response struct; failures are *sap.Error.
func (s *System) Call(ctx context.Context, endpoint string, cred Credentials, body []byte) (any, error) {
	s.init()
	if cred.ConnectorKey != s.key {
		return nil, errorf(http.StatusUnauthorized, sap.ErrConnectorKey, "", "the connector key is missing or wrong")
	}
	user, err := s.logon(cred)
	if err != nil {
		return nil, err
	}
	if err := s.fault(ctx); err != nil {
		return nil, err
	}
	if len(cred.IdempotencyKey) > sap.MaxIdempotencyKeyLength {
		return nil, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "the Idempotency-Key is longer than %d characters", sap.MaxIdempotencyKeyLength)
	}
	scope := idempotencyScope(cred, user)
	if len(body) == 0 {
		body = []byte("{}")
	}
	decode := func(v any) error {
		if err := json.Unmarshal(body, v); err != nil {
			return errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "the request body is not valid JSON for %s: %v", endpoint, err)
		}
		return nil
	}
	switch endpoint {
	case sap.EndpointSystemInfo:
		return s.Info(), nil
	case EndpointABAPGitLoad:
		if r := s.ABAPGitReport(); r != nil {
			return r, nil
		}
		return nil, errorf(http.StatusNotFound, sap.ErrNotFound, "NOT_FOUND", "no abapGit folder was loaded into %s", s.info.SystemID)
	case sap.EndpointProbeChanges:
		var req sap.ProbeChangesRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.probeChanges(req), nil
	case sap.EndpointTableSchema:
		var req sap.TableSchemaRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.tableSchema(strings.ToUpper(req.Table))
	case sap.EndpointReadTable:
		var req sap.ReadTableRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.readTable(user, req)
	case sap.EndpointWriteTable:
		var req sap.WriteTableRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if scope == "" || req.TestRun {
			return s.writeTable(user, req)
		}
		return s.memo.do(ctx, scope, body, func() (any, error) { return s.writeTable(user, req) })
	case sap.EndpointExecuteRFC:
		var req sap.ExecuteRFCRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		if scope == "" || !s.rfcWrites(req) {
			return s.executeRFC(user, req, "")
		}
		return s.memo.do(ctx, scope, body, func() (any, error) { return s.executeRFC(user, req, scope) })
	case sap.EndpointFunctionInterface:
		var req sap.FunctionInterfaceRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.functionInterface(strings.ToUpper(req.Function))
	case sap.EndpointSearchObjects:
		var req sap.SearchObjectsRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.searchObjects(req), nil
	case sap.EndpointABAPSource:
		var req sap.ABAPSourceRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.source(strings.ToUpper(req.ObjectType), strings.ToUpper(req.Name))
	case sap.EndpointWhereUsed:
		var req sap.WhereUsedRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.whereUsed(req), nil
	case sap.EndpointIndexCustomObjects, sap.EndpointIndexRelationships, sap.EndpointIndexCustomCode,
		sap.EndpointIndexCatalogContext, sap.EndpointIndexEnhancements, sap.EndpointIndexS4Extensions:
		var req sap.IndexRequest
		if err := decode(&req); err != nil {
			return nil, err
		}
		return s.indexPhase(endpoint, req)
	}
	return nil, errorf(http.StatusNotFound, sap.ErrNotFound, "", "unknown endpoint %q", endpoint)
}

// user is a logged-on SAP user.
type user struct {
	name       string
	restricted bool
}

func (s *System) logon(cred Credentials) (user, error) {
	if cred.User == "" {
		return user{name: serviceUser}, nil
	}
	name := strings.ToUpper(cred.User)
	want, ok := DefaultUsers()[name]
	if !ok || want != cred.Password {
		// Like SAP: the message does not say which of the two was wrong.
		return user{}, errorf(http.StatusUnauthorized, sap.ErrLogonFailed, "", "name or password is incorrect (repeat logon) for user %s", name)
	}
	return user{name: name, restricted: name == "RESTRICTED"}, nil
}

func (s *System) fault(ctx context.Context) error {
	if s.opts.Latency > 0 {
		select {
		case <-time.After(s.opts.Latency):
		case <-ctx.Done():
			return errorf(http.StatusGatewayTimeout, sap.ErrTimeout, "", "the call was abandoned")
		}
	}
	if s.opts.ErrorRate <= 0 && s.opts.TimeoutRate <= 0 {
		return nil
	}
	s.faultMu.Lock()
	x := s.faults.Float64()
	s.faultMu.Unlock()
	switch {
	case x < s.opts.ErrorRate:
		return errorf(http.StatusServiceUnavailable, sap.ErrSystemUnavailable, "", "%s is not available (simulated outage)", s.info.SystemID)
	case x < s.opts.ErrorRate+s.opts.TimeoutRate:
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
		}
		return errorf(http.StatusGatewayTimeout, sap.ErrTimeout, "", "%s did not answer (simulated timeout)", s.info.SystemID)
	}
	return nil
}

func (s *System) tableSchema(name string) (sap.TableSchema, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tables[name]
	if !ok {
		return sap.TableSchema{}, errorf(http.StatusNotFound, sap.ErrNotFound, "NOT_FOUND", "table %s does not exist in %s", name, s.info.SystemID)
	}
	schema := t.schema
	schema.Fields = append([]sap.Field(nil), t.schema.Fields...)
	schema.RowCount = len(t.rows)
	if t.virtual != nil {
		schema.RowCount = s.virtualCount(t)
	}
	return schema, nil
}

// authorizedTable applies S_TABU_DIS: the restricted user may not read finance tables.
func (s *System) authorizedTable(u user, t *table) error {
	if u.restricted && t.authGroup != "" {
		return errorf(http.StatusForbidden, sap.ErrAuthorization, "NOT_AUTHORIZED",
			"No authorization for table %s (S_TABU_DIS, authorization group %s) for user %s", t.schema.Table, t.authGroup, u.name)
	}
	return nil
}

func (s *System) readTable(u user, req sap.ReadTableRequest) (sap.ReadTableResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.readTableLocked(u, req)
}

// readTableLocked is readTable for callers that hold s.mu (RFC_READ_TABLE through execute_rfc).
func (s *System) readTableLocked(u user, req sap.ReadTableRequest) (sap.ReadTableResponse, error) {
	name := strings.ToUpper(strings.TrimSpace(req.Table))
	t, ok := s.tables[name]
	if !ok {
		return sap.ReadTableResponse{}, errorf(http.StatusNotFound, sap.ErrNotFound, "TABLE_NOT_AVAILABLE", "table %s is not available in %s", name, s.info.SystemID)
	}
	if err := s.authorizedTable(u, t); err != nil {
		return sap.ReadTableResponse{}, err
	}
	var cols []sap.Field
	if len(req.Fields) == 0 {
		cols = t.schema.Fields
	} else {
		for _, f := range req.Fields {
			fd, ok := t.field(strings.ToUpper(strings.TrimSpace(f)))
			if !ok {
				return sap.ReadTableResponse{}, errorf(http.StatusUnprocessableEntity, sap.ErrSAPException, "FIELD_NOT_VALID", "field %s does not exist in table %s", strings.ToUpper(f), name)
			}
			cols = append(cols, fd)
		}
	}
	res := sap.ReadTableResponse{Fields: make([]sap.ReadField, len(cols)), Rows: [][]string{}}
	offset := 0
	for i, c := range cols {
		width := c.Length
		if c.Type == "CURR" || c.Type == "QUAN" || c.Type == "DEC" {
			width = c.Length + 2 // sign and decimal point, as RFC_READ_TABLE renders packed numbers
		}
		res.Fields[i] = sap.ReadField{Name: c.Name, Offset: offset, Length: width, Type: typeLetter(c.Type), Description: c.Description}
		offset += width
	}
	if offset > sap.MaxReadTableWidth {
		return sap.ReadTableResponse{}, errorf(http.StatusUnprocessableEntity, sap.ErrDataBufferExceeded, "DATA_BUFFER_EXCEEDED",
			"the selected fields of %s are %d characters wide, more than RFC_READ_TABLE's %d; select fewer fields", name, offset, sap.MaxReadTableWidth)
	}
	fieldSet := make(map[string]bool, len(t.fieldIdx))
	for n := range t.fieldIdx {
		fieldSet[n] = true
	}
	where, err := parseWhere(strings.Join(req.Options, " "), fieldSet)
	if err != nil {
		return sap.ReadTableResponse{}, errorf(http.StatusUnprocessableEntity, sap.ErrInvalidWhereOptions, "OPTION_NOT_VALID", "the WHERE condition is not valid: %v", err)
	}
	if t.virtual != nil {
		s.readVirtual(t, where, req.RowSkip, req.RowCount, func(row map[string]string) {
			out := make([]string, len(cols))
			for i, c := range cols {
				out[i] = row[c.Name]
			}
			res.Rows = append(res.Rows, out)
		})
		return res, nil
	}
	skipped := 0
	for _, row := range t.sortedRows() {
		if where != nil && !where.eval(row) {
			continue
		}
		if skipped < req.RowSkip {
			skipped++
			continue
		}
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = row[c.Name]
		}
		res.Rows = append(res.Rows, out)
		if req.RowCount > 0 && len(res.Rows) >= req.RowCount {
			break
		}
	}
	return res, nil
}

// typeLetter is RFC_READ_TABLE's one-letter ABAP type of a DDIC type.
func typeLetter(ddic string) string {
	switch ddic {
	case "NUMC":
		return "N"
	case "DATS":
		return "D"
	case "TIMS":
		return "T"
	case "CURR", "QUAN", "DEC":
		return "P"
	case "INT4":
		return "I"
	}
	return "C"
}

// validate checks a value against its field: length, NUMC digits, dates, check tables.
func (s *System) validate(t *table, fd sap.Field, v string) string {
	if len([]rune(v)) > fd.Length && fd.Type != "CURR" && fd.Type != "QUAN" && fd.Type != "DEC" {
		return fmt.Sprintf("value %q is longer than %d characters", v, fd.Length)
	}
	switch fd.Type {
	case "NUMC":
		if strings.Trim(v, "0123456789") != "" {
			return fmt.Sprintf("value %q is not numeric", v)
		}
	case "DATS":
		if v != "" && v != "00000000" {
			if _, err := time.Parse("20060102", v); err != nil {
				return fmt.Sprintf("value %q is not a valid date (YYYYMMDD)", v)
			}
		}
	case "CURR", "QUAN", "DEC":
		if v != "" && !isNumber(v) {
			return fmt.Sprintf("value %q is not a number", v)
		}
	}
	if fd.CheckTable != "" && v != "" && fd.CheckTable != t.schema.Table {
		if ct, ok := s.tables[fd.CheckTable]; ok && len(ct.keys) == 1 {
			if _, exists := ct.rows[v]; !exists {
				return fmt.Sprintf("value %q is not in check table %s", v, fd.CheckTable)
			}
		}
	}
	return ""
}

func (s *System) writeTable(u user, req sap.WriteTableRequest) (sap.WriteTableResponse, error) {
	name := strings.ToUpper(strings.TrimSpace(req.Table))
	if u.restricted {
		return sap.WriteTableResponse{}, errorf(http.StatusForbidden, sap.ErrAuthorization, "NOT_AUTHORIZED",
			"No authorization to change table %s (S_TABU_DIS activity 02) for user %s", name, u.name)
	}
	if req.Mode != "insert" && req.Mode != "modify" {
		return sap.WriteTableResponse{}, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "mode must be insert or modify")
	}
	if len(req.Rows) > 10000 {
		return sap.WriteTableResponse{}, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "at most 10000 rows per call")
	}
	if req.TestRun {
		s.mu.RLock()
		defer s.mu.RUnlock()
	} else {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	t, ok := s.tables[name]
	if !ok {
		return sap.WriteTableResponse{}, errorf(http.StatusNotFound, sap.ErrNotFound, "TABLE_NOT_AVAILABLE", "table %s is not available in %s", name, s.info.SystemID)
	}
	if t.virtual != nil {
		return sap.WriteTableResponse{}, errorf(http.StatusForbidden, sap.ErrAuthorization, "NOT_AUTHORIZED",
			"table %s is a system table: it changes only through the repository and transports, never by a write", name)
	}
	res := sap.WriteTableResponse{Return: []sap.BAPIReturn{}}
	var accepted []map[string]string
	seen := map[string]bool{}
	for i, in := range req.Rows {
		row := map[string]string{}
		bad := false
		for k, v := range in {
			k = strings.ToUpper(k)
			fd, ok := t.field(k)
			if !ok {
				res.Errors = append(res.Errors, sap.RowError{Row: i + 1, Field: k, Message: "field " + k + " does not exist in " + name})
				bad = true
				break
			}
			if fd.Type == "CLNT" {
				continue
			}
			if why := s.validate(t, fd, v); why != "" {
				res.Errors = append(res.Errors, sap.RowError{Row: i + 1, Field: k, Message: why})
				bad = true
				break
			}
			row[k] = v
		}
		if bad {
			continue
		}
		for _, f := range t.schema.Fields {
			if f.Type == "CLNT" {
				row[f.Name] = client
			}
		}
		missing := ""
		for _, k := range t.keys {
			if strings.TrimSpace(row[k]) == "" {
				missing = k
				break
			}
		}
		if missing != "" {
			res.Errors = append(res.Errors, sap.RowError{Row: i + 1, Field: missing, Message: "key field " + missing + " is empty"})
			continue
		}
		key := t.keyOf(row)
		_, exists := t.rows[key]
		if seen[key] {
			res.Errors = append(res.Errors, sap.RowError{Row: i + 1, Message: "the key appears twice in this call"})
			continue
		}
		seen[key] = true
		if exists && req.Mode == "insert" {
			res.Errors = append(res.Errors, sap.RowError{Row: i + 1, Message: "a row with this key already exists"})
			continue
		}
		if exists {
			res.Updated++
		} else {
			res.Inserted++
		}
		accepted = append(accepted, row)
	}
	if req.TestRun {
		res.Return = append(res.Return, sap.BAPIReturn{Type: "S", ID: "ZSAPAGENT", Number: "010", Message: fmt.Sprintf("Test run: %d rows would be written to %s, %d refused", len(accepted), name, len(res.Errors))})
		return res, nil
	}
	for _, row := range accepted {
		if old, ok := t.rows[t.keyOf(row)]; ok && req.Mode == "modify" {
			s.changeDocument(t, old, row, u.name)
			for k, v := range row {
				old[k] = v
			}
			continue
		}
		full := map[string]string{}
		for k, v := range row {
			full[k] = v
		}
		s.changeDocument(t, nil, full, u.name)
		t.put(full)
	}
	if len(accepted) > 0 {
		s.logChange("DATA", name, "modified", u.name)
	}
	res.Return = append(res.Return, sap.BAPIReturn{Type: "S", ID: "ZSAPAGENT", Number: "011", Message: fmt.Sprintf("%d rows written to %s", len(accepted), name)})
	return res, nil
}
