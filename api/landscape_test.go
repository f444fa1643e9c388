package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/landscape/landscapetest"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// landscapeEnv is the real router on a migrated database with an indexed ECC connection, an
// S/4HANA one, one without an index and another workspace's connection.
type landscapeEnv struct {
	t                    *testing.T
	router               *gin.Engine
	base                 string // /api/workspaces/<ws>
	tokens               map[string]string
	ecc, s4, none, other landscapetest.Conn
}

func newLandscapeEnv(t *testing.T) *landscapeEnv {
	ctx := context.Background()
	st, _ := storetest.New(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	ws2, err := st.CreateWorkspace(ctx, org.ID, "HR", "alice")
	require.NoError(t, err)
	_, _, err = st.SetOrgMember(ctx, org.ID, "bob", store.RoleMember) // in the org, not in the workspace
	require.NoError(t, err)
	otherOrg, err := st.CreateOrg(ctx, "Evil", "mallory")
	require.NoError(t, err)
	_, err = st.CreateWorkspace(ctx, otherOrg.ID, "Evil", "mallory")
	require.NoError(t, err)

	e := &landscapeEnv{t: t, base: "/api/workspaces/" + ws.ID.String(), tokens: map[string]string{},
		ecc: landscapetest.Connection(t, st, ws.ID, "ECC PRD", "ECC"), s4: landscapetest.Connection(t, st, ws.ID, "S4 QAS", "S4HANA"),
		none: landscapetest.Connection(t, st, ws.ID, "BW", "ECC"), other: landscapetest.Connection(t, st, ws2.ID, "Other", "ECC")}
	synced := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	e.ecc.Graph(t, 1, synced, sapindex.Counts{CustomCode: 1, CodeLines: 2})
	e.s4.Graph(t, 1, synced, sapindex.Counts{})
	e.other.Graph(t, 1, synced, sapindex.Counts{})
	type E = landscapetest.Entry
	e.ecc.Entries(t, E{Type: "TABL", Name: "VBAK", Package: "VA", Title: "Sales header"}, E{Type: "TABL", Name: "KNA1", Package: "VS", Title: "Customers"},
		E{Type: "TABL", Name: "T000", Package: "SZ", Title: "Clients"}, E{Type: "PROG", Name: "ZR_SALES_REPORT", Custom: true, Package: "ZSD", Title: "Sales report"})
	e.s4.Entries(t, E{Type: "TABL", Name: "VBAK", Package: "VA", Title: "Sales header"}, E{Type: "TABL", Name: "KNA1", Package: "VS", Title: "Business partner"},
		E{Type: "TABL", Name: "ACDOCA", Package: "FINS", Title: "Universal journal"})
	e.other.Entries(t, E{Type: "PROG", Name: "ZSECRET", Custom: true})
	e.ecc.Item(t, sapindex.PhaseCustomCode, "PROG", "ZR_SALES_REPORT", "", "ZSD",
		map[string]any{"type": "PROG", "name": "ZR_SALES_REPORT", "source": "REPORT zr_sales_report. \" from the index\nSELECT * FROM vbak.", "lines": 2})
	e.other.Item(t, sapindex.PhaseCustomCode, "PROG", "ZSECRET", "", "", map[string]any{"source": "secret"})
	e.ecc.CleanCore(t, "PROG", "ZR_SALES_REPORT", "ZSD", "C", []any{map[string]any{"usage": map[string]any{"type": "TABL", "name": "VBAK", "kind": "read"},
		"state": "notToBeReleased", "level": "C", "why": "reads an SAP table", "successors": []any{map[string]any{"type": "DDLS", "name": "I_SALESDOCUMENT"}}}}, []any{})
	e.ecc.CleanCore(t, "CLAS", "/ACME/CL_RATING", "/ACME/MAIN", "D", []any{map[string]any{"usage": map[string]any{"type": "FUNC", "name": "RFC_READ_TABLE", "kind": "call"},
		"state": "noAPI", "level": "D", "why": "no API"}}, []any{})
	e.ecc.Doc(t, "object", "PROG/ZR_SALES_REPORT", "ZR_SALES_REPORT", "# ZR_SALES_REPORT\n\nLists sales.", 1)
	e.ecc.Doc(t, "package", "ZSD", "Package ZSD", "# ZSD", 1)
	e.ecc.Run(t, "full", "succeeded", synced)

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { rdb.Close() })
	secret := []byte("landscape-test-secret-0123456789")
	verifier, err := auth.NewVerifier(ctx, auth.Options{Secret: secret})
	require.NoError(t, err)
	for _, u := range []string{"alice", "bob", "mallory"} {
		e.tokens[u], err = auth.Mint(secret, u, time.Hour, "", "")
		require.NoError(t, err)
	}
	s := &Server{Store: st, Auth: verifier, Limiter: redis_rate.NewLimiter(rdb), RedisPrefix: "landscape-test:" + ws.ID.String() + ":",
		RateLimitPerMinute: 1000, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SAP: &sapconn.Resolver{Store: st, Simulated: sapsim.NewLandscape(sapsim.Options{})}}
	e.router = s.Router()
	return e
}

// get requests path as user; out (if not nil) receives the JSON body.
func (e *landscapeEnv) get(user, path string, out any, header ...string) (int, *httptest.ResponseRecorder) {
	e.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens[user])
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	if out != nil && strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), out), rec.Body.String())
	}
	return rec.Code, rec
}

// valid checks a 200 body against the response schema /api/openapi.json gives its route.
func (e *landscapeEnv) valid(docPath string, rec *httptest.ResponseRecorder) {
	e.t.Helper()
	validResponse(e.t, "GET", docPath, rec.Body.Bytes())
}

// code requests path as alice and returns the status and the error code of the body.
func (e *landscapeEnv) code(path string) (int, string) {
	e.t.Helper()
	var body httpx.Error
	status, _ := e.get("alice", path, &body)
	return status, body.Code
}

func TestLandscapeDashboard(t *testing.T) {
	e := newLandscapeEnv(t)
	var d struct {
		Data []struct {
			ConnectionID string           `json:"connection_id"`
			Name         string           `json:"name"`
			Status       string           `json:"status"`
			Objects      int64            `json:"objects"`
			ByType       []map[string]any `json:"by_type"`
			CustomCode   map[string]int64 `json:"custom_code"`
			CleanCore    map[string]int64 `json:"clean_core"`
			LastRuns     []map[string]any `json:"last_runs"`
		}
	}
	status, rec := e.get("alice", e.base+"/dashboard", &d)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/dashboard", rec)
	require.Len(t, d.Data, 3, "the other workspace's connection is not listed")
	assert.Equal(t, "BW", d.Data[0].Name)
	assert.Equal(t, "none", d.Data[0].Status)
	ecc := d.Data[1]
	assert.Equal(t, e.ecc.ID.String(), ecc.ConnectionID)
	assert.Equal(t, "ready", ecc.Status)
	assert.Equal(t, int64(4), ecc.Objects)
	assert.Equal(t, map[string]any{"type": "TABL", "objects": 3.0, "custom": 0.0}, ecc.ByType[0])
	assert.Equal(t, map[string]int64{"objects": 1, "lines": 2}, ecc.CustomCode)
	assert.Equal(t, map[string]int64{"A": 0, "B": 0, "C": 1, "D": 1}, ecc.CleanCore)
	require.Len(t, ecc.LastRuns, 1)
	assert.Equal(t, "succeeded", ecc.LastRuns[0]["status"])

	s, _ := e.get("bob", e.base+"/dashboard", nil)
	assert.Equal(t, http.StatusForbidden, s, "an org member outside the workspace")
	s, _ = e.get("mallory", e.base+"/dashboard", nil)
	assert.Equal(t, http.StatusForbidden, s)
	assert.Equal(t, []any{http.StatusBadRequest, "invalid_field"}, pair(e.code(e.base+"/dashboard?top=0")))
	assert.Equal(t, []any{http.StatusBadRequest, "invalid_id"}, pair(e.code("/api/workspaces/nope/dashboard")))
}

func pair(a int, b string) []any { return []any{a, b} }

func TestLandscapeDiffAndObjects(t *testing.T) {
	e := newLandscapeEnv(t)
	diff := e.base + "/dashboard/diff?left=" + e.ecc.ID.String() + "&right=" + e.s4.ID.String()
	var d struct {
		Kind   string           `json:"kind"`
		Counts map[string]int64 `json:"counts"`
		Data   []struct {
			Name   string         `json:"object_name"`
			Left   map[string]any `json:"left"`
			Right  map[string]any `json:"right"`
			Fields []string       `json:"fields"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
		HasMore    bool    `json:"has_more"`
	}
	status, rec := e.get("alice", diff, &d)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/dashboard/diff", rec)
	assert.Equal(t, "changed", d.Kind)
	assert.Equal(t, map[string]int64{"only_left": 2, "only_right": 1, "changed": 1, "same": 1}, d.Counts)
	require.Len(t, d.Data, 1)
	assert.Equal(t, "KNA1", d.Data[0].Name)
	assert.Equal(t, []string{"title"}, d.Data[0].Fields)
	assert.Equal(t, "Business partner", d.Data[0].Right["title"])

	status, rec = e.get("alice", diff+"&kind=only_left&limit=1", &d)
	require.Equal(t, http.StatusOK, status)
	e.valid("/api/workspaces/{id}/dashboard/diff", rec)
	require.Len(t, d.Data, 1)
	assert.Equal(t, "ZR_SALES_REPORT", d.Data[0].Name)
	assert.Nil(t, d.Data[0].Right)
	require.True(t, d.HasMore)
	status, _ = e.get("alice", diff+"&kind=only_left&limit=1&cursor="+url.QueryEscape(*d.NextCursor), &d)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, d.Data, 1)
	assert.Equal(t, "T000", d.Data[0].Name)
	assert.False(t, d.HasMore)
	status, _ = e.get("alice", diff+"&kind=only_right&custom=false&type=tabl", &d)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, d.Data, 1)
	assert.Equal(t, "ACDOCA", d.Data[0].Name)

	ecc, s4, none, other := e.ecc.ID.String(), e.s4.ID.String(), e.none.ID.String(), e.other.ID.String()
	for path, want := range map[string][]any{
		e.base + "/dashboard/diff?right=" + s4:                     {400, "missing_field"},
		e.base + "/dashboard/diff?left=x&right=" + s4:              {400, "invalid_id"},
		e.base + "/dashboard/diff?left=" + ecc + "&right=" + ecc:   {400, "invalid_field"},
		e.base + "/dashboard/diff?left=" + ecc + "&right=" + other: {404, "not_found"},
		e.base + "/dashboard/diff?left=" + none + "&right=" + s4:   {409, "no_index"},
		diff + "&kind=both":                                             {400, "invalid_field"},
		diff + "&limit=501":                                             {400, "invalid_limit"},
		diff + "&cursor=garbage":                                        {400, "invalid_cursor"},
		diff + "&custom=maybe":                                          {400, "invalid_field"},
		e.base + "/dashboard/objects":                                   {400, "missing_field"},
		e.base + "/dashboard/objects?connection_id=" + other:            {404, "not_found"},
		e.base + "/dashboard/objects?connection_id=" + none:             {409, "no_index"},
		e.base + "/dashboard/objects?connection_id=" + ecc + "&limit=0": {400, "invalid_limit"},
	} {
		assert.Equal(t, want, pair(e.code(path)), path)
	}

	var objs struct {
		Data []struct {
			Type string `json:"object_type"`
			Name string `json:"object_name"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	status, rec = e.get("alice", e.base+"/dashboard/objects?connection_id="+ecc+"&type=TABL&limit=2", &objs)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/dashboard/objects", rec)
	require.Len(t, objs.Data, 2)
	assert.Equal(t, "KNA1", objs.Data[0].Name)
	require.NotNil(t, objs.NextCursor)
	status, _ = e.get("alice", e.base+"/dashboard/objects?connection_id="+ecc+"&type=TABL&limit=2&cursor="+*objs.NextCursor, &objs)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, objs.Data, 1)
	assert.Equal(t, "VBAK", objs.Data[0].Name)
	assert.Nil(t, objs.NextCursor)
	status, _ = e.get("alice", e.base+"/dashboard/objects?connection_id="+ecc+"&q=sales&custom=true", &objs)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, objs.Data, 1)
	assert.Equal(t, "ZR_SALES_REPORT", objs.Data[0].Name)
	s, _ := e.get("mallory", e.base+"/dashboard/objects?connection_id="+ecc, nil)
	assert.Equal(t, http.StatusForbidden, s)
}

func TestLandscapeCleanCore(t *testing.T) {
	e := newLandscapeEnv(t)
	ecc := e.ecc.ID.String()
	var cc struct {
		Summary struct {
			Objects int64 `json:"objects"`
			Levels  []struct {
				Level   string  `json:"level"`
				Objects int64   `json:"objects"`
				Share   float64 `json:"share"`
			} `json:"levels"`
		} `json:"summary"`
		Data []struct {
			Name       string           `json:"object_name"`
			Level      string           `json:"level"`
			TopReasons []map[string]any `json:"top_reasons"`
			Successors []map[string]any `json:"successors"`
		} `json:"data"`
	}
	status, rec := e.get("alice", e.base+"/clean-core?connection_id="+ecc, &cc)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/clean-core", rec)
	assert.Equal(t, int64(2), cc.Summary.Objects)
	require.Len(t, cc.Summary.Levels, 4)
	assert.Equal(t, 0.5, cc.Summary.Levels[2].Share)
	require.Len(t, cc.Data, 2)
	assert.Equal(t, "/ACME/CL_RATING", cc.Data[0].Name)
	assert.Equal(t, []map[string]any{{"type": "DDLS", "name": "I_SALESDOCUMENT"}}, cc.Data[1].Successors)
	assert.Equal(t, "reads an SAP table", cc.Data[1].TopReasons[0]["why"])
	status, _ = e.get("alice", e.base+"/clean-core?connection_id="+ecc+"&level=d", &cc)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, cc.Data, 1)
	assert.Equal(t, "D", cc.Data[0].Level)

	var one struct {
		Name    string           `json:"object_name"`
		Level   string           `json:"level"`
		Reasons []map[string]any `json:"reasons"`
	}
	status, _ = e.get("alice", e.base+"/clean-core/objects/CLAS/ACME/CL_RATING?connection_id="+ecc, &one)
	assert.Equal(t, http.StatusNotFound, status, "the name is the whole rest of the path: ACME/CL_RATING is another object")
	status, rec = e.get("alice", e.base+"/clean-core/objects/clas//ACME/CL_RATING?connection_id="+ecc, &one)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	assert.Equal(t, "D", one.Level)
	require.Len(t, one.Reasons, 1)
	status, rec = e.get("alice", e.base+"/clean-core/objects/PROG/ZR_SALES_REPORT?connection_id="+ecc, &one)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/clean-core/objects/{type}/{name}", rec)
	assert.Equal(t, "C", one.Level)

	for path, want := range map[string][]any{
		e.base + "/clean-core?connection_id=" + ecc + "&level=E":                         {400, "invalid_field"},
		e.base + "/clean-core?connection_id=" + e.other.ID.String():                      {404, "not_found"},
		e.base + "/clean-core?connection_id=" + e.none.ID.String():                       {409, "no_index"},
		e.base + "/clean-core/objects/PROG/ZNOPE?connection_id=" + ecc:                   {404, "not_found"},
		e.base + "/clean-core/objects/PROG/ZSECRET?connection_id=" + e.other.ID.String(): {404, "not_found"},
		e.base + "/clean-core/objects/PROG/ZR_SALES_REPORT":                              {400, "missing_field"},
		e.base + "/clean-core/objects/TOOLONGTYPE/Z?connection_id=" + ecc:                {400, "invalid_field"},
	} {
		assert.Equal(t, want, pair(e.code(path)), path)
	}
}

func TestLandscapeDocs(t *testing.T) {
	e := newLandscapeEnv(t)
	ecc := e.ecc.ID.String()
	var list struct {
		Data []map[string]any `json:"data"`
	}
	status, rec := e.get("alice", e.base+"/docs?connection_id="+ecc, &list)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/docs", rec)
	require.Len(t, list.Data, 2)
	assert.Equal(t, "object", list.Data[0]["kind"])
	assert.Equal(t, "PROG/ZR_SALES_REPORT", list.Data[0]["subject"])
	assert.NotContains(t, list.Data[0], "markdown")
	status, _ = e.get("alice", e.base+"/docs?connection_id="+ecc+"&kind=package", &list)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, list.Data, 1)

	one := e.base + "/docs/object/PROG/ZR_SALES_REPORT?connection_id=" + ecc
	var doc map[string]any
	status, rec = e.get("alice", one, &doc)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/docs/{kind}/{subject}", rec)
	assert.Equal(t, "# ZR_SALES_REPORT\n\nLists sales.", doc["markdown"])
	assert.Equal(t, "ZR_SALES_REPORT", doc["title"])
	for _, md := range []struct{ path, accept string }{{one, "text/markdown"}, {one + "&format=markdown", ""}} {
		status, rec = e.get("alice", md.path, nil, "Accept", md.accept)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "text/markdown; charset=utf-8", rec.Header().Get("Content-Type"))
		assert.Equal(t, "# ZR_SALES_REPORT\n\nLists sales.", rec.Body.String())
	}

	for path, want := range map[string][]any{
		e.base + "/docs?connection_id=" + ecc + "&kind=novel":             {400, "invalid_field"},
		e.base + "/docs?connection_id=" + e.other.ID.String():             {404, "not_found"},
		e.base + "/docs/novel/X?connection_id=" + ecc:                     {400, "invalid_field"},
		e.base + "/docs/package/NOPE?connection_id=" + ecc:                {404, "not_found"},
		e.base + "/docs/package/ZSD?connection_id=" + ecc + "&format=pdf": {400, "invalid_field"},
		e.base + "/docs/package/ZSD?connection_id=" + e.other.ID.String(): {404, "not_found"},
	} {
		assert.Equal(t, want, pair(e.code(path)), path)
	}
	s, _ := e.get("mallory", one, nil)
	assert.Equal(t, http.StatusForbidden, s)
}

func TestLandscapeSourceFromIndexOrLive(t *testing.T) {
	e := newLandscapeEnv(t)
	ecc := e.ecc.ID.String()
	var src struct {
		ConnectionID string `json:"connection_id"`
		Type         string `json:"object_type"`
		Source       string `json:"source"`
		Lines        int64  `json:"lines"`
		From         string `json:"from"`
		Generation   int64  `json:"generation"`
		IndexedAt    string `json:"indexed_at"`
	}
	path := e.base + "/source?connection_id=" + ecc + "&type=PROG&name=zr_sales_report"
	status, rec := e.get("alice", path, &src)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/source", rec)
	assert.Equal(t, "index", src.From)
	assert.Contains(t, src.Source, "from the index")
	assert.Equal(t, int64(2), src.Lines)
	assert.Equal(t, int64(1), src.Generation)
	assert.Equal(t, "2026-11-01T02:00:00Z", src.IndexedAt)

	src = struct {
		ConnectionID string `json:"connection_id"`
		Type         string `json:"object_type"`
		Source       string `json:"source"`
		Lines        int64  `json:"lines"`
		From         string `json:"from"`
		Generation   int64  `json:"generation"`
		IndexedAt    string `json:"indexed_at"`
	}{}
	status, rec = e.get("alice", path+"&live=true", &src)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	e.valid("/api/workspaces/{id}/source", rec)
	assert.Equal(t, "live", src.From)
	assert.NotContains(t, src.Source, "from the index")
	assert.Contains(t, strings.ToUpper(src.Source), "ZR_SALES_REPORT")
	assert.Zero(t, src.Generation)

	// Not in the index (or no index at all): the live connector answers.
	status, rec = e.get("alice", e.base+"/source?connection_id="+e.none.ID.String()+"&object_type=PROG&name=ZR_SALES_REPORT", &src)
	require.Equal(t, http.StatusOK, status, rec.Body.String())
	assert.Equal(t, "live", src.From)

	for p, want := range map[string][]any{
		e.base + "/source?connection_id=" + e.other.ID.String() + "&type=PROG&name=ZSECRET":           {404, "not_found"},
		e.base + "/source?connection_id=" + e.other.ID.String() + "&type=PROG&name=ZSECRET&live=true": {404, "not_found"},
		e.base + "/source?connection_id=nope&type=PROG&name=ZSECRET":                                  {400, "invalid_id"},
		e.base + "/source?type=PROG&name=ZR_SALES_REPORT":                                             {400, "missing_field"},
		e.base + "/source?connection_id=" + ecc + "&type=PROG":                                        {400, "missing_field"},
		e.base + "/source?connection_id=" + ecc + "&type=PROG&name=Z&live=perhaps":                    {400, "invalid_field"},
		e.base + "/source?connection_id=" + ecc + "&type=PROGRAM&name=Z":                              {400, "invalid_field"},
		e.base + "/source?connection_id=" + ecc + "&type=PROG&name=ZDOES_NOT_EXIST":                   {404, "sap_not_found"},
	} {
		assert.Equal(t, want, pair(e.code(p)), p)
	}
	s, _ := e.get("mallory", path, nil)
	assert.Equal(t, http.StatusForbidden, s, "source is for members only")
}

// Every route of the router is in /api/openapi.json, and the landscape's with a response schema.
func TestOpenAPIDescribesTheLandscapeRoutes(t *testing.T) {
	doc := OpenAPIDocument()
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	var parsed struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]any `json:"content"`
			} `json:"responses"`
			Parameters []map[string]any `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &parsed))
	s := &Server{}
	for _, r := range s.Router().Routes() {
		p := OpenAPIPath(r.Path)
		op, ok := parsed.Paths[p][strings.ToLower(r.Method)]
		if !assert.True(t, ok, "%s %s is missing from /api/openapi.json", r.Method, r.Path) {
			continue
		}
		if strings.Contains(p, "/dashboard") || strings.Contains(p, "/clean-core") || strings.Contains(p, "/docs") || strings.HasSuffix(p, "/source") {
			assert.Contains(t, op.Responses["200"].Content, "application/json", "%s has a response schema", p)
			assert.NotEmpty(t, op.Parameters, p)
		}
	}
	assert.Contains(t, parsed.Paths, "/api/workspaces/{id}/docs/{kind}/{subject}")
	assert.Contains(t, parsed.Paths["/api/workspaces/{id}/docs/{kind}/{subject}"]["get"].Responses["200"].Content, "text/markdown")
}
