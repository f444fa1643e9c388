package integration

import (
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// FuzzMutatingRoutesNeverAnswer5xx feeds arbitrary bodies to every JSON-taking mutating route:
// whatever arrives, the answer is a 2xx or a 4xx, never a 5xx. `make test` runs the seed
// corpus; `go test -fuzz FuzzMutatingRoutes ./integration/` explores further.
func FuzzMutatingRoutesNeverAnswer5xx(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"name":""}`, `{"name":"ok"}`, `{"name":null}`, `{"name":1e999}`,
		`{"content":"hello"}`, `{"content":"\u0000"}`, `{"content":"` + "\xff\xfe" + `"}`, `{"org_id":"x","name":"y"}`,
		`{"workspace_id":"00000000-0000-0000-0000-000000000000"}`, `{"user_id":"u","role":"owner"}`, `{"role":"god"}`,
		`{"system_type":"S/4HANA","name":"n","connector_url":"ftp://x"}`, `{"value":"v"}`, `{"sap_user":"u","password":"p"}`,
		`{"archived":"yes"}`, `{"a":{"b":{"c":[1,2,3]}}}`, `{"name":"` + string(make([]byte, 300)) + `"}`, `{"name":"a"}{"name":"b"}`,
	} {
		f.Add(seed)
	}
	e := startEnv(f, func(c *config.Config, _ *devstack.Options) { c.RateLimitPerMinute = math.MaxInt32 })
	tn := &tenancy{env: e}
	var conn struct{ ID string }
	require.Equal(f, 201, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	tn.conn = conn.ID
	tn.agent = e.createAgent("fuzz").ID
	var routes [][2]string
	for _, r := range e.stack.API.Router().Routes() {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if r.Path != "/api/files" && r.Path != "/api/agents/:id/message" && r.Path != "/api/orgs/:id/members/:userId" {
				routes = append(routes, [2]string{r.Method, tn.fill(r.Path)})
			}
		}
	}
	// Messages start model turns; fuzz them against a separate agent without waiting for replies.
	routes = append(routes, [2]string{"POST", "/api/agents/" + e.createAgent("fuzz messages").ID + "/message"})
	f.Fuzz(func(t *testing.T, body string) {
		inner := *e
		inner.t = t // helpers report to the fuzz input's test
		for _, r := range routes {
			status := inner.doAs(e.token, r[0], r[1], body, nil)
			if status >= 500 {
				t.Fatalf("%s %s answered %d to body %q", r[0], r[1], status, body)
			}
		}
	})
}
