package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every tool of the product can be run and is offered somewhere; the registry refuses a
// definition that could not be (so a new tool without its runner fails every test at once).
func TestEveryToolHasARunnerAndAnOfferRule(t *testing.T) {
	for _, name := range Default().Names() {
		d, _ := Default().Get(name)
		assert.NotNil(t, d.Run, name)
		assert.True(t, d.DirectCallAllowed || d.ExecuteCodeAllowed, "%s is offered directly or as a helper", name)
	}
	run := func(context.Context, Env, map[string]any) (any, error) { return nil, nil }
	params := `{"type":"object"}`
	_, err := NewRegistry(Definition{Name: "no_runner", Parameters: params, DirectCallAllowed: true})
	assert.ErrorContains(t, err, "no_runner has no Run")
	_, err = NewRegistry(Definition{Name: "hidden", Parameters: params, Run: run})
	assert.ErrorContains(t, err, "hidden is never offered")
	_, err = NewRegistry(Definition{Name: "twice", Parameters: params, Run: run, DirectCallAllowed: true},
		Definition{Name: "twice", Parameters: params, Run: run, ExecuteCodeAllowed: true})
	assert.ErrorContains(t, err, "twice defined twice")
}

func offeredNames(r *Registry, s Situation) []string {
	var names []string
	for _, d := range r.Offered(s) {
		names = append(names, d.Name)
	}
	return names
}

// What the model is offered follows the definitions: notes always, execute_code (and any SAP
// tool DIRECT_CALL_TOOLS names) once there is a connection, cross-connection tools with two.
func TestOfferRulesFollowTheConversationsConnections(t *testing.T) {
	r := Default()
	notes := []string{ExportNote, ListNotes, SaveNote}
	assert.Equal(t, notes, offeredNames(r, Situation{}))
	assert.Equal(t, notes, offeredNames(r, Situation{DirectCall: map[string]bool{SAPReadTable: true}}), "no SAP tool without a connection")
	assert.Equal(t, []string{ExecuteCode, ExportNote, ListNotes, SaveNote}, offeredNames(r, Situation{Connections: 1}))
	assert.Equal(t, []string{ExecuteCode, ExportNote, ListNotes, SAPReadTable, SaveNote},
		offeredNames(r, Situation{Connections: 1, DirectCall: map[string]bool{SAPReadTable: true}}))
	assert.Equal(t, []string{ExecuteCode, ExportNote, ExtractTransformLoad, GenerateFieldMapping, ListNotes, PreviewDataTransform,
		ReconcileMigration, SaveNote, SuggestTransforms, ValidateMigration}, offeredNames(r, Situation{Connections: 2}))

	code, _ := r.Get(ExecuteCode)
	assert.True(t, code.HelperDocs, "execute_code documents its helpers")
	var helpers []string
	for _, h := range r.Helpers() {
		helpers = append(helpers, h.Name)
	}
	assert.Equal(t, []string{SAPExecuteRFC, SAPGetFunctionInterface, SAPGetSource, SAPGetSystemInfo, SAPGetTableSchema,
		SAPListCustomObjects, SAPReadTable, SAPSearchIndex, SAPWhereUsed}, helpers)
}

// memNotes keeps notes in memory (the worker keeps them in Postgres; activities tests cover it).
type memNotes struct{ notes []Note }

func (m *memNotes) List(_ context.Context, limit int) ([]Note, error) {
	out := []Note{}
	for i := len(m.notes) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, m.notes[i])
	}
	return out, nil
}

func (m *memNotes) Save(_ context.Context, n Note) (Note, error) {
	n.ID = "n" + string(rune('0'+len(m.notes)))
	n.CreatedAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	m.notes = append(m.notes, n)
	return n, nil
}

type notesEnv struct{ notes *memNotes }

func (e notesEnv) Notes() Notes                             { return e.notes }
func (e notesEnv) SAP(context.Context) (SAPExecutor, error) { return nil, errors.New("no SAP here") }
func (e notesEnv) Script(context.Context, string) (json.RawMessage, error) {
	return nil, errors.New("no scripts here")
}

func runJSON(t *testing.T, env Env, name, raw string) string {
	t.Helper()
	d, ok := Default().Get(name)
	require.True(t, ok, name)
	args, err := d.ParseArguments(raw)
	require.NoError(t, err)
	out, err := d.Run(context.Background(), env, args)
	require.NoError(t, err, name)
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

func TestNoteToolsRunThroughTheirEnv(t *testing.T) {
	env := notesEnv{&memNotes{}}
	assert.JSONEq(t, `{"notes":[]}`, runJSON(t, env, ListNotes, `{}`))
	assert.JSONEq(t, `{"id":"n0","title":"Close","draft":true}`, runJSON(t, env, SaveNote, `{"title":"Close","body":"post, accruals","draft":true}`))
	runJSON(t, env, SaveNote, `{"title":"Open","body":"b"}`)
	assert.JSONEq(t, `{"notes":[{"id":"n1","title":"Open","body":"b","draft":false,"created_at":"2025-01-02T03:04:05Z"}]}`,
		runJSON(t, env, ListNotes, `{"limit":1}`))
	export := runJSON(t, env, ExportNote, `{}`)
	var v struct {
		CSV  string
		Rows int
	}
	require.NoError(t, json.Unmarshal([]byte(export), &v))
	assert.Equal(t, 2, v.Rows)
	assert.Equal(t, "title,body,draft,created_at\nOpen,b,false,2025-01-02T03:04:05Z\nClose,\"post, accruals\",true,2025-01-02T03:04:05Z\n", v.CSV)

	// An SAP tool reaches SAP only through the env, and says so when it cannot.
	d, _ := Default().Get(SAPGetSystemInfo)
	_, err := d.Run(context.Background(), env, map[string]any{})
	assert.ErrorContains(t, err, "no SAP here")
}
