package odata

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

const (
	fakeUser     = "DEVELOPER"
	fakePassword = "s3cret-Pa55"
	bpService    = "API_BUSINESS_PARTNER"
)

// fakeGateway is a small SAP Gateway: Basic auth, a CSRF token bound to a session cookie,
// A_BusinessPartner with ETags, paging with __next, and $batch.
type fakeGateway struct {
	t          *testing.T
	mu         sync.Mutex
	token      string
	tokenSeq   int
	fetches    int
	refused    int // modifying requests answered 403 Required
	version    int // ETag version of BP 1
	name       string
	lastBatch  string // Content-Type of the last $batch request
	batchParts []string
	sapClients []string
	uris       []string
	fetchReq   http.Header // headers of the last CSRF fetch
	rotate     bool        // every fetched token is already stale (a broken load balancer)
}

func (g *fakeGateway) etag() string {
	return fmt.Sprintf(`W/"datetime'2026-11-27T12%%3A00%%3A%02d'"`, g.version)
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sapClients = append(g.sapClients, r.URL.Query().Get("sap-client"))
	g.uris = append(g.uris, r.Method+" "+r.RequestURI)
	if u, p, ok := r.BasicAuth(); !ok || u != fakeUser || p != fakePassword {
		w.Header().Set("WWW-Authenticate", `Basic realm="SAP NetWeaver Application Server"`)
		http.Error(w, "<html><body>Logon failed</body></html>", http.StatusUnauthorized)
		return
	}
	const prefix = "/sap/opu/odata/sap/" + bpService + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		gwError(w, http.StatusNotFound, "/IWFND/MED/170", "No service found for namespace '', name 'X', version '0001'")
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, prefix)
	if r.Method == http.MethodGet && r.Header.Get("X-Csrf-Token") == "Fetch" {
		g.fetches++
		g.fetchReq = r.Header.Clone()
		if g.token == "" {
			g.tokenSeq++
			g.token = "tok" + strconv.Itoa(g.tokenSeq)
		}
		w.Header().Set("X-Csrf-Token", g.token)
		if g.rotate {
			defer func() { g.token = "" }()
		}
		http.SetCookie(w, &http.Cookie{Name: "SAP_SESSIONID_S4H_100", Value: g.token, Path: "/"})
	}
	if r.Method != http.MethodGet {
		ck, _ := r.Cookie("SAP_SESSIONID_S4H_100")
		if g.token == "" || r.Header.Get("X-Csrf-Token") != g.token || ck == nil || ck.Value != g.token {
			g.refused++
			w.Header().Set("X-Csrf-Token", "Required")
			http.Error(w, "CSRF token validation failed", http.StatusForbidden)
			return
		}
	}
	switch {
	case rel == "":
		writeJSON(w, http.StatusOK, map[string]any{"d": map[string]any{"EntitySets": []string{"A_BusinessPartner"}}})
	case rel == "$metadata":
		w.Header().Set("Content-Type", "application/xml")
		w.Write(readTestdataT(g.t, "api_business_partner_metadata.xml"))
	case rel == "A_BusinessPartner('1')" && r.Method == http.MethodGet:
		w.Header().Set("ETag", g.etag())
		writeJSON(w, http.StatusOK, map[string]any{"d": g.bp()})
	case rel == "A_BusinessPartner('1')" && (r.Method == http.MethodPatch || r.Method == "MERGE"):
		if r.Header.Get("If-Match") != g.etag() {
			gwError(w, http.StatusPreconditionFailed, "/IWBEP/CM_MGW_RT/022", "Precondition failed")
			return
		}
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if n, ok := in["OrganizationBPName1"].(string); ok {
			g.name = n
		}
		g.version++
		w.Header().Set("ETag", g.etag())
		w.WriteHeader(http.StatusNoContent)
	case rel == "A_BusinessPartner('404')":
		gwError(w, http.StatusNotFound, "/IWBEP/CM_MGW_RT/020", "Resource not found for segment 'A_BusinessPartnerType'")
	case rel == "A_BusinessPartner" && r.Method == http.MethodGet:
		g.list(w, r)
	case rel == "A_BusinessPartnerFail" && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(readTestdataT(g.t, "error_gwsample_mandatory_field.json"))
	case rel == "$batch":
		g.batch(w, r)
	case rel == "Logon":
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!DOCTYPE html><html><body>SAP Logon</body></html>")
	case rel == "Down":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html><body>Service unavailable</body></html>")
	case rel == "Huge":
		writeJSON(w, http.StatusOK, map[string]any{"d": map[string]any{"x": strings.Repeat("a", 4096)}})
	default:
		gwError(w, http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found")
	}
}

func (g *fakeGateway) bp() map[string]any {
	return map[string]any{
		"__metadata":          map[string]any{"uri": "A_BusinessPartner('1')", "type": "API_BUSINESS_PARTNER.A_BusinessPartnerType", "etag": g.etag()},
		"BusinessPartner":     "1",
		"OrganizationBPName1": g.name,
	}
}

func (g *fakeGateway) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	top, _ := strconv.Atoi(q.Get("$top"))
	skip, _ := strconv.Atoi(q.Get("$skip"))
	if q.Get("$filter") != "BusinessPartnerCategory eq '2'" || q.Get("$select") != "BusinessPartner,OrganizationBPName1" {
		gwError(w, http.StatusBadRequest, "/IWBEP/CM_MGW_RT/004", "unexpected query "+r.URL.RawQuery)
		return
	}
	var rows []map[string]any
	for i := skip; i < 5 && len(rows) < 2; i++ {
		rows = append(rows, map[string]any{"BusinessPartner": strconv.Itoa(10 + i), "OrganizationBPName1": "Org " + strconv.Itoa(i)})
	}
	d := map[string]any{"results": rows}
	if skip+2 < 5 && top == 0 {
		d["__next"] = fmt.Sprintf("https://s4h.example.com/sap/opu/odata/sap/%s/A_BusinessPartner?sap-client=100&$filter=BusinessPartnerCategory%%20eq%%20'2'&$select=BusinessPartner,OrganizationBPName1&$skiptoken=%d&$skip=%d", bpService, skip+2, skip+2)
	}
	writeJSON(w, http.StatusOK, map[string]any{"d": d})
}

// batch checks the request's shape and answers: a read part (200) and a changeset whose
// creation fails (400, the recorded Gateway error), as SAP does for a failed changeset.
func (g *fakeGateway) batch(w http.ResponseWriter, r *http.Request) {
	g.lastBatch = r.Header.Get("Content-Type")
	_, params, _ := mime.ParseMediaType(g.lastBatch)
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		ct := p.Header.Get("Content-Type")
		if strings.HasPrefix(ct, "multipart/mixed") {
			_, cp, _ := mime.ParseMediaType(ct)
			cr := multipart.NewReader(p, cp["boundary"])
			for {
				op, err := cr.NextPart()
				if err != nil {
					break
				}
				line, _ := bufio.NewReader(op).ReadString('\n')
				g.batchParts = append(g.batchParts, "changeset:"+strings.TrimSpace(line))
			}
			continue
		}
		line, _ := bufio.NewReader(p).ReadString('\n')
		g.batchParts = append(g.batchParts, strings.TrimSpace(line))
	}
	const b = "batchresponse_fake"
	errBody := strings.ReplaceAll(string(readTestdataT(g.t, "error_gwsample_mandatory_field.json")), "\n", "\r\n")
	body := "--" + b + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" +
		`{"d":{"BusinessPartner":"1"}}` + "\r\n" +
		"--" + b + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json;charset=utf-8\r\n\r\n" + errBody + "\r\n" +
		"--" + b + "--\r\n"
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+b)
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, body)
}

func gwError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": map[string]any{"lang": "en", "value": msg}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func readTestdataT(t *testing.T, name string) []byte { return readTestdata(t, name) }

func newFake(t *testing.T, maxBody int64) (*fakeGateway, *Client) {
	return newFakeWith(t, Config{MaxBody: maxBody})
}

func newFakeWith(t *testing.T, cfg Config) (*fakeGateway, *Client) {
	t.Helper()
	g := &fakeGateway{t: t, name: "Initial"}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	cfg.BaseURL, cfg.Client, cfg.HTTP = srv.URL, "100", srv.Client()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, c
}

var creds = Credentials{User: fakeUser, Password: fakePassword}

func bpKey(v string) []KeyValue { return []KeyValue{{Name: "BusinessPartner", Value: v}} }

func TestCSRFFetchAndReuse(t *testing.T) {
	g, c := newFake(t, 0)
	ctx := context.Background()
	ent, err := c.Get(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if ent.ETag, err = c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "N" + strconv.Itoa(i)}, ent.ETag); err != nil {
			t.Fatal(err)
		}
	}
	if g.fetches != 1 || g.refused != 0 {
		t.Errorf("fetches %d refused %d, want one fetch reused", g.fetches, g.refused)
	}
	if want := "GET /sap/opu/odata/sap/API_BUSINESS_PARTNER/A_BusinessPartner('1')?sap-client=100"; g.uris[0] != want {
		t.Errorf("first request %q, want %q", g.uris[0], want)
	}
	for _, sc := range g.sapClients {
		if sc != "100" {
			t.Errorf("request without sap-client=100: %q", sc)
		}
	}
}

func TestCSRFRefetchOnceWhenExpired(t *testing.T) {
	g, c := newFake(t, 0)
	ctx := context.Background()
	ent, err := c.Get(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"))
	if err != nil {
		t.Fatal(err)
	}
	if ent.ETag, err = c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "A"}, ent.ETag); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.token = "" // the session timed out on SAP's side
	g.mu.Unlock()
	if _, err = c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "B"}, ent.ETag); err != nil {
		t.Fatalf("update after token expiry: %v", err)
	}
	if g.fetches != 2 || g.refused != 1 || g.name != "B" {
		t.Errorf("fetches %d refused %d name %q, want a second fetch after one 403", g.fetches, g.refused, g.name)
	}
}

func TestETagIfMatchRoundTrip(t *testing.T) {
	for _, m := range []string{"", "MERGE"} {
		t.Run("method="+m, func(t *testing.T) { testETagRoundTrip(t, m) })
	}
}

func testETagRoundTrip(t *testing.T, method string) {
	g, c := newFakeWith(t, Config{UpdateMethod: method})
	ctx := context.Background()
	first, err := c.Get(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.ETag == "" || first.Properties["OrganizationBPName1"] != "Initial" {
		t.Fatalf("read %+v", first)
	}
	newTag, err := c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "Mine"}, first.ETag)
	if err != nil || newTag == first.ETag {
		t.Fatalf("update: %v, etag %q", err, newTag)
	}
	// A second writer still holding the old ETag must not overwrite.
	_, err = c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "Theirs"}, first.ETag)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("stale ETag: %v, want ErrConflict", err)
	}
	var oe *Error
	errors.As(err, &oe)
	if pe := oe.Protocol(); pe.Status != http.StatusConflict || pe.Exception != "PRECONDITION_FAILED" || !strings.Contains(pe.Message, "read it again") {
		t.Errorf("protocol %+v", pe)
	}
	wantMethod := "PATCH"
	if method != "" {
		wantMethod = method
	}
	if !strings.HasPrefix(g.uris[len(g.uris)-1], wantMethod+" ") {
		t.Errorf("update sent as %q, want %s", g.uris[len(g.uris)-1], wantMethod)
	}
	if g.name != "Mine" {
		t.Errorf("name %q after a refused stale update", g.name)
	}
	if _, err := c.Update(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"), map[string]any{"OrganizationBPName1": "X"}, ""); !errors.Is(err, ErrBadInput) {
		t.Errorf("update without ETag: %v", err)
	}
	again, _ := c.Get(ctx, creds, bpService, "A_BusinessPartner", bpKey("1"))
	if again.ETag != newTag {
		t.Errorf("etag after update %q, read %q", newTag, again.ETag)
	}
}

func TestListWithQueryAndPaging(t *testing.T) {
	g, c := newFake(t, 0)
	ctx := context.Background()
	q := Query{Filter: "BusinessPartnerCategory eq '2'", Select: []string{"BusinessPartner", "OrganizationBPName1"}}
	page, err := c.List(ctx, creds, bpService, "A_BusinessPartner", q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for {
		for _, e := range page.Entities {
			ids = append(ids, e.Properties["BusinessPartner"].(string))
		}
		if page.Next == "" {
			break
		}
		if page, err = c.Next(ctx, creds, bpService, page); err != nil {
			t.Fatal(err)
		}
	}
	if want := "$filter=BusinessPartnerCategory%20eq%20%272%27"; !strings.Contains(g.uris[0], want) {
		t.Errorf("first request %q lacks %q", g.uris[0], want)
	}
	if strings.Join(ids, ",") != "10,11,12,13,14" {
		t.Errorf("ids %v", ids)
	}
	q.Top, q.Skip = 2, 1
	page, err = c.List(ctx, creds, bpService, "A_BusinessPartner", q)
	if err != nil || len(page.Entities) != 2 || page.Entities[0].Properties["BusinessPartner"] != "11" || page.Next != "" {
		t.Errorf("top/skip: %v %+v", err, page)
	}
}

func TestBatchWithFailingChangeset(t *testing.T) {
	g, c := newFake(t, 0)
	parts := []BatchPart{
		{Read: &Op{Method: http.MethodGet, Path: "A_BusinessPartner('1')"}},
		{Changeset: []Op{
			{Method: http.MethodPost, Path: "A_BusinessPartner", Body: []byte(`{"BusinessPartner":"2"}`)},
			{Method: http.MethodPatch, Path: "A_BusinessPartner('1')", Header: http.Header{"If-Match": {"*"}}, Body: []byte(`{"OrganizationBPName1":"Y"}`)},
		}},
	}
	res, err := c.Batch(context.Background(), creds, bpService, parts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GET A_BusinessPartner('1') HTTP/1.1", "changeset:POST A_BusinessPartner HTTP/1.1", "changeset:PATCH A_BusinessPartner('1') HTTP/1.1"}
	if strings.Join(g.batchParts, "|") != strings.Join(want, "|") {
		t.Errorf("SAP received %q", g.batchParts)
	}
	if res[0].Failed() != nil || res[0].Results[0].Status != 200 {
		t.Errorf("read part %+v", res[0])
	}
	f := res[1].Failed()
	if f == nil || f.Code != "SEPM_BO_COMMON/010" || f.Protocol().Code != sap.ErrBadRequest {
		t.Fatalf("changeset failure %+v", f)
	}
	if g.fetches != 1 {
		t.Errorf("$batch sent without a CSRF token (fetches %d)", g.fetches)
	}
	if _, _, err := BuildBatch([]BatchPart{{Changeset: []Op{{Method: http.MethodGet, Path: "X"}}}}); !errors.Is(err, ErrBadInput) {
		t.Errorf("GET in a changeset: %v", err)
	}
}

func TestErrorMappingOverHTTP(t *testing.T) {
	_, c := newFake(t, 1024)
	ctx := context.Background()
	check := func(name string, err error, kind error, code string) {
		t.Helper()
		var oe *Error
		if !errors.As(err, &oe) || oe.Kind != kind {
			t.Errorf("%s: %v, want %v", name, err, kind)
			return
		}
		if pe := oe.Protocol(); pe.Code != code {
			t.Errorf("%s: protocol code %s, want %s", name, pe.Code, code)
		}
		if strings.Contains(err.Error(), fakePassword) || strings.Contains(oe.Protocol().Message, fakePassword) {
			t.Errorf("%s: password in error %q", name, err)
		}
	}
	_, err := c.Get(ctx, creds, bpService, "A_BusinessPartner", bpKey("404"))
	check("not found", err, ErrNotFound, sap.ErrNotFound)
	_, err = c.Get(ctx, Credentials{User: fakeUser, Password: "wrong-" + fakePassword}, bpService, "A_BusinessPartner", bpKey("1"))
	check("logon", err, ErrLogonFailed, sap.ErrLogonFailed)
	if strings.Contains(err.Error(), "wrong-") {
		t.Errorf("password in %q", err)
	}
	_, err = c.Create(ctx, creds, bpService, "A_BusinessPartnerFail", map[string]any{"BusinessPartner": "2"})
	check("bad input", err, ErrBadInput, sap.ErrBadRequest)
	_, err = c.List(ctx, creds, bpService, "Logon", Query{})
	check("html", err, ErrHTMLResponse, sap.ErrSystemUnavailable)
	_, err = c.List(ctx, creds, bpService, "Down", Query{})
	check("down", err, ErrUnavailable, sap.ErrSystemUnavailable)
	_, err = c.List(ctx, creds, bpService, "Huge", Query{})
	check("too large", err, ErrTooLarge, sap.ErrSAPException)
	_, err = c.Get(ctx, creds, "API_PRODUCT_SRV", "A_Product", []KeyValue{{Name: "Product", Value: "X"}})
	check("no service", err, ErrNotFound, sap.ErrNotFound)
}

func TestMetadataOverHTTP(t *testing.T) {
	_, c := newFake(t, 0)
	s, err := c.Metadata(context.Background(), creds, bpService)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateWrite("A_BusinessPartner", WriteUpdate, map[string]any{"OrganizationBPName1": strings.Repeat("x", 41)}); !errors.Is(err, ErrBadInput) {
		t.Errorf("41 characters in a MaxLength 40 field: %v", err)
	}
}

// TestCSRFFetchMatchesRecordedFlow checks that the token fetch carries the headers of SAP's
// recorded CSRF flow (testdata/csrf_fetch.request).
func TestCSRFFetchMatchesRecordedFlow(t *testing.T) {
	lines := strings.Split(string(readTestdata(t, "csrf_fetch.request")), "\n")
	if !strings.HasPrefix(lines[0], "GET /sap/opu/odata/sap/API_BUSINESS_PARTNER/") || !strings.Contains(lines[0], "sap-client=") {
		t.Fatalf("recorded request line %q", lines[0])
	}
	g, c := newFake(t, 0)
	if _, err := c.Create(context.Background(), creds, bpService, "A_BusinessPartnerFail", map[string]any{}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("create: %v", err)
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ": ")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		got := g.fetchReq.Get(name)
		if name == "Authorization" {
			if !strings.HasPrefix(got, "Basic ") || !strings.HasPrefix(value, "Basic ") {
				t.Errorf("Authorization %q", got)
			}
			continue
		}
		if got != value {
			t.Errorf("%s: sent %q, recorded %q", name, got, value)
		}
	}
}

func TestCSRFRefusedTwiceIsAnError(t *testing.T) {
	g, c := newFake(t, 0)
	g.rotate = true
	_, err := c.Create(context.Background(), creds, bpService, "A_BusinessPartnerFail", map[string]any{})
	if !errors.Is(err, ErrCSRF) {
		t.Fatalf("create with a token refused twice: %v, want ErrCSRF", err)
	}
	var oe *Error
	errors.As(err, &oe)
	if pe := oe.Protocol(); pe.Code != sap.ErrSystemUnavailable {
		t.Errorf("protocol %+v", pe)
	}
	if g.fetches != 2 || g.refused != 2 {
		t.Errorf("fetches %d refused %d, want exactly one retry", g.fetches, g.refused)
	}
}
