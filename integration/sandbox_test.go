package integration

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

// Hostile execute_code scripts (security issue 11) end as tool errors the model can read, run
// once (no Temporal retry), and leave the worker serving other conversations. Before the
// sandbox, the deep json.decode overflowed the worker's Go stack: the whole test process died.
func TestSAPHostileScriptsKillOnlyTheirSandbox(t *testing.T) {
	t.Parallel()
	code := func(script string) string { return `{"code":` + strconv.Quote(script) + `}` }
	hostile := []offlinellm.Rule{
		{Name: "memory", Match: `(?i)^join huge strings$`, Reply: "Running the script.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(`x = ",".join(["x" * (1 << 20)] * 2000)`)}}},
		{Name: "stack", Match: `(?i)^decode deep json$`, Reply: "Running the script.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(`x = json.decode("[" * 2000000 + "]" * 2000000)`)}}},
		{Name: "spin", Match: `(?i)^parse a huge number$`, Reply: "Running the script.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "execute_code", Arguments: code(`x = int("7" * 3000000)`)}}},
	}
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.SandboxMemoryMB = 128
		c.SandboxPoolSize = 2
		// Both conversations are alice's: the other one's script runs beside the hostile one,
		// not after it in the fair queue (attack2_fairness_test.go covers the limits).
		c.SandboxMaxPerOrg, c.SandboxMaxPerUser = 2, 2
		c.CodeTimeout = 2 * time.Second
		o.OfflineLLM.Rules = append(hostile, devstack.DemoRules()...)
	})
	var ecc connectionJSON
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &ecc))

	attacker, other := e.createAgent("attacker"), e.createAgent("other")
	aws, ows := e.dial(attacker.ID, ""), e.dial(other.ID, "")
	aws.next(5 * time.Second)
	ows.next(5 * time.Second)

	for _, tc := range []struct{ message, want string }{
		{"join huge strings", "the script exceeded the sandbox's memory limit (128 MiB) and was stopped"},
		{"decode deep json", "json.decode: the JSON is nested more than 1000 levels deep"},
		{"parse a huge number", "the script ran longer than its 2s time limit and was stopped"},
	} {
		// The other conversation asks for SAP data while the hostile script runs.
		var wg sync.WaitGroup
		var otherEvents []event
		wg.Add(1)
		go func() {
			defer wg.Done()
			otherEvents = turn(t, e, ows, other.ID, "read 2 rows from table KNA1 on ECC")
		}()
		evs := turn(t, e, aws, attacker.ID, tc.message)
		wg.Wait()

		errs := toolEvents(t, evs, "tool_error")
		require.Len(t, errs, 1, "%s: events %v", tc.message, evs)
		var te struct{ Error string }
		require.NoError(t, json.Unmarshal(evs[indexOf(evs, "tool_error")].Raw, &te))
		assert.Contains(t, te.Error, tc.want, tc.message)
		running := 0
		for _, ev := range evs {
			var u toolEvent
			if ev.Type == "tool_update" && json.Unmarshal(ev.Raw, &u) == nil && u.Status == "running" {
				running++
			}
		}
		assert.Equal(t, 1, running, "%s ran once: a crashed sandbox is not retried", tc.message)
		assert.Equal(t, "idle", evs[len(evs)-1].Status, "the attacker's turn ended")

		done := toolEvents(t, otherEvents, "tool_update")
		require.Len(t, done, 1, "the other conversation got its data: %v", otherEvents)
		assert.Contains(t, done[0].Result, "KUNNR")
		assert.Empty(t, toolEvents(t, otherEvents, "tool_error"))
	}

	// The attacker's conversation goes on too.
	evs := turn(t, e, aws, attacker.ID, "read 1 rows from table KNA1 on ECC")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "events: %v", evs)
}
