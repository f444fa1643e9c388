package adt

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

var alice = Credentials{User: "ALICE", Password: "secret"}

func newTestClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: url, Client: "001", Language: "EN", HTTP: &http.Client{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReplaySearchThenPreviewUsesCSRFTokenAndCookies(t *testing.T) {
	fake, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	ctx := context.Background()

	refs, err := c.Search(ctx, alice, "Z_FN_HELLO*", SearchOptions{MaxResults: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].Name != "Z_FN_HELLO_WORLD" || refs[0].Package != "$TEST" {
		t.Fatalf("refs %+v", refs)
	}
	tab, err := c.Preview(ctx, alice, "SELECT * FROM T000", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.TotalRows != 2 || tab.Rows[1][0] != "001" {
		t.Fatalf("table %+v", tab)
	}

	disc := fake.requests("/sap/bc/adt/discovery")
	if len(disc) != 1 || !strings.EqualFold(disc[0].Header.Get("x-csrf-token"), "fetch") {
		t.Fatalf("want one discovery GET fetching the token, got %d", len(disc))
	}
	if got := disc[0].Header.Get("Accept"); got != acceptDiscovery {
		t.Errorf("discovery Accept %q", got)
	}
	search := fake.requests(searchPath)[0]
	if search.Query.Get("operation") != "quickSearch" || search.Query.Get("maxResults") != "5" || search.Header.Get("Accept") != "application/xml" {
		t.Errorf("search request %v %v", search.Query, search.Header)
	}
	post := fake.requests(freestylePath)[0]
	if post.Route != "adt.datapreview.t000" || post.Query.Get("rowNumber") != "100" || post.Header.Get("Content-Type") != "text/plain" ||
		post.Header.Get("Accept") != acceptPreview || post.Body != "SELECT * FROM T000" {
		t.Errorf("preview request %+v", post)
	}
	if tok := post.Header.Get("x-csrf-token"); tok == "" || strings.EqualFold(tok, "fetch") {
		t.Errorf("POST carried token %q, want the fetched one", tok)
	}
	if !strings.Contains(post.Header.Get("Cookie"), "SAP_SESSIONID_NPL_001=sess-ALICE") {
		t.Errorf("POST cookies %q, want the session cookie", post.Header.Get("Cookie"))
	}
	for _, r := range fake.requests("/") {
		if r.Query.Get("sap-client") != "001" || r.Query.Get("sap-language") != "EN" {
			t.Errorf("%s %s: sap-client %q sap-language %q", r.Method, r.Path, r.Query.Get("sap-client"), r.Query.Get("sap-language"))
		}
		if u, p, ok := (&http.Request{Header: r.Header}).BasicAuth(); !ok || u != "ALICE" || p != "secret" {
			t.Errorf("%s %s: no Basic auth", r.Method, r.Path)
		}
	}
}

func TestReplayCSRFRefetchedOnceOn403Required(t *testing.T) {
	fake, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	if _, err := c.Capabilities(ctx, alice); err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	fake.rejectCSRF = 1 // the session's token expired
	fake.mu.Unlock()
	tab, err := c.Preview(ctx, alice, "select mandt from t000", 10)
	if err != nil {
		t.Fatalf("after one refetch the call should succeed: %v", err)
	}
	if tab.HasTotal || len(tab.Rows) != 4 {
		t.Errorf("7.40 answer: %+v", tab)
	}
	if n := len(fake.requests(freestylePath)); n != 2 {
		t.Errorf("freestyle POSTs %d, want 2 (refused, retried)", n)
	}
	if n := len(fake.requests(discoveryPath)); n != 2 {
		t.Errorf("discovery GETs %d, want 2 (first fetch, refetch)", n)
	}

	fake.mu.Lock()
	fake.rejectCSRF = 10
	fake.mu.Unlock()
	_, err = c.Preview(ctx, alice, "select mandt from t000", 10)
	if !errors.Is(err, ErrCSRF) {
		t.Fatalf("want ErrCSRF, got %v", err)
	}
	if n := len(fake.requests(freestylePath)); n != 4 {
		t.Errorf("freestyle POSTs %d, want 4: one retry only", n)
	}
	if p := err.(*Error).Protocol(); p.Code != sap.ErrSystemUnavailable {
		t.Errorf("protocol code %s", p.Code)
	}
}

func TestReplaySessionsArePerUser(t *testing.T) {
	fake, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	bob := Credentials{User: "BOB", Password: "secret"}
	if _, err := c.Preview(ctx, alice, "SELECT * FROM T000", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Preview(ctx, bob, "SELECT * FROM T000", 0); err != nil {
		t.Fatal(err)
	}
	posts := fake.requests(freestylePath)
	if len(posts) != 2 {
		t.Fatalf("%d POSTs", len(posts))
	}
	if posts[0].Header.Get("x-csrf-token") == posts[1].Header.Get("x-csrf-token") || strings.Contains(posts[1].Header.Get("Cookie"), "sess-ALICE") {
		t.Errorf("BOB reused ALICE's session: %q %q", posts[1].Header.Get("x-csrf-token"), posts[1].Header.Get("Cookie"))
	}
	// Capabilities are per system: the discovery body BOB's token fetch returned is not parsed again.
	if _, err := c.Capabilities(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.requests(discoveryPath)); n != 2 {
		t.Errorf("discovery GETs %d, want 2 (one token fetch per user)", n)
	}
}

func TestReplaySources(t *testing.T) {
	_, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	cases := []struct{ typ, name, file string }{
		{"CLAS", "ZAPIADT_TESTCASE_CLASS1", "class_zapiadt_testcase_class1_source.abap"},
		{"PROG", "ZAPIADT_TESTCASE_PROGRAM1", "program_zapiadt_testcase_program1_source.abap"},
		{"TABL", "SQSC_RIS_INDEX", "table_sqsc_ris_index_source.ddl"},
		{"STRU", "TEST_STRUCTURE", "structure_test_structure_source.ddl"},
	}
	for _, tc := range cases {
		src, err := c.Source(ctx, alice, tc.typ, tc.name)
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.name, err)
			continue
		}
		if src != string(fixture(t, tc.file)) {
			t.Errorf("%s %s: source differs from %s", tc.typ, tc.name, tc.file)
		}
	}
	uri, err := c.ObjectURI(ctx, alice, "FUNC", "Z_FN_HELLO_WORLD")
	if err != nil || uri != "/sap/bc/adt/functions/groups/zfg_hello_world/fmodules/z_fn_hello_world" {
		t.Errorf("FUNC uri %q %v", uri, err)
	}
	if uri, _ := c.ObjectURI(ctx, alice, "CLAS", "/ABC/CL_X"); uri != "/sap/bc/adt/oo/classes/%2Fabc%2Fcl_x" {
		t.Errorf("namespaced uri %q", uri)
	}
	_, err = c.Source(ctx, alice, "CLAS", "ZCL_DOES_NOT_EXIST")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := c.Source(ctx, alice, "ENHO", "ZX"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("ENHO: %v", err)
	}
}

func TestReplayWhereUsed(t *testing.T) {
	fake, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	res, err := c.WhereUsed(context.Background(), alice, "PROG", "Z_TEST_REPORT_XYZ")
	if err != nil {
		t.Fatal(err)
	}
	if res.NumberOfResults != 2 || res.Objects[0].Name != "ZCL_ABAPGIT_ABAP_LANGUAGE_VERS" {
		t.Fatalf("%+v", res)
	}
	scope := fake.requests(usagePath + "/scope")
	search := fake.requests(usagePath)
	if len(scope) != 1 || len(search) != 2 { // the prefix also matches the scope call
		t.Fatalf("scope %d usage %d", len(scope), len(search))
	}
	main := search[1]
	if main.Route != "adt.usagereferences.result" || main.Query.Get("uri") != "/sap/bc/adt/programs/programs/z_test_report_xyz" ||
		main.Header.Get("Content-Type") != ctUsageRequest || main.Header.Get("Accept") != acceptUsageResult {
		t.Errorf("usage request %+v", main)
	}
	if !reflect.DeepEqual(tokens(t, []byte(main.Body)), tokens(t, fixture(t, "usagereferences_request.xml"))) {
		t.Errorf("usage request body differs from the recorded one:\n%s", main.Body)
	}
	if scope[0].Header.Get("Content-Type") != ctUsageScopeReq || scope[0].Header.Get("Accept") != acceptUsageScope {
		t.Errorf("scope headers %v", scope[0].Header)
	}
}

func TestReplayLegacySystemAnswersNotSupported(t *testing.T) {
	fake, srv := newFakeADT(t, "legacy")
	c := newTestClient(t, srv.URL)
	ctx := context.Background()

	_, err := c.Preview(ctx, alice, "SELECT * FROM T000", 10)
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("preview on legacy: %v", err)
	}
	_, err = c.WhereUsed(ctx, alice, "PROG", "Z_TEST_REPORT_XYZ")
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("where-used on legacy: %v", err)
	}
	_, err = c.Source(ctx, alice, "TABL", "SQSC_RIS_INDEX")
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("table source on legacy: %v", err)
	}
	if p := err.(*Error).Protocol(); p.Code != sap.ErrNotSupported || p.Status != 422 {
		t.Errorf("protocol %+v", p)
	}
	if n := len(fake.requests(freestylePath)) + len(fake.requests(usagePath)) + len(fake.requests("/sap/bc/adt/ddic")); n != 0 {
		t.Errorf("%d calls to services the system lacks", n)
	}
	// What the legacy system has still works.
	if refs, err := c.Search(ctx, alice, "Z_FN_HELLO*", SearchOptions{}); err != nil || len(refs) != 2 {
		t.Errorf("search on legacy: %v %v", refs, err)
	}
	if _, err := c.Source(ctx, alice, "PROG", "ZAPIADT_TESTCASE_PROGRAM1"); err != nil {
		t.Errorf("program source on legacy: %v", err)
	}
}

func TestReplayErrorMapping(t *testing.T) {
	type answer struct {
		status int
		ctype  string
		body   string
		header map[string]string
	}
	cases := []struct {
		name  string
		ans   answer
		kind  error
		code  string
		exc   string
		delay time.Duration
	}{
		{"not found", answer{404, "application/xml", string(fixture(t, "error_package_not_found.xml")), nil}, ErrNotFound, sap.ErrNotFound, "ExceptionResourceNotFound", 0},
		{"no access", answer{403, "application/xml", string(fixture(t, "error_resource_no_access.xml")), nil}, ErrNoAccess, sap.ErrAuthorization, "ExceptionResourceNoAccess", 0},
		{"lock", answer{403, "application/xml", string(fixture(t, "error_lock_conflict.xml")), nil}, ErrLockConflict, sap.ErrSAPException, "ExceptionResourceLockConflict", 0},
		{"logon", answer{401, "text/html", "<html><body>Logon failed</body></html>", nil}, ErrLogonFailed, sap.ErrLogonFailed, "", 0},
		{"down", answer{503, "text/html", "<html>Service unavailable</html>", nil}, ErrUnavailable, sap.ErrSystemUnavailable, "", 0},
		{"html 200", answer{200, "text/html", "<!DOCTYPE html><html><body>SAML2 logon</body></html>", nil}, ErrHTMLResponse, sap.ErrSystemUnavailable, "", 0},
		{"html as xml", answer{200, "application/xml", "<html><body>proxy error</body></html>", nil}, ErrHTMLResponse, sap.ErrSystemUnavailable, "", 0},
		{"invalid utf8", answer{200, "application/xml", "<a>\xff\xfe</a>", nil}, ErrInvalidUTF8, sap.ErrSAPException, "", 0},
		{"too large", answer{200, "application/xml", "<a>" + strings.Repeat("x", 5000) + "</a>", nil}, ErrTooLarge, sap.ErrSAPException, "", 0},
		{"redirect", answer{302, "text/html", "", map[string]string{"Location": "/sap/saml2/idp/sso"}}, ErrRedirected, sap.ErrLogonFailed, "", 0},
		{"malformed", answer{200, "application/xml", "<adtcore:objectReferences xmlns:adtcore=\"http://www.sap.com/adt/core\"><adtcore:objectReference", nil}, ErrMalformed, sap.ErrSAPException, "", 0},
		{"timeout", answer{200, "application/xml", "", nil}, ErrTimeout, sap.ErrTimeout, "", 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake, srv := newFakeADT(t, "modern")
			c, err := New(Config{BaseURL: srv.URL, Client: "001", HTTP: &http.Client{Timeout: 200 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			// Discovery answers normally (read before the override is installed); the search fails.
			if _, err := c.Capabilities(context.Background(), alice); err != nil {
				t.Fatal(err)
			}
			c.maxBody = 4096
			fake.override = func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != searchPath {
					return false
				}
				time.Sleep(tc.delay)
				for k, v := range tc.ans.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", tc.ans.ctype)
				w.WriteHeader(tc.ans.status)
				w.Write([]byte(tc.ans.body))
				return true
			}
			_, err = c.Search(context.Background(), alice, "ZX*", SearchOptions{})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) {
				t.Fatalf("want %v, got %v", tc.kind, err)
			}
			p := e.Protocol()
			if p.Code != tc.code || p.Exception != tc.exc {
				t.Errorf("protocol %+v, want %s %q", p, tc.code, tc.exc)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("password in error: %v", err)
			}
			if tc.name == "redirect" && len(fake.requests("/sap/saml2")) != 0 {
				t.Error("redirect was followed")
			}
		})
	}
}

func TestReplayUnreachableAndNoADT(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newTestClient(t, "http://"+addr)
	_, err = c.Search(context.Background(), alice, "Z*", SearchOptions{})
	if !errors.Is(err, ErrUnavailable) || err.(*Error).Protocol().Code != sap.ErrSystemUnavailable {
		t.Errorf("closed port: %v", err)
	}

	fake, srv := newFakeADT(t, "modern")
	fake.override = func(w http.ResponseWriter, r *http.Request) bool {
		http.NotFound(w, r) // /sap/bc/adt not active in SICF
		return true
	}
	_, err = newTestClient(t, srv.URL).Search(context.Background(), alice, "Z*", SearchOptions{})
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("no ADT: %v", err)
	}
}

func TestReplayConcurrentUsersShareOneDiscovery(t *testing.T) {
	fake, srv := newFakeADT(t, "modern")
	c := newTestClient(t, srv.URL)
	if _, err := c.Capabilities(context.Background(), alice); err != nil {
		t.Fatal(err)
	}
	users := []string{"U1", "U2", "U3", "U4"}
	errs := make(chan error, len(users)*3)
	for _, u := range users {
		for i := 0; i < 3; i++ {
			go func() {
				_, err := c.Preview(context.Background(), Credentials{User: u, Password: "secret"}, "SELECT * FROM T000", 10)
				errs <- err
			}()
		}
	}
	for range len(users) * 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(fake.requests(freestylePath)); n != len(users)*3 {
		t.Errorf("%d preview POSTs, want %d (no CSRF refusals)", n, len(users)*3)
	}
	c.ForgetCapabilities()
	before := len(fake.requests(discoveryPath))
	if _, err := c.Search(context.Background(), alice, "Z_FN_HELLO*", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := len(fake.requests(discoveryPath)); after != before+1 {
		t.Errorf("after ForgetCapabilities discovery read %d times, want once", after-before)
	}
}
