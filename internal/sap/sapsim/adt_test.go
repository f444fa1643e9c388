package sapsim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/adt"
)

var adtDev = adt.Credentials{User: "DEVELOPER", Password: "dev-pass-1"}

// adtClient is the real ADT client pointed at one simulated system over HTTP.
func adtClient(t *testing.T, sid string, legacy bool) (*adt.Client, *httptest.Server) {
	t.Helper()
	l := NewLandscape(Options{})
	if legacy {
		sys, _ := l.System(sid)
		sys.SetLegacyADT(true)
	}
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(srv.Close)
	c, err := adt.New(adt.Config{BaseURL: srv.URL + "/" + sid, Client: client, Language: "EN"})
	require.NoError(t, err)
	return c, srv
}

func TestADTClientAgainstSimulator(t *testing.T) {
	ctx := context.Background()
	c, _ := adtClient(t, "ECC", false)

	caps, err := c.Capabilities(ctx, adtDev)
	require.NoError(t, err)
	for _, f := range []adt.Feature{adt.FeatureQuickSearch, adt.FeatureUsageReferences, adt.FeatureFreestyle, adt.FeatureDDICTables, adt.FeaturePrograms, adt.FeatureClasses} {
		assert.True(t, caps.Has(f), f)
	}

	refs, err := c.Search(ctx, adtDev, "ZR_SALES*", adt.SearchOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, refs)
	assert.Equal(t, adt.ObjectRef{URI: "/sap/bc/adt/programs/programs/zr_sales_report", Type: "PROG/P", Name: "ZR_SALES_REPORT",
		Package: "ZSD_REPORTS", Description: "Sales report per customer"}, refs[0])

	src, err := c.Source(ctx, adtDev, "PROG", "ZR_SALES_REPORT")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(src, "REPORT zr_sales_report."), src[:40])

	// A function module's URI names its group: the client finds it through the quick search.
	fm, err := c.Source(ctx, adtDev, "FUNC", "Z_CALC_BONUS")
	require.NoError(t, err)
	assert.Contains(t, strings.ToUpper(fm), "FUNCTION Z_CALC_BONUS")

	cls, err := c.Source(ctx, adtDev, "CLAS", "ZCL_CUSTOMER_SERVICE")
	require.NoError(t, err)
	assert.Contains(t, strings.ToUpper(cls), "CLASS ZCL_CUSTOMER_SERVICE")

	for _, o := range []struct{ typ, name, want string }{
		{"INCL", "ZXVVAU04", ""},
		{"DDLS", "ZI_SALESORDER", "DEFINE VIEW"},
		{"TABL", "KNA1", "DEFINE TABLE KNA1"},
	} {
		src, err := c.Source(ctx, adtDev, o.typ, o.name)
		require.NoError(t, err, o.name)
		assert.NotEmpty(t, src, o.name)
		assert.Contains(t, strings.ToUpper(src), o.want, o.name)
	}

	_, err = c.Source(ctx, adtDev, "PROG", "ZR_DOES_NOT_EXIST")
	var ae *adt.Error
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, adt.ErrNotFound)
	assert.Equal(t, "ExceptionResourceNotFound", ae.Type)

	used, err := c.WhereUsed(ctx, adtDev, "FUNC", "BAPI_SALESORDER_GETLIST")
	require.NoError(t, err)
	names := map[string]bool{}
	for _, u := range used.Objects {
		names[u.Type+" "+u.Name] = true
	}
	assert.Equal(t, len(used.Objects), used.NumberOfResults)
	assert.True(t, names["PROG/P ZR_SALES_REPORT"], "ZR_SALES_REPORT calls it: %v", names)
	// The same answer as the connector protocol's where_used.
	sys, _ := NewLandscape(Options{}).System("ECC")
	sys.init()
	for _, u := range sys.whereUsed(whereUsedReq("FUNC", "BAPI_SALESORDER_GETLIST")).Usages {
		if _, ok := adtTypes[u.ObjectType]; ok {
			assert.True(t, names[adtTypes[u.ObjectType].adtType+" "+u.Name], "%s %s missing from the ADT answer", u.ObjectType, u.Name)
		}
	}

	tab, err := c.Preview(ctx, adtDev, "SELECT MANDT, BUKRS FROM T001 WHERE BUKRS = '1000'", 10)
	require.NoError(t, err)
	require.Len(t, tab.Columns, 2)
	assert.Equal(t, "BUKRS", tab.Columns[1].Name)
	require.Len(t, tab.Rows, 1)
	assert.Equal(t, []string{"100", "1000"}, tab.Rows[0])
	assert.True(t, tab.HasTotal)
	assert.Equal(t, 1, tab.TotalRows)

	// System tables too: their rows are derived as they are read.
	tadir, err := c.Preview(ctx, adtDev, "SELECT OBJECT, OBJ_NAME FROM TADIR WHERE OBJ_NAME = 'ZR_SALES_REPORT'", 10)
	require.NoError(t, err)
	require.Len(t, tadir.Rows, 1)
	assert.Equal(t, []string{"PROG", "ZR_SALES_REPORT"}, tadir.Rows[0])

	all, err := c.Preview(ctx, adtDev, "SELECT * FROM KNA1", 5)
	require.NoError(t, err)
	assert.Len(t, all.Rows, 5)
	assert.Greater(t, all.TotalRows, 5)

	// S_TABU_DIS: the restricted user may not read finance tables.
	_, err = c.Preview(ctx, adt.Credentials{User: "RESTRICTED", Password: "restricted-pass-1"}, "SELECT * FROM BKPF", 5)
	assert.ErrorIs(t, err, adt.ErrNoAccess)

	_, err = c.Source(ctx, adt.Credentials{User: "DEVELOPER", Password: "wrong"}, "PROG", "ZR_SALES_REPORT")
	assert.ErrorIs(t, err, adt.ErrLogonFailed)
}

func TestADTLegacySystemNotSupported(t *testing.T) {
	ctx := context.Background()
	c, _ := adtClient(t, "ECC", true)
	_, err := c.Preview(ctx, adtDev, "SELECT * FROM T000", 5)
	assert.ErrorIs(t, err, adt.ErrNotSupported)
	_, err = c.WhereUsed(ctx, adtDev, "PROG", "ZR_SALES_REPORT")
	assert.ErrorIs(t, err, adt.ErrNotSupported)
	_, err = c.Source(ctx, adtDev, "TABL", "T001")
	assert.ErrorIs(t, err, adt.ErrNotSupported)
	// What 7.40 has still works.
	src, err := c.Source(ctx, adtDev, "PROG", "ZR_SALES_REPORT")
	require.NoError(t, err)
	assert.NotEmpty(t, src)
}

func TestADTCSRF(t *testing.T) {
	_, srv := adtClient(t, "ECC", false)
	jar := newJar(t)
	hc := &http.Client{Jar: jar}
	do := func(method, path, token string) *http.Response {
		req, err := http.NewRequest(method, srv.URL+"/ECC/sap/bc/adt"+path+"?sap-client=100", strings.NewReader("SELECT * FROM T000"))
		require.NoError(t, err)
		req.SetBasicAuth("DEVELOPER", "dev-pass-1")
		if token != "" {
			req.Header.Set("x-csrf-token", token)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := do(http.MethodPost, "/datapreview/freestyle", "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "Required", resp.Header.Get("x-csrf-token"))

	resp = do(http.MethodGet, "/discovery", "Fetch")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	token := resp.Header.Get("x-csrf-token")
	require.NotEmpty(t, token)
	var cookie bool
	for _, c := range resp.Cookies() {
		cookie = cookie || c.Name == "SAP_SESSIONID_ECC_100"
	}
	assert.True(t, cookie, "the token belongs to a session cookie")

	assert.Equal(t, http.StatusForbidden, do(http.MethodPost, "/datapreview/freestyle", "not-the-token").StatusCode)
	assert.Equal(t, http.StatusOK, do(http.MethodPost, "/datapreview/freestyle", token).StatusCode)

	// Without the session cookie the token is worth nothing.
	hc.Jar = newJar(t)
	assert.Equal(t, http.StatusForbidden, do(http.MethodPost, "/datapreview/freestyle", token).StatusCode)

	// A wrong sap-client is a failed logon.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ECC/sap/bc/adt/discovery?sap-client=999", nil)
	req.SetBasicAuth("DEVELOPER", "dev-pass-1")
	r2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, r2.StatusCode)
	assert.False(t, errors.Is(err, io.EOF))
}

func whereUsedReq(typ, name string) sap.WhereUsedRequest {
	return sap.WhereUsedRequest{ObjectType: typ, Name: name, Limit: 500}
}

func newJar(t *testing.T) http.CookieJar {
	t.Helper()
	j, err := cookiejar.New(nil)
	require.NoError(t, err)
	return j
}

// An interface activated in the system is found by the quick search and served as source.
func TestADTInterfaceSource(t *testing.T) {
	ctx := context.Background()
	l := NewLandscape(Options{})
	sys, _ := l.System("ECC")
	require.NoError(t, sys.ActivateObject("INTF", "ZIF_PRICING", "Pricing contract", "ZSD_PRICING",
		"INTERFACE zif_pricing PUBLIC.\n  METHODS price RETURNING VALUE(r) TYPE i.\nENDINTERFACE."))
	srv := httptest.NewServer(l.Handler())
	t.Cleanup(srv.Close)
	c, err := adt.New(adt.Config{BaseURL: srv.URL + "/ECC", Client: client})
	require.NoError(t, err)

	refs, err := c.Search(ctx, adtDev, "ZIF_*", adt.SearchOptions{ObjectType: "INTF/OI"})
	require.NoError(t, err)
	require.Len(t, refs, 1)
	assert.Equal(t, "/sap/bc/adt/oo/interfaces/zif_pricing", refs[0].URI)
	src, err := c.Source(ctx, adtDev, "INTF", "ZIF_PRICING")
	require.NoError(t, err)
	assert.Contains(t, src, "INTERFACE zif_pricing PUBLIC.")
}

// Namespaced names travel with their slashes escaped, as ADT writes them.
func TestParseADTURI(t *testing.T) {
	for uri, want := range map[string][2]string{
		"/sap/bc/adt/oo/interfaces/%2Facme%2Fif_pricing/source/main":             {"INTF", "/ACME/IF_PRICING"},
		"/sap/bc/adt/programs/programs/z_x/source/main?version=active#start=1,1": {"PROG", "Z_X"},
		"/sap/bc/adt/functions/groups/zfg_pricing/fmodules/z_calc_bonus":         {"FUNC", "Z_CALC_BONUS"},
		"/sap/bc/adt/ddic/ddl/sources/zi_salesorder":                             {"DDLS", "ZI_SALESORDER"},
	} {
		typ, name, ok := parseADTURI(uri)
		assert.True(t, ok, uri)
		assert.Equal(t, want, [2]string{typ, name}, uri)
	}
	for _, uri := range []string{"/sap/bc/adt/oo/classes/", "/sap/bc/adt/functions/groups/zfg", "/sap/bc/adt/unknown/x"} {
		_, _, ok := parseADTURI(uri)
		assert.False(t, ok, uri)
	}
}

// The outage knob reaches the ADT interface: the client sees an unavailable system.
func TestADTSimulatedOutage(t *testing.T) {
	srv := httptest.NewServer(NewLandscape(Options{ErrorRate: 1}).Handler())
	t.Cleanup(srv.Close)
	c, err := adt.New(adt.Config{BaseURL: srv.URL + "/S4H", Client: client})
	require.NoError(t, err)
	_, err = c.Search(context.Background(), adtDev, "Z*", adt.SearchOptions{})
	assert.ErrorIs(t, err, adt.ErrUnavailable)
}
