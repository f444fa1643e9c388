package soaprfc

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/sap"
)

// Session is one stateful ABAP session: the first answer's cookies (SAP_SESSIONID_<SID>_<client>,
// sap-usercontext) and its sap-contextid header are sent with every later call, so SAP runs
// them in the same user context — a BAPI's buffered update and BAPI_TRANSACTION_COMMIT must.
// A Session is for one goroutine's sequence of calls.
type Session struct {
	c         *Client
	cred      Credentials
	mu        sync.Mutex
	cookies   map[string]string
	contextID string
}

// NewSession opens (lazily, with its first call) a stateful session for cred.
func (c *Client) NewSession(cred Credentials) *Session {
	return &Session{c: c, cred: cred, cookies: map[string]string{}}
}

// Call runs fm within the session.
func (s *Session) Call(ctx context.Context, fm string, p Params) (*Result, error) {
	return s.c.call(ctx, s.cred, s, fm, p, nil)
}

func (s *Session) apply(req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range sortedKeys(s.cookies) {
		req.AddCookie(&http.Cookie{Name: n, Value: s.cookies[n]})
	}
	if s.contextID != "" {
		req.Header.Set("sap-contextid", s.contextID)
	}
}

func (s *Session) remember(resp *http.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 {
			delete(s.cookies, ck.Name)
			continue
		}
		s.cookies[ck.Name] = ck.Value
	}
	if id := resp.Header.Get("sap-contextid"); id != "" {
		s.contextID = id
	}
}

// ParamInfo is one parameter of a function module's interface (RFC_GET_FUNCTION_INTERFACE).
type ParamInfo struct {
	Class    string // I import, E export, C changing, T tables, X exception
	Name     string
	TypeName string // TABNAME: structure, table type or data element
	Optional bool
	Default  string
	Text     string
}

// FunctionInterface reads fm's parameters; an unknown function is NOT_FOUND (FU_NOT_FOUND).
func (c *Client) FunctionInterface(ctx context.Context, cred Credentials, fm string) ([]ParamInfo, error) {
	res, err := c.Call(ctx, cred, "RFC_GET_FUNCTION_INTERFACE", Params{
		Imports: map[string]any{"FUNCNAME": strings.ToUpper(fm)},
		Tables:  map[string][]Struct{"PARAMS": nil},
	})
	if err != nil {
		return nil, err
	}
	var out []ParamInfo
	for _, r := range res.Table("PARAMS") {
		out = append(out, ParamInfo{
			Class:    strings.TrimSpace(r["PARAMCLASS"]),
			Name:     strings.TrimSpace(r["PARAMETER"]),
			TypeName: strings.TrimSpace(r["TABNAME"]),
			Optional: strings.TrimSpace(r["OPTIONAL"]) == "X",
			Default:  strings.TrimSpace(r["DEFAULT"]),
			Text:     strings.TrimSpace(r["PARAMTEXT"]),
		})
	}
	return out, nil
}

// BAPIOptions steer ExecuteBAPI.
type BAPIOptions struct {
	// TestRun sets the BAPI's TESTRUN import to 'X' and never commits. Allowed only when the
	// function's interface has a TESTRUN parameter; otherwise ExecuteBAPI refuses before any call.
	TestRun bool
}

// BAPIResult is the BAPI's answer plus what happened to its logical unit of work.
type BAPIResult struct {
	Result     *Result
	Return     []Struct // RETURN messages (structure or table), BAPIRET2-like
	Committed  bool
	RolledBack bool
	TestRun    bool
}

// ExecuteBAPI runs fm and then, in the same stateful session, BAPI_TRANSACTION_COMMIT with
// WAIT = 'X' — or BAPI_TRANSACTION_ROLLBACK when RETURN holds an E or A message (or on a test
// run). Business errors in RETURN are not Go errors: the caller reads Return.
func (c *Client) ExecuteBAPI(ctx context.Context, cred Credentials, fm string, p Params, opt BAPIOptions) (*BAPIResult, error) {
	if opt.TestRun {
		iface, err := c.FunctionInterface(ctx, cred, fm)
		if err != nil {
			return nil, err
		}
		if !hasParam(iface, "TESTRUN") {
			return nil, newErr(sap.ErrNotSupported, 422, "", strings.ToUpper(fm)+" has no TESTRUN parameter: test run is not supported for it").with(ErrTestRunMissing)
		}
		p.Imports = withValue(p.Imports, "TESTRUN", "X")
	}
	s := c.NewSession(cred)
	res, err := s.Call(ctx, fm, p)
	if err != nil {
		return nil, err
	}
	out := &BAPIResult{Result: res, Return: returnMessages(res), TestRun: opt.TestRun}
	if opt.TestRun || HasError(out.Return) {
		if _, err := s.Call(ctx, "BAPI_TRANSACTION_ROLLBACK", Params{}); err != nil {
			return out, err
		}
		out.RolledBack = true
		return out, nil
	}
	cr, err := s.Call(ctx, "BAPI_TRANSACTION_COMMIT", Params{Imports: map[string]any{"WAIT": "X"}})
	if err != nil {
		return out, err
	}
	out.Return = append(out.Return, returnMessages(cr)...)
	out.Committed = true
	return out, nil
}

func hasParam(iface []ParamInfo, name string) bool {
	for _, p := range iface {
		if p.Name == name && p.Class != "X" {
			return true
		}
	}
	return false
}

func withValue(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// returnMessages collects RETURN whether the BAPI declares it as structure or table.
func returnMessages(r *Result) []Struct {
	if rows := r.Table("RETURN"); len(rows) > 0 {
		return rows
	}
	if s := r.Struct("RETURN"); s != nil && strings.TrimSpace(s["TYPE"]) != "" {
		return []Struct{s}
	}
	return nil
}

// HasError reports an E (error) or A (abort) message among BAPI RETURN lines.
func HasError(ret []Struct) bool {
	for _, m := range ret {
		switch strings.TrimSpace(m["TYPE"]) {
		case "E", "A":
			return true
		}
	}
	return false
}
