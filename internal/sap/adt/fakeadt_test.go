package adt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeADT replays the recorded responses the way testdata/routes.json says, with Basic auth,
// SAP's CSRF protocol (token per user, cookie SAP_SESSIONID_<SID>_<client>) and a log of
// requests for the tests to inspect.
type fakeADT struct {
	t        *testing.T
	profile  string
	routes   []fakeRoute
	password string

	mu       sync.Mutex
	tokens   map[string]string // user -> valid token
	seq      int
	log      []seenRequest
	override func(w http.ResponseWriter, r *http.Request) bool // true: handled
	// rejectCSRF > 0 makes the next n modifying calls fail CSRF validation.
	rejectCSRF int
}

type fakeRoute struct {
	ID          string            `json:"id"`
	Profile     string            `json:"profile"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	Query       map[string]string `json:"query"`
	BodyRegex   string            `json:"body_regex"`
	File        string            `json:"file"`
	ContentType string            `json:"content_type"`
	Status      int               `json:"status"`
	re          *regexp.Regexp
}

type seenRequest struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         string
	Route        string
}

func newFakeADT(t *testing.T, profile string) (*fakeADT, *httptest.Server) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "routes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Routes []fakeRoute `json:"routes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	f := &fakeADT{t: t, profile: profile, password: "secret", tokens: map[string]string{}}
	for _, r := range doc.Routes {
		if r.BodyRegex != "" {
			r.re = regexp.MustCompile(r.BodyRegex)
		}
		f.routes = append(f.routes, r)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeADT) requests(pathPrefix string) []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seenRequest
	for _, r := range f.log {
		if strings.HasPrefix(r.Path, pathPrefix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeADT) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	seen := seenRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body)}
	defer func() {
		f.mu.Lock()
		f.log = append(f.log, seen)
		f.mu.Unlock()
	}()
	if f.override != nil && f.override(w, r) {
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || pass != f.password {
		w.Header().Set("WWW-Authenticate", `Basic realm="SAP NetWeaver Application Server [NPL/001]"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	if strings.EqualFold(r.Header.Get("x-csrf-token"), "fetch") {
		// Like SAP: within a live session a fetch returns the session's token.
		tok := f.tokens[user]
		if c, err := r.Cookie("SAP_SESSIONID_NPL_001"); err != nil || c.Value != "sess-"+user || tok == "" {
			f.seq++
			tok = "tok-" + user + "-" + strconv.Itoa(f.seq)
		}
		f.tokens[user] = tok
		w.Header().Set("x-csrf-token", tok)
		http.SetCookie(w, &http.Cookie{Name: "SAP_SESSIONID_NPL_001", Value: "sess-" + user, Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "sap-usercontext", Value: "sap-client=001", Path: "/"})
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		c, err := r.Cookie("SAP_SESSIONID_NPL_001")
		valid := err == nil && c.Value == "sess-"+user && r.Header.Get("x-csrf-token") == f.tokens[user] && f.tokens[user] != ""
		if f.rejectCSRF > 0 {
			f.rejectCSRF--
			valid = false
			delete(f.tokens, user) // the session's token expired
		}
		if !valid {
			f.mu.Unlock()
			w.Header().Set("x-csrf-token", "Required")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "CSRF token validation failed")
			return
		}
	}
	f.mu.Unlock()
	path, _ := url.PathUnescape(r.URL.Path)
	for _, rt := range f.routes {
		if rt.Method != r.Method || !strings.EqualFold(rt.Path, path) || (rt.Profile != "" && rt.Profile != f.profile) {
			continue
		}
		if !queryMatches(rt.Query, r.URL.Query()) || (rt.re != nil && !rt.re.Match(body)) {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", rt.File))
		if err != nil {
			f.t.Errorf("route %s: %v", rt.ID, err)
		}
		seen.Route = rt.ID
		w.Header().Set("Content-Type", rt.ContentType)
		if rt.Status != 0 {
			w.WriteHeader(rt.Status)
		}
		w.Write(data)
		return
	}
	http.NotFound(w, r)
}

func queryMatches(want map[string]string, got url.Values) bool {
	for k, v := range want {
		g, ok := got[k]
		if !ok || len(g) == 0 {
			return false
		}
		switch {
		case v == "*":
		case strings.HasSuffix(v, "*"):
			if !strings.HasPrefix(strings.ToLower(g[0]), strings.ToLower(strings.TrimSuffix(v, "*"))) {
				return false
			}
		default:
			if !strings.EqualFold(g[0], v) {
				return false
			}
		}
	}
	return true
}
