package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/secrets"
)

// Issue 18, finding 3: the sandboxes of a worker were shared with no fairness, so one plain
// member's message with 12 parallel scripts made another organization's one-line script wait
// for the whole batch (179 s in the campaign). Now the other organization's script starts at
// once, the member runs at most SANDBOX_MAX_PER_USER scripts at a time, and each waiting
// script says so (tool_update "queued").
func TestAttack2OneMembersScriptsDoNotStarveAnotherOrganization(t *testing.T) {
	// Serial: measures how long another organization's script waits (see TestMain).
	const batch = 12
	code := func(script string) string { return `{"code":` + strconv.Quote(script) + `}` }
	calls := make([]offlinellm.ToolCallRule, batch)
	for i := range calls {
		calls[i] = offlinellm.ToolCallRule{Name: "execute_code", Arguments: code(
			"r = sap_read_table(table=\"KNA1\", connection_id=\"ECC\", row_count=1)\nresult = r[\"row_count\"]")}
	}
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.SAPSimLatency = 700 * time.Millisecond // each of the batch's scripts holds its sandbox this long
		o.OfflineLLM.Rules = append([]offlinellm.Rule{
			{Name: "batch", Match: `^run the batch$`, Reply: "Running 12 scripts.", ToolCalls: calls},
			{Name: "one", Match: `^compute one$`, Reply: "Computing.", ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code("result = 1")}}},
		}, devstack.DemoRules()...)
	})
	// alice (organization Acme) sends the batch; bob has an organization of his own.
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, nil))
	mallory := e.createAgent("batch")
	bob := e.tokenFor("bob")
	var org, ws, agent struct {
		ID string `json:"id"`
	}
	require.Equal(t, http.StatusCreated, e.doAs(bob, "POST", "/api/orgs", map[string]any{"name": "Globex"}, &org))
	require.Equal(t, http.StatusCreated, e.doAs(bob, "POST", "/api/workspaces", map[string]any{"org_id": org.ID, "name": "Ops"}, &ws))
	require.Equal(t, http.StatusCreated, e.doAs(bob, "POST", "/api/workspaces/"+ws.ID+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, nil))
	require.Equal(t, http.StatusCreated, e.doAs(bob, "POST", "/api/agents", map[string]any{"name": "one", "workspace_id": ws.ID}, &agent))

	mws := e.dial(mallory.ID, "")
	mws.next(5 * time.Second)
	bws := e.socketAs(bob, "/api/agents/"+agent.ID+"/ws")
	bws.next(5 * time.Second)

	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+mallory.ID+"/message", map[string]any{"content": "run the batch"}, nil))
	// Every script of the batch has started its tool call (running, or waiting for a sandbox).
	calls12 := map[string]bool{}
	mevs := mws.until(60*time.Second, func(ev event) bool {
		if u, ok := toolUpdate(ev); ok && u.Status == "running" {
			calls12[u.ToolCallID] = true
		}
		return len(calls12) == batch
	})
	time.Sleep(200 * time.Millisecond) // and they are in line

	require.Equal(t, http.StatusAccepted, e.doAs(bob, "POST", "/api/agents/"+agent.ID+"/message", map[string]any{"content": "compute one"}, nil))
	bevs := bws.until(60*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })
	mevs = append(mevs, mws.until(120*time.Second, func(ev event) bool { return ev.Type == "status" && ev.Status == "idle" })...)

	// bob's one-line script: from its tool call's start to its result (server times).
	var bobStart, bobDone time.Time
	for _, ev := range bevs {
		if u, ok := toolUpdate(ev); ok && u.Status == "running" && bobStart.IsZero() {
			bobStart = u.TS
		} else if ok && u.Status == "done" {
			bobDone = u.TS
		}
	}
	require.False(t, bobStart.IsZero() || bobDone.IsZero(), "bob's script ran: %v", bevs)
	done := toolEvents(t, mevs, "tool_update")
	require.Len(t, done, batch, "every script of the batch finished")

	// Each script of the batch: when it really started (its last "running": after the queue)
	// and when it ended.
	type span struct{ start, end time.Time }
	spans := map[string]*span{}
	queued := 0
	for _, ev := range mevs {
		u, ok := toolUpdate(ev)
		if !ok {
			continue
		}
		s := spans[u.ToolCallID]
		if s == nil {
			s = &span{}
			spans[u.ToolCallID] = s
		}
		switch u.Status {
		case "running":
			s.start = u.TS
		case "done":
			s.end = u.TS
		case "queued":
			queued++
			assert.GreaterOrEqual(t, u.Position, 1, "a queued script says its place in line")
		}
	}
	var durations []time.Duration
	for _, s := range spans {
		durations = append(durations, s.end.Sub(s.start))
	}
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	oneScript := durations[0]
	wait := bobDone.Sub(bobStart)
	t.Logf("another organization's one-line script took %s behind a batch of %d scripts of about %s each", wait, batch, oneScript)
	assert.Less(t, wait, oneScript/2, "the other organization's script starts at once, not after the batch")

	// The member ran at most SANDBOX_MAX_PER_USER (default: half of the 4 sandboxes) at once,
	// as the pool itself counted it (the events' times overlap a little: a script's "done" is
	// published after its sandbox is free, a next script's "running" as soon as it has one).
	pool, err := e.stack.Deps.Sandbox()
	require.NoError(t, err)
	assert.Equal(t, 2, pool.PeakRunning("org:"+e.org, "alice"), "one user runs at most 2 scripts at once, and did run 2")
	assert.GreaterOrEqual(t, queued, batch-2, "the scripts that waited said they were queued")

	// Finding 8: this worker runs as root here; its scripts ran as nobody, with no capability
	// and a syscall filter that refuses sockets.
	if os.Geteuid() == 0 {
		conf := pool.Confinement()
		require.NotNil(t, conf)
		assert.Equal(t, "65534 65534 65534 65534", conf.Status["Uid"])
		assert.Equal(t, "0000000000000000", conf.Status["CapEff"])
		assert.Equal(t, "0000000000000000", conf.Status["CapBnd"])
		assert.Equal(t, "2", conf.Status["Seccomp"])
		assert.Equal(t, "refused", conf.Socket)
		assert.Empty(t, conf.Problems)
	}
}

// Issue 18, finding 8: production started with AUTH_JWT_SECRET of 32 × "a", all-zero keys and one
// key for two purposes. The stack now refuses to start, naming the variable, never the value.
func TestAttack2ProductionRefusesWeakOrReusedKeys(t *testing.T) {
	t.Parallel()
	zero := base64.StdEncoding.EncodeToString(make([]byte, 32))
	shared := secrets.NewKey()
	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"32 × a", func(c *config.Config) { c.AuthJWTSecret = strings.Repeat("a", 32) }, "AUTH_JWT_SECRET does not look random"},
		{"all-zero SECRETS_KEY", func(c *config.Config) { c.SecretsKey = zero }, "SECRETS_KEY does not look random"},
		{"all-zero PAYLOAD_KEY", func(c *config.Config) { c.PayloadKey = zero }, "PAYLOAD_KEY does not look random"},
		{"one key twice", func(c *config.Config) { c.SecretsKey, c.PayloadKey = shared, shared }, "SECRETS_KEY and PAYLOAD_KEY hold the same key"},
		{"the token secret as a key", func(c *config.Config) { c.AuthJWTSecret, c.SecretsKey = shared, shared }, "AUTH_JWT_SECRET and SECRETS_KEY hold the same key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Environment = "production"
			tc.mutate(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := devstack.Start(ctx, devstack.Options{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if s != nil {
				s.Stop()
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			for _, v := range []string{strings.Repeat("a", 32), zero, shared} {
				assert.NotContains(t, err.Error(), v, "no key is echoed")
			}
		})
	}
}

// toolUpdate decodes a tool_update event.
func toolUpdate(ev event) (queuedToolEvent, bool) {
	var u queuedToolEvent
	if ev.Type != "tool_update" || json.Unmarshal(ev.Raw, &u) != nil {
		return u, false
	}
	return u, true
}

type queuedToolEvent struct {
	ToolCallID string    `json:"tool_call_id"`
	Status     string    `json:"status"`
	Position   int       `json:"position"`
	TS         time.Time `json:"ts"` // when the server published it (the sockets are read one after the other)
}

// socketAs opens an event socket with another user's token.
func (e *env) socketAs(token, path string) *socket {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.stack.APIURL, "http") + path
	conn, resp, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + token}})
	require.NoError(e.t, err)
	_ = resp.Body.Close()
	e.t.Cleanup(func() { _ = conn.Close() })
	return &socket{t: e.t, conn: conn, fast: e.fast}
}
