package integration

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api"
)

// tenancy is a small landscape: alice owns Acme and administers its Finance workspace; bob is
// an Acme member and Finance member; carol is an Acme admin outside Finance; mallory owns
// another organization.
type tenancy struct {
	*env
	bob, carol, mallory string
	agent, conn, file   string
}

func newTenancy(t *testing.T) *tenancy {
	e := startEnv(t, nil)
	tn := &tenancy{env: e, bob: e.tokenFor("bob"), carol: e.tokenFor("carol"), mallory: e.tokenFor("mallory")}
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "carol", "role": "admin"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.doAs(tn.mallory, "POST", "/api/orgs", map[string]any{"name": "Evil"}, nil))
	tn.agent = e.createAgent("close books").ID
	var conn struct{ ID string }
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC PRD", "system_type": "ECC"}, &conn))
	tn.conn = conn.ID
	tn.file = e.upload(e.token, e.ws, "rates.csv", []byte("currency,rate\nEUR,1.0\n")).ID
	return tn
}

type fileJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
}

func (e *env) uploadRaw(token, ws, name string, content []byte) (*http.Response, []byte) {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(e.t, mw.WriteField("workspace_id", ws))
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(e.t, err)
	_, _ = fw.Write(content)
	require.NoError(e.t, mw.Close())
	req, _ := http.NewRequest("POST", e.stack.APIURL+"/api/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp, out.Bytes()
}

func (e *env) upload(token, ws, name string, content []byte) fileJSON {
	e.t.Helper()
	resp, raw := e.uploadRaw(token, ws, name, content)
	require.Equal(e.t, http.StatusCreated, resp.StatusCode, string(raw))
	var f fileJSON
	require.NoError(e.t, jsonUnmarshal(raw, &f))
	return f
}

// fill substitutes real IDs into a gin route path.
func (tn *tenancy) fill(path string) string {
	r := strings.NewReplacer(":connId", tn.conn, ":userId", "bob", ":name", "connector_key")
	path = r.Replace(path)
	switch {
	case strings.HasPrefix(path, "/api/orgs/:id"):
		return strings.Replace(path, ":id", tn.org, 1)
	case strings.HasPrefix(path, "/api/workspaces/:id"):
		return strings.Replace(path, ":id", tn.ws, 1)
	case strings.HasPrefix(path, "/api/files/:id"):
		return strings.Replace(path, ":id", tn.file, 1)
	case strings.HasPrefix(path, "/api/agents/:id"):
		return strings.Replace(path, ":id", tn.agent, 1)
	}
	return path
}

func TestEveryRouteRejectsMissingExpiredAndForgedTokens(t *testing.T) {
	t.Parallel()
	tn := newTenancy(t)
	expired, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "alice",
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(-time.Hour))}).SignedString([]byte(tn.cfg.AuthJWTSecret))
	require.NoError(t, err)
	wrongAlg, err := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.RegisteredClaims{Subject: "alice",
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}).SignedString([]byte(tn.cfg.AuthJWTSecret))
	require.NoError(t, err)
	otherSecret, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "alice",
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}).SignedString([]byte("not-the-secret-not-the-secret-00"))
	require.NoError(t, err)

	routes := tn.stack.API.Router().Routes()
	require.Greater(t, len(routes), 40)
	for _, r := range routes {
		// CORS preflights (the codec's) carry no credentials by the Fetch standard; the
		// development sign-in is how a token is got (absent in production: TestProductionHasNoDevelopmentSignIn);
		// /api/auth/config tells the page how to sign in.
		if r.Path == "/api/health" || r.Path == "/api/openapi.json" || r.Path == "/api/dev/token" || r.Path == "/api/auth/config" || r.Method == http.MethodOptions {
			continue
		}
		for name, tok := range map[string]string{"no token": "", "expired": expired, "HS512": wrongAlg, "forged": otherSecret, "garbage": "abc.def.ghi"} {
			var got errorJSON
			status := tn.doAs(tok, r.Method, tn.fill(r.Path), map[string]any{}, &got)
			assert.Equal(t, http.StatusUnauthorized, status, "%s %s with %s", r.Method, r.Path, name)
			assert.Equal(t, "unauthorized", got.Code, "%s %s with %s", r.Method, r.Path, name)
		}
	}
}

func TestMembershipDecidesWhatEachUserMayDo(t *testing.T) {
	t.Parallel()
	tn := newTenancy(t)
	ws, org, conn, agent, file := tn.ws, tn.org, tn.conn, tn.agent, tn.file
	cases := []struct {
		method, path        string
		body                any
		bob, carol, mallory int // workspace member, org admin outside the workspace, other org
	}{
		{"GET", "/api/orgs/" + org, nil, 200, 200, 403},
		{"PATCH", "/api/orgs/" + org, map[string]any{"name": "Acme Corp"}, 403, 200, 403},
		{"GET", "/api/orgs/" + org + "/members", nil, 200, 200, 403},
		{"POST", "/api/orgs/" + org + "/members", map[string]any{"user_id": "dave", "role": "owner"}, 403, 403, 403},
		{"DELETE", "/api/orgs/" + org, nil, 403, 403, 403},
		{"GET", "/api/workspaces/" + ws, nil, 200, 200, 403},
		{"PATCH", "/api/workspaces/" + ws, map[string]any{"name": "Finance EU"}, 403, 200, 403},
		{"GET", "/api/workspaces/" + ws + "/members", nil, 200, 200, 403},
		{"PUT", "/api/workspaces/" + ws + "/settings", map[string]any{"web_search": false}, 403, 200, 403},
		{"GET", "/api/workspaces/" + ws + "/settings", nil, 200, 200, 403},
		{"DELETE", "/api/workspaces/" + ws, nil, 403, 0, 403},
		{"POST", "/api/workspaces", map[string]any{"org_id": org, "name": "HR"}, 403, 201, 403},
		{"GET", "/api/workspaces/" + ws + "/connections", nil, 200, 200, 403},
		{"POST", "/api/workspaces/" + ws + "/connections", map[string]any{"name": "S4 QAS", "system_type": "S4HANA"}, 403, 201, 403},
		{"GET", "/api/workspaces/" + ws + "/connections/" + conn, nil, 200, 200, 403},
		{"PATCH", "/api/workspaces/" + ws + "/connections/" + conn, map[string]any{"environment": "production"}, 403, 200, 403},
		{"GET", "/api/workspaces/" + ws + "/connections/" + conn + "/secrets", nil, 403, 200, 403},
		{"PUT", "/api/workspaces/" + ws + "/connections/" + conn + "/secrets/connector_key", map[string]any{"value": "k"}, 403, 200, 403},
		{"PUT", "/api/user/sap-credentials/" + conn, map[string]any{"sap_user": "jdoe", "password": "pw"}, 200, 200, 404},
		{"GET", "/api/agents?workspace_id=" + ws, nil, 200, 200, 403},
		{"POST", "/api/agents", map[string]any{"workspace_id": ws}, 201, 201, 403},
		{"GET", "/api/agents/" + agent, nil, 200, 200, 404},
		{"PATCH", "/api/agents/" + agent, map[string]any{"name": "renamed"}, 200, 200, 404},
		{"GET", "/api/agents/" + agent + "/messages", nil, 200, 200, 404},
		{"POST", "/api/agents/" + agent + "/message", map[string]any{"content": "hi"}, 202, 202, 404},
		{"GET", "/api/files/" + file, nil, 200, 200, 404},
		{"GET", "/api/files/" + file + "/content", nil, 200, 200, 404},
	}
	for _, tc := range cases {
		for _, who := range []struct {
			name, token string
			want        int
		}{{"bob", tn.bob, tc.bob}, {"carol", tn.carol, tc.carol}, {"mallory", tn.mallory, tc.mallory}} {
			if who.want == 0 {
				continue
			}
			status := tn.doAs(who.token, tc.method, tc.path, tc.body, nil)
			assert.Equal(t, who.want, status, "%s %s as %s", tc.method, tc.path, who.name)
		}
	}
	// Lists only show what the caller belongs to.
	var l struct{ Data []map[string]any }
	require.Equal(t, 200, tn.doAs(tn.mallory, "GET", "/api/workspaces", nil, &l))
	assert.Empty(t, l.Data)
	require.Equal(t, 200, tn.doAs(tn.bob, "GET", "/api/workspaces", nil, &l))
	assert.Len(t, l.Data, 1)
	// Unknown resources are 404 for everyone; unknown workspace too.
	assert.Equal(t, 404, tn.do("GET", "/api/workspaces/00000000-0000-0000-0000-00000000ffff", nil, nil))
}

func TestWebSocketAuthenticatesBeforeUpgradeAndChecksOrigin(t *testing.T) {
	t.Parallel()
	tn := newTenancy(t)
	base := "ws" + strings.TrimPrefix(tn.stack.APIURL, "http") + "/api/agents/" + tn.agent + "/ws"
	// Browser style: token as subprotocol, allowed origin.
	d := websocket.Dialer{Subprotocols: []string{"bearer", tn.token}}
	conn, resp, err := d.Dial(base, http.Header{"Origin": {"http://localhost:8080"}})
	require.NoError(t, err)
	assert.Equal(t, "bearer", resp.Header.Get("Sec-WebSocket-Protocol"))
	conn.Close()
	// Query parameter.
	conn, _, err = websocket.DefaultDialer.Dial(base+"?access_token="+tn.token, nil)
	require.NoError(t, err)
	conn.Close()
	// Foreign origin: refused before the upgrade.
	_, resp, err = d.Dial(base, http.Header{"Origin": {"https://evil.example"}})
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	// No token, or another org's user.
	_, resp, err = websocket.DefaultDialer.Dial(base, nil)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	_, resp, err = websocket.DefaultDialer.Dial(base+"?access_token="+tn.mallory, nil)
	require.ErrorIs(t, err, websocket.ErrBadHandshake)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	require.Equal(t, 200, e.doAs("", "GET", "/api/openapi.json", nil, &doc))
	registered := map[string]bool{}
	for _, r := range e.stack.API.Router().Routes() {
		p := api.OpenAPIPath(r.Path)
		registered[strings.ToLower(r.Method)+" "+p] = true
		_, ok := doc.Paths[p][strings.ToLower(r.Method)]
		assert.True(t, ok, "%s %s is missing from /api/openapi.json", r.Method, r.Path)
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			assert.True(t, registered[m+" "+p], "openapi.json documents %s %s, which the router does not serve", m, p)
		}
	}
}
