package integration

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
)

// Security hardening, issue 11 items 7 to 9: each test fails on the code before the fix.

// docker-compose.yml must not publish Temporal's frontend or UI (no authentication) beyond the
// host's loopback.
func TestSecurityComposeKeepsTemporalPrivate(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../docker-compose.yml")
	require.NoError(t, err)
	defer f.Close()
	ports := map[string][]string{} // service → published ports
	service, inPorts := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case indent == 2 && strings.HasSuffix(trimmed, ":"):
			service, inPorts = strings.TrimSuffix(trimmed, ":"), false
		case indent == 4:
			inPorts = trimmed == "ports:"
		case inPorts && strings.HasPrefix(trimmed, "- "):
			ports[service] = append(ports[service], strings.Trim(strings.TrimPrefix(trimmed, "- "), `"'`))
		}
	}
	require.NoError(t, sc.Err())
	require.Contains(t, ports, "api", "the parser found the api's published port")
	for _, svc := range []string{"temporal", "temporal-ui"} {
		for _, p := range ports[svc] {
			assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "%s publishes %q beyond loopback", svc, p)
		}
	}
}

// A connector URL whose host name resolves to a refused address is refused when saved, with
// the reason; IPv6 forms that hide a refused IPv4 address are refused too.
func TestSecurityConnectorURLCheckedOnSave(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	path := "/api/workspaces/" + e.ws + "/connections"
	for _, u := range []string{
		"http://[::10.0.0.1]:8090", "http://[::169.254.169.254]", "http://[::ffff:0:a9fe:a9fe]",
		"http://[64:ff9b:1::a9fe:a9fe]", "http://[2001::1]", "http://[fec0::1]", "http://[100::1]", "http://[2001:db8::1]",
	} {
		var got errorJSON
		assert.Equal(t, 400, e.do("POST", path, map[string]any{"name": "x", "system_type": "ECC", "connector_url": u}, &got), u)
		assert.Equal(t, "blocked_url", got.Code, u)
	}

	host, err := os.Hostname()
	require.NoError(t, err)
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("%s does not resolve here", host)
	}
	if ip := netip.MustParseAddr(addrs[0]); !ip.IsLoopback() && !ip.IsPrivate() {
		t.Skipf("%s resolves to the public address %s", host, ip)
	}
	var got errorJSON
	status := e.do("POST", path, map[string]any{"name": "prod", "system_type": "ECC", "environment": "production",
		"connector_url": "https://" + host + ":8443/ecc"}, &got)
	assert.Equal(t, 400, status)
	assert.Equal(t, "blocked_url", got.Code)
	assert.Contains(t, got.Error, host+" resolves to")
	status = e.do("POST", "/api/workspaces/"+e.ws+"/test-connection-preview", map[string]any{"system_type": "ECC", "environment": "production",
		"connector_url": "https://" + host + ":8443/ecc"}, &got)
	assert.Equal(t, 400, status)
	assert.Equal(t, "blocked_url", got.Code)
}

// NUL characters and invalid UTF-8, in a body, a path or a query, are the client's mistake:
// 400 with a code, and no ERROR in the log (they used to reach Postgres: 503 and an ERROR).
func TestSecurityNULAndInvalidUTF8Are400WithoutErrorLog(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := startEnv(t, func(_ *config.Config, o *devstack.Options) {
		o.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	var conn struct{ ID string }
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	agent := e.createAgent("a")
	connPath := "/api/workspaces/" + e.ws + "/connections/" + conn.ID
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"NUL in org name", "POST", "/api/orgs", `{"name":"a\u0000b"}`},
		{"invalid UTF-8 in org name", "POST", "/api/orgs", "{\"name\":\"a\xffb\"}"},
		{"NUL in a settings key", "PUT", "/api/workspaces/" + e.ws + "/settings", `{"a\u0000":1}`},
		{"NUL in a connection name", "PATCH", connPath, `{"name":"x\u0000"}`},
		{"NUL in an approval reason", "POST", "/api/agents/" + agent.ID + "/approve", `{"decisions":[{"tool_call_id":"c1","approved":false,"reason":"no\u0000"}]}`},
		{"invalid UTF-8 in a secret name", "DELETE", connPath + "/secrets/%FF", nil},
		{"NUL in a secret name", "DELETE", connPath + "/secrets/a%00", nil},
		{"invalid UTF-8 in a member id", "DELETE", "/api/orgs/" + e.org + "/members/%C3%28", nil},
		{"NUL in a query", "GET", "/api/workspaces/" + e.ws + "/actions?tool=a%00", nil},
	} {
		var got errorJSON
		status := e.do(tc.method, tc.path, tc.body, &got)
		assert.Equal(t, 400, status, tc.name)
		assert.Equal(t, "invalid_text", got.Code, tc.name)
	}
	resp, raw := e.uploadRaw(e.token, e.ws, "rates\xff.csv", []byte("a,b\n"))
	assert.Equal(t, 400, resp.StatusCode, string(raw))
	assert.NotContains(t, logs.String(), "level=ERROR")
}

// A token in ?access_token= is accepted only where browsers cannot send a header: the
// WebSocket and SSE routes.
func TestSecurityAccessTokenInURLOnlyOnStreams(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	agent := e.createAgent("a")
	for _, p := range []string{"/api/workspaces", "/api/agents/" + agent.ID, "/api/agents/" + agent.ID + "/messages"} {
		var got errorJSON
		assert.Equal(t, 401, e.doAs("", "GET", p+"?access_token="+e.token, nil, &got), p)
		assert.Contains(t, got.Error, "only on WebSocket and SSE", p)
	}
	ws := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + "/api/agents/" + agent.ID + "/ws?access_token=" + e.token
	conn, resp, err := websocket.DefaultDialer.Dial(ws, nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	_ = conn.Close()
	req, _ := http.NewRequest("GET", e.stack.APIURL+"/api/agents/"+agent.ID+"/events?access_token="+e.token, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sse, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer sse.Body.Close()
	assert.Equal(t, 200, sse.StatusCode)
}

// GETs that call the SAP connector are rate-limited on a budget of their own: exhausting it
// answers 429, and the user's changes still go through.
func TestSecuritySAPReadsAreRateLimited(t *testing.T) {
	// Serial: needs its reads inside one rate-limit minute (see TestMain).
	const limit = 6 // setup below makes 5 changes: org, workspace, connection, bob twice
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.RateLimitPerMinute = limit })
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, nil))
	bob := e.tokenFor("bob")
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	health := "/api/workspaces/" + e.ws + "/connector-health"
	for i := 0; i < limit; i++ {
		require.Equal(t, 200, e.do("GET", health, nil, nil), "read %d", i+1)
	}
	var got errorJSON
	assert.Equal(t, 429, e.do("GET", health, nil, &got))
	assert.Equal(t, "rate_limited", got.Code)
	assert.Equal(t, 429, e.do("GET", "/api/workspaces/"+e.ws+"/source?object=ZFOO&type=PROG", nil, &got), "one budget for every SAP read")
	assert.Equal(t, 200, e.do("GET", "/api/workspaces/"+e.ws, nil, nil), "other reads are not limited")
	assert.Equal(t, 201, e.do("POST", "/api/orgs", map[string]any{"name": "Beta"}, nil), "changes have their own budget")
	assert.Equal(t, 200, e.doAs(bob, "GET", health, nil, nil), "another user's budget is untouched")
}

// One user may hold at most MAX_SOCKETS_PER_USER streams per API process: the next is refused
// with 429 before the upgrade; closing one frees its slot; other users are not affected.
func TestSecuritySocketsPerUserAreCapped(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.MaxSocketsPerUser = 2 })
	agent := e.createAgent("a")
	first := e.dial(agent.ID, "")
	first.next(10 * time.Second) // init
	e.dial(agent.ID, "").next(10 * time.Second)

	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + "/api/agents/" + agent.ID + "/ws"
	_, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + e.token}})
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, 429, resp.StatusCode)
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Contains(t, string(raw), "too_many_sockets")
	var got errorJSON
	assert.Equal(t, 429, e.do("GET", "/api/agents/"+agent.ID+"/events", nil, &got), "SSE streams count too")
	assert.Equal(t, "too_many_sockets", got.Code)

	// Another member is not affected.
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	bobConn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + e.tokenFor("bob")}})
	require.NoError(t, err)
	_ = resp.Body.Close()
	_ = bobConn.Close()

	// Closing a socket frees its slot (once the server has seen it go).
	_ = first.conn.Close()
	require.Eventually(t, func() bool {
		c, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + e.token}})
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		_ = c.Close()
		return true
	}, 10*time.Second, 50*time.Millisecond)
}

// A workspace's files may hold at most WORKSPACE_STORAGE_BYTES together.
func TestSecurityWorkspaceStorageQuota(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.WorkspaceStorageBytes = 100 })
	content := []byte(strings.Repeat("a,b\n", 15)) // 60 bytes
	first := e.upload(e.token, e.ws, "one.csv", content)
	resp, raw := e.uploadRaw(e.token, e.ws, "two.csv", content)
	assert.Equal(t, 413, resp.StatusCode)
	assert.Contains(t, string(raw), "storage_quota_exceeded")
	require.Equal(t, 204, e.do("DELETE", "/api/files/"+first.ID, nil, nil))
	e.upload(e.token, e.ws, "two.csv", content)
	// Parallel uploads cannot pass the quota together: 40 bytes are left, each of these asks 30.
	small := []byte(strings.Repeat("a,b\n", 7) + "ab") // 30 bytes
	statuses := make(chan int, 4)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := e.uploadRaw(e.token, e.ws, "par.csv", small)
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	created := 0
	for st := range statuses {
		if st == 201 {
			created++
		} else {
			assert.Equal(t, 413, st)
		}
	}
	assert.Equal(t, 1, created, "exactly one parallel upload fits")
	// The quota is per workspace.
	var ws2 struct{ ID string }
	require.Equal(t, 201, e.do("POST", "/api/workspaces", map[string]any{"org_id": e.org, "name": "Sales"}, &ws2))
	e.upload(e.token, ws2.ID, "three.csv", content)
}

// Only the uploader or a workspace admin may delete a file.
func TestSecurityMembersCannotDeleteOthersFiles(t *testing.T) {
	t.Parallel()
	tn := newTenancy(t) // alice admins the workspace and uploaded tn.file; bob is a member
	var got errorJSON
	assert.Equal(t, 403, tn.doAs(tn.bob, "DELETE", "/api/files/"+tn.file, nil, &got))
	assert.Equal(t, "forbidden", got.Code)
	assert.Equal(t, 200, tn.do("GET", "/api/files/"+tn.file, nil, nil), "still there")
	assert.Equal(t, 404, tn.doAs(tn.mallory, "DELETE", "/api/files/"+tn.file, nil, nil), "outsiders learn nothing")

	bobs := tn.upload(tn.bob, tn.ws, "bob.csv", []byte("a,b\n"))
	assert.Equal(t, 204, tn.doAs(tn.bob, "DELETE", "/api/files/"+bobs.ID, nil, nil), "the uploader may")
	bobs = tn.upload(tn.bob, tn.ws, "bob.csv", []byte("a,b\n"))
	assert.Equal(t, 204, tn.do("DELETE", "/api/files/"+bobs.ID, nil, nil), "a workspace admin may")
	bobs = tn.upload(tn.bob, tn.ws, "bob.csv", []byte("a,b\n"))
	assert.Equal(t, 204, tn.doAs(tn.carol, "DELETE", "/api/files/"+bobs.ID, nil, nil), "an org admin (admin of every workspace) may")
}

// The rate limiter's keys live under REDIS_PREFIX like every other key (several deployments
// may share one Redis).
func TestSecurityRateLimitKeysUseRedisPrefix(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	require.Equal(t, 201, e.do("POST", "/api/orgs", map[string]any{"name": "Beta"}, nil))
	require.Equal(t, 200, e.do("GET", "/api/workspaces/"+e.ws+"/connector-health", nil, nil))
	rdb := e.stack.Deps.Redis
	ctx := t.Context()
	for _, key := range []string{"ratelimit:alice", "ratelimit-sap:alice"} {
		n, err := rdb.Exists(ctx, e.cfg.RedisPrefix+key).Result()
		require.NoError(t, err)
		assert.EqualValues(t, 1, n, "%s under the prefix", key)
		// redis_rate's own "rate:" would put the key outside the prefix.
		n, err = rdb.Exists(ctx, "rate:"+e.cfg.RedisPrefix+key).Result()
		require.NoError(t, err)
		assert.EqualValues(t, 0, n, "%s outside the prefix", key)
	}
}
