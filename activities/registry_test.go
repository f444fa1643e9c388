package activities

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/sandbox"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// worker is an Activities over a fresh Postgres database and a private Redis prefix, with one
// agent to run tools for.
func worker(t *testing.T, reg *tools.Registry) (*Activities, store.Agent) {
	t.Helper()
	st, _ := storetest.New(t)

	redisURL := os.Getenv("TEST_REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(redisURL)
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	prefix := "sapagent-test-" + uuid.NewString()[:8] + ":"
	t.Cleanup(func() {
		keys, _ := rdb.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
		_ = rdb.Close()
	})

	agent := storetest.Agent(t, st)
	pool, err := sandbox.New(sandbox.Options{Size: 1})
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return &Activities{Store: st, Bus: events.New(rdb, events.Options{Prefix: prefix}), Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tools: reg,
		SAP: SAP{Scripts: pool}}, agent
}

func execute(t *testing.T, a *Activities, agent store.Agent, id, name, arguments string) workflows.ToolResult {
	t.Helper()
	res, err := a.ExecuteTool(context.Background(), workflows.ToolCallInput{AgentID: agent.ID.String(), UserID: "alice",
		Call: workflows.ToolCall{ID: id, Name: name, Arguments: arguments}})
	require.NoError(t, err)
	return res
}

func offered(a *Activities, connections int) map[string]string {
	out := map[string]string{}
	for _, tool := range a.modelTools(connections) {
		out[tool.Function.Name] = tool.Function.Description
	}
	return out
}

// A tool is one definition: added to a registry, with nothing else anywhere, it is offered to
// the model, classified, run by the tool activity, logged, and (as a helper) callable from
// execute_code scripts through the same dispatch.
func TestANewDefinitionIsOfferedAndRunsEndToEnd(t *testing.T) {
	echo := tools.Definition{
		Name: "echo", Description: "Repeat a text.", ReturnDescription: `{"echo": str}`,
		Parameters:        `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}`,
		DirectCallAllowed: true,
		Run: func(_ context.Context, _ tools.Env, args map[string]any) (any, error) {
			if args["text"] == "fail" {
				return nil, errors.New("echo refuses to fail")
			}
			return map[string]any{"echo": args["text"]}, nil
		},
	}
	double := tools.Definition{
		Name: "double", Description: "Double a number.", ReturnDescription: `{"doubled": int}`,
		Parameters:         `{"type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer"}}}`,
		ExecuteCodeAllowed: true,
		Run: func(_ context.Context, _ tools.Env, args map[string]any) (any, error) {
			n, err := args["n"].(json.Number).Int64()
			return map[string]any{"doubled": 2 * n}, err
		},
	}
	reg, err := tools.WithExecuteCode(append(tools.Builtin(), echo, double)...)
	require.NoError(t, err)
	a, agent := worker(t, reg)

	// Offered by its own rule: echo always, the helper only inside execute_code, which is
	// offered (documenting it) once the workspace has a connection.
	none := offered(a, 0)
	assert.Contains(t, none, "echo")
	assert.Equal(t, "Repeat a text. Returns {\"echo\": str}", none["echo"])
	assert.NotContains(t, none, "double")
	assert.NotContains(t, none, tools.ExecuteCode)
	one := offered(a, 1)
	assert.NotContains(t, one, "double")
	assert.Contains(t, one[tools.ExecuteCode], "double(", "execute_code documents the new helper")

	// Classified with the worker's registry (the product's does not know it).
	calls := classifyCalls(a.registry(), []workflows.ToolCall{{ID: "c", Name: "echo", Arguments: `{"text":"hi"}`}}, tools.Rule{Policy: tools.ReadsOnly})
	assert.Equal(t, string(tools.Auto), calls[0].Mode)
	assert.Empty(t, calls[0].Invalid)
	calls = classifyCalls(tools.Default(), []workflows.ToolCall{{ID: "c", Name: "echo", Arguments: `{"text":"hi"}`}}, tools.Rule{Policy: tools.ReadsOnly})
	assert.Equal(t, "unknown tool echo", calls[0].Invalid)

	// Run by the tool activity and written to the action log.
	res := execute(t, a, agent, "call-echo", "echo", `{"text":"hi"}`)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"echo":"hi"}`, res.Content)
	res = execute(t, a, agent, "call-fail", "echo", `{"text":"fail"}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "echo refuses to fail", res.Content)
	res = execute(t, a, agent, "call-double", "double", `{"n":2}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "double is available inside execute_code: call it there as a helper function", res.Content)

	// A script's helper call goes through the same definitions.
	res = execute(t, a, agent, "call-code", tools.ExecuteCode, `{"code":"result = double(n=21)[\"doubled\"]"}`)
	require.False(t, res.IsError, res.Content)
	var code struct {
		Result any
		Calls  []struct{ Helper, Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &code))
	assert.EqualValues(t, 42, code.Result)
	require.Len(t, code.Calls, 1)
	assert.Equal(t, "double", code.Calls[0].Helper)
	assert.Empty(t, code.Calls[0].Error)

	actions, err := a.Store.ListActions(context.Background(), store.ActionFilter{WorkspaceID: agent.WorkspaceID, Tool: "echo"}, nil, 10)
	require.NoError(t, err)
	require.Len(t, actions, 2)
	assert.False(t, actions[0].Success)
	assert.True(t, actions[1].Success)
}

// The note tools keep their notes in Postgres: a retried save stores one note, and the list
// and the export read it back.
func TestNoteToolsKeepNotesInPostgres(t *testing.T) {
	a, agent := worker(t, nil)
	res := execute(t, a, agent, "call-save", tools.SaveNote, `{"title":"Close","body":"Post accruals","draft":true}`)
	require.False(t, res.IsError, res.Content)
	var saved struct {
		ID    string
		Title string
		Draft bool
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &saved))
	assert.Equal(t, uuid.NewSHA1(noteNamespace, []byte(agent.ID.String()+"call-save")).String(), saved.ID)
	again := execute(t, a, agent, "call-save", tools.SaveNote, `{"title":"Close","body":"Post accruals","draft":true}`)
	assert.Equal(t, res.Content, again.Content, "a retried call saves the same note")

	res = execute(t, a, agent, "call-list", tools.ListNotes, `{}`)
	require.False(t, res.IsError, res.Content)
	var list struct {
		Notes []tools.Note
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &list))
	require.Len(t, list.Notes, 1)
	assert.Equal(t, saved.ID, list.Notes[0].ID)
	assert.True(t, list.Notes[0].Draft)
	assert.False(t, list.Notes[0].CreatedAt.IsZero())

	res = execute(t, a, agent, "call-export", tools.ExportNote, `{}`)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"rows":1`)
	assert.Contains(t, res.Content, `Close,Post accruals,true,`)
}

// The SAP tools run through the calling user's env against the workspace's connections (here
// the simulated landscape): helpers only inside execute_code unless DIRECT_CALL_TOOLS names
// them, and cross-connection tools only with two connections.
func TestSAPToolsRunThroughTheCallersConnections(t *testing.T) {
	a, agent := worker(t, nil)
	a.SAP.Resolver = &sapconn.Resolver{Store: a.Store, Simulated: sapsim.NewLandscape(sapsim.Options{})}
	_, err := a.Store.CreateConnection(context.Background(), store.Connection{WorkspaceID: agent.WorkspaceID, Name: "ECC", SystemType: "ECC", Environment: "development", CredentialMode: store.CredentialTechnicalUserAll})
	require.NoError(t, err)

	read := `{"table":"T001","fields":["BUKRS"],"row_count":2}`
	res := execute(t, a, agent, "call-read", tools.SAPReadTable, read)
	assert.True(t, res.IsError)
	assert.Equal(t, "sap_read_table is available inside execute_code: call it there as a helper function", res.Content)
	assert.NotContains(t, offered(a, 1), tools.SAPReadTable)

	res = execute(t, a, agent, "call-code", tools.ExecuteCode, `{"code":"s = sap_get_system_info()\nr = sap_read_table(table=\"T001\", row_count=1)\nresult = [s[\"system_type\"], r[\"row_count\"]]"}`)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"result":["ECC",1]`)

	a.SAP.DirectCall = map[string]bool{tools.SAPReadTable: true}
	assert.Contains(t, offered(a, 1), tools.SAPReadTable)
	res = execute(t, a, agent, "call-read-2", tools.SAPReadTable, read)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"row_count":2`)

	res = execute(t, a, agent, "call-map", tools.GenerateFieldMapping, `{"source_connection_id":"ECC","target_connection_id":"ECC","source_table":"KNA1"}`)
	assert.True(t, res.IsError)
	assert.Equal(t, "cross-connection tools need two connections in the workspace", res.Content)
}
