package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// The response schemas of the tenancy, connection and chat routes describe what the handlers
// really send: real answers on a migrated database validate against them.
func TestOpenAPIResponsesMatchRealAnswers(t *testing.T) {
	e := newLandscapeEnv(t)
	call := func(method, path, docPath, body string) map[string]any {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.tokens["alice"])
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		e.router.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 300, "%s %s: %s", method, path, rec.Body.String())
		validResponse(t, method, docPath, rec.Body.Bytes())
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return out
	}
	org := call("POST", "/api/orgs", "/api/orgs", `{"name":"Globex"}`)
	orgPath := "/api/orgs/" + org["id"].(string)
	call("GET", "/api/orgs", "/api/orgs", "")
	call("GET", orgPath, "/api/orgs/{id}", "")
	call("PATCH", orgPath, "/api/orgs/{id}", `{"name":"Globex AG"}`)
	call("POST", orgPath+"/members", "/api/orgs/{id}/members", `{"user_id":"carol","role":"member"}`)
	call("PATCH", orgPath+"/members/carol", "/api/orgs/{id}/members/{userId}", `{"user_id":"carol","role":"admin"}`)
	call("GET", orgPath+"/members", "/api/orgs/{id}/members", "")
	call("GET", "/api/workspaces", "/api/workspaces", "")
	call("GET", e.base, "/api/workspaces/{id}", "")
	call("PATCH", e.base, "/api/workspaces/{id}", `{"four_eyes":true}`)
	call("GET", e.base+"/members", "/api/workspaces/{id}/members", "")
	call("PUT", e.base+"/settings", "/api/workspaces/{id}/settings", `{"theme":"dark"}`)
	call("GET", e.base+"/settings", "/api/workspaces/{id}/settings", "")
	call("GET", e.base+"/audit-log", "/api/workspaces/{id}/audit-log", "")
	call("GET", e.base+"/tool-policy", "/api/workspaces/{id}/tool-policy", "")
	call("GET", e.base+"/connections", "/api/workspaces/{id}/connections", "")
	conn := e.base + "/connections/" + e.ecc.ID.String()
	call("GET", conn, "/api/workspaces/{id}/connections/{connId}", "")
	call("GET", conn+"/secrets", "/api/workspaces/{id}/connections/{connId}/secrets", "")
	call("GET", "/api/user/sap-credentials", "/api/user/sap-credentials", "")
	call("GET", e.base+"/actions", "/api/workspaces/{id}/actions", "")
	call("GET", "/api/agents?workspace_id="+strings.TrimPrefix(e.base, "/api/workspaces/"), "/api/agents", "")
}

// validResponse checks a success body against the response schema routeDocs gives the route.
func validResponse(t *testing.T, method, docPath string, body []byte) {
	t.Helper()
	var schema map[string]any
	for _, r := range routeDocs {
		if r.Method == method && r.Path == docPath {
			schema = r.Response
		}
	}
	require.NotNil(t, schema, "no response schema for %s %s", method, docPath)
	raw, err := json.Marshal(schema)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("response.json", doc))
	compiled, err := c.Compile("response.json")
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	require.NoError(t, err)
	require.NoError(t, compiled.Validate(inst), "%s %s does not match its OpenAPI schema: %s", method, docPath, body)
}
