package sapsim

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The recordings of real ADT answers the client's tests parse (their sources are in
// internal/sap/adt/testdata/SOURCES.md). The simulator must answer in their dialect.
const adtRecordings = "../adt/testdata/adt"

// xmlShape is what a response kind is made of: the namespaced names of its elements and, per
// element, of its attributes (namespace declarations left out). Values do not count.
type xmlShape struct {
	root  string
	elems map[string]map[string]bool
}

func xname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

func shapeOf(t *testing.T, body []byte, into *xmlShape) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s", body)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		name := xname(se.Name)
		if into.root == "" {
			into.root = name
		}
		attrs := into.elems[name]
		if attrs == nil {
			attrs = map[string]bool{}
			into.elems[name] = attrs
		}
		for _, a := range se.Attr {
			if a.Name.Space == "xmlns" || a.Name.Local == "xmlns" {
				continue
			}
			attrs[xname(a.Name)] = true
		}
	}
}

func recordedShape(t *testing.T, files ...string) *xmlShape {
	t.Helper()
	sh := &xmlShape{elems: map[string]map[string]bool{}}
	for _, f := range files {
		body, err := os.ReadFile(filepath.Join(adtRecordings, f))
		require.NoError(t, err)
		root := sh.root
		sh.root = ""
		shapeOf(t, body, sh)
		if root != "" {
			require.Equal(t, root, sh.root, "recordings of one kind share their root")
		}
	}
	return sh
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// adtRaw is a plain HTTP session against the simulator's ADT interface, CSRF token included.
type adtRaw struct {
	t     *testing.T
	base  string
	hc    *http.Client
	token string
}

func newADTRaw(t *testing.T, legacy bool) *adtRaw {
	l := NewLandscape(Options{})
	if legacy {
		sys, _ := l.System("ECC")
		sys.SetLegacyADT(true)
	}
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(srv.Close)
	return &adtRaw{t: t, base: srv.URL + "/ECC/sap/bc/adt", hc: &http.Client{Jar: newJar(t)}}
}

func (a *adtRaw) do(method, path string, q url.Values, body string, user, pass string) (int, []byte) {
	a.t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("sap-client", client)
	req, err := http.NewRequest(method, a.base+path+"?"+q.Encode(), strings.NewReader(body))
	require.NoError(a.t, err)
	req.SetBasicAuth(user, pass)
	if method == http.MethodGet {
		req.Header.Set("x-csrf-token", "Fetch")
	} else {
		req.Header.Set("x-csrf-token", a.token)
	}
	resp, err := a.hc.Do(req)
	require.NoError(a.t, err)
	defer resp.Body.Close()
	if tok := resp.Header.Get("x-csrf-token"); method == http.MethodGet && tok != "" {
		a.token = tok
	}
	out, err := io.ReadAll(resp.Body)
	require.NoError(a.t, err)
	return resp.StatusCode, out
}

func (a *adtRaw) dev(method, path string, q url.Values, body string) []byte {
	a.t.Helper()
	status, out := a.do(method, path, q, body, "DEVELOPER", "dev-pass-1")
	require.Equal(a.t, http.StatusOK, status, "%s %s: %s", method, path, out)
	return out
}

// TestADTConformsToRecordings compares each kind of the simulator's ADT answers with the
// recorded answers of real systems: the same root, and no element or attribute (by namespace
// and name) a real system did not send. For the smaller kinds the simulator must also send
// every element and attribute the recordings have, except the listed ones.
func TestADTConformsToRecordings(t *testing.T) {
	a := newADTRaw(t, false)
	legacy := newADTRaw(t, true)
	uri := url.Values{"uri": {"/sap/bc/adt/programs/programs/zr_sales_report/source/main?version=active#start=1,1"}}
	unusedURI := url.Values{"uri": {"/sap/bc/adt/programs/programs/zr_stock_report"}}
	scopeReq, err := os.ReadFile(filepath.Join(adtRecordings, "usagereferences_scope_request.xml"))
	require.NoError(t, err)
	searchReq, err := os.ReadFile(filepath.Join(adtRecordings, "usagereferences_request.xml"))
	require.NoError(t, err)
	notFound := func() []byte {
		status, body := a.do(http.MethodGet, "/programs/programs/zr_nothing/source/main", nil, "", "DEVELOPER", "dev-pass-1")
		require.Equal(t, http.StatusNotFound, status)
		return body
	}
	noAccess := func() []byte {
		restricted := newADTRaw(t, false)
		restricted.do(http.MethodGet, "/discovery", nil, "", "RESTRICTED", "restricted-pass-1")
		status, body := restricted.do(http.MethodPost, "/datapreview/freestyle", nil, "SELECT * FROM BKPF", "RESTRICTED", "restricted-pass-1")
		require.Equal(t, http.StatusForbidden, status, "%s", body)
		return body
	}
	a.dev(http.MethodGet, "/discovery", nil, "")

	for _, tc := range []struct {
		kind       string
		recordings []string
		answers    [][]byte
		complete   bool     // the simulator sends everything the recordings have ...
		omitted    []string // ... except these elements or element@attributes
	}{
		{"discovery", []string{"discovery_e19.xml", "discovery_e77.xml"},
			[][]byte{a.dev(http.MethodGet, "/discovery", nil, ""), legacy.dev(http.MethodGet, "/discovery", nil, "")}, false, nil},
		{"quick search", []string{"search_quick_z_fn_hello_world.xml", "search_quick_empty.xml"},
			[][]byte{
				a.dev(http.MethodGet, "/repository/informationsystem/search", url.Values{"operation": {"quickSearch"}, "query": {"Z*"}, "maxResults": {"20"}}, ""),
				a.dev(http.MethodGet, "/repository/informationsystem/search", url.Values{"operation": {"quickSearch"}, "query": {"NOTHING_LIKE_THIS*"}, "maxResults": {"20"}}, ""),
			}, true, nil},
		{"usage scope", []string{"usagereferences_scope.xml"},
			[][]byte{a.dev(http.MethodPost, "/repository/informationsystem/usageReferences/scope", uri, string(scopeReq))}, true, nil},
		{"usage result", []string{"usagereferences_result.xml", "usagereferences_zero.xml"},
			[][]byte{
				a.dev(http.MethodPost, "/repository/informationsystem/usageReferences", url.Values{"uri": {"/sap/bc/adt/functions/groups/2032/fmodules/bapi_salesorder_getlist"}}, string(searchReq)),
				a.dev(http.MethodPost, "/repository/informationsystem/usageReferences", unusedURI, string(searchReq)),
			}, true, []string{
				// the object's internal full name and its owner: the simulator has neither per hit
				"objectIdentifier@",
				"{http://www.sap.com/adt/ris/usageReferences}adtObject@{http://www.sap.com/adt/core}responsible",
			}},
		{"data preview", []string{"datapreview_t000.xml", "datapreview_abook_2rows.xml", "datapreview_count_zero.xml"},
			[][]byte{
				a.dev(http.MethodPost, "/datapreview/freestyle", url.Values{"rowNumber": {"5"}}, "SELECT * FROM T001"),
				a.dev(http.MethodPost, "/datapreview/freestyle", nil, "SELECT COUNT(*) FROM KNA1 WHERE LAND1 = 'DE'"),
			}, true, nil},
		{"exception", []string{"error_package_not_found.xml", "error_resource_no_access.xml", "error_lock_conflict.xml"},
			[][]byte{notFound(), noAccess()}, true, nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			rec := recordedShape(t, tc.recordings...)
			sim := &xmlShape{elems: map[string]map[string]bool{}}
			for _, body := range tc.answers {
				sim.root = ""
				shapeOf(t, body, sim)
				assert.Equal(t, rec.root, sim.root, "root element")
			}
			for el, attrs := range sim.elems {
				recAttrs, ok := rec.elems[el]
				if !assert.True(t, ok, "element %s: no real system sent it (recorded: %v)", el, keys(setOf(rec.elems))) {
					continue
				}
				for at := range attrs {
					assert.True(t, recAttrs[at], "attribute %s of %s: no real system sent it (recorded: %v)", at, el, keys(recAttrs))
				}
			}
			if !tc.complete {
				return
			}
			skip := map[string]bool{}
			for _, o := range tc.omitted {
				skip[o] = true
			}
			for el, attrs := range rec.elems {
				if skip[el+"@"] {
					continue
				}
				simAttrs, ok := sim.elems[el]
				if !assert.True(t, ok, "element %s: real systems send it, the simulator does not", el) {
					continue
				}
				for at := range attrs {
					if !skip[el+"@"+at] {
						assert.True(t, simAttrs[at], "attribute %s of %s: real systems send it, the simulator does not", at, el)
					}
				}
			}
		})
	}
}

func setOf(m map[string]map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
