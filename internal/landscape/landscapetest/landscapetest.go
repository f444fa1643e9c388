// Package landscapetest writes index rows straight into the tables of migration 012, for tests
// of the readers (internal/landscape, the API's landscape routes) without running a sync.
package landscapetest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
)

// Conn is a connection of a workspace whose rows a test writes.
type Conn struct {
	St          *store.Store
	WorkspaceID uuid.UUID
	ID          uuid.UUID
	Generation  int64 // the generation rows are written under
}

// Connection creates a connection (simulated, as development does) in the workspace.
func Connection(t testing.TB, st *store.Store, workspaceID uuid.UUID, name, systemType string) Conn {
	t.Helper()
	c, err := st.CreateConnection(context.Background(), store.Connection{WorkspaceID: workspaceID, Name: name, SystemType: systemType,
		Environment: "development", Simulated: true, CredentialMode: store.CredentialTechnicalUserAll})
	require.NoError(t, err)
	return Conn{St: st, WorkspaceID: workspaceID, ID: c.ID, Generation: 1}
}

func (c Conn) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := c.St.Pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

func hash(v any) []byte {
	raw, _ := json.Marshal(v)
	h := sha256.Sum256(raw)
	return h[:]
}

// Graph writes the connection's workspace_sap_graph row: current generation gen, ready.
func (c Conn) Graph(t testing.TB, gen int64, fullSync time.Time, counts sapindex.Counts) {
	t.Helper()
	raw, err := json.Marshal(counts)
	require.NoError(t, err)
	c.exec(t, `INSERT INTO workspace_sap_graph (connection_id, workspace_id, generation, last_generation, status, last_full_sync_at, counts)
		VALUES ($1, $2, $3, $3, 'ready', $4, $5)
		ON CONFLICT (connection_id) DO UPDATE SET generation = $3, last_generation = $3, last_full_sync_at = $4, counts = $5`,
		c.ID, c.WorkspaceID, gen, fullSync, raw)
}

// Entry is a search entry; Hash defaults to a hash of the other fields.
type Entry struct {
	Category, Type, Name string
	Custom               bool
	Package, Title, Body string
	ReleaseState         string
	Hash                 []byte
}

// Entries writes search entries under c.Generation.
func (c Conn) Entries(t testing.TB, entries ...Entry) {
	t.Helper()
	for _, e := range entries {
		if e.Category == "" {
			e.Category = "object"
		}
		if e.Hash == nil {
			e.Hash = hash([]any{e.Type, e.Name, e.Custom, e.Package, e.Title, e.Body, e.ReleaseState})
		}
		c.exec(t, `INSERT INTO sap_search_entries (connection_id, workspace_id, generation, category, object_type, object_name, custom,
			package, title, body, release_state, content_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			c.ID, c.WorkspaceID, c.Generation, e.Category, e.Type, e.Name, e.Custom, e.Package, e.Title, e.Body, e.ReleaseState, e.Hash)
	}
}

// Item writes one index item of a phase under c.Generation, as the connector returned it.
func (c Conn) Item(t testing.TB, phase, objType, name, key, pkg string, data map[string]any) {
	t.Helper()
	raw, err := json.Marshal(data)
	require.NoError(t, err)
	c.exec(t, `INSERT INTO workspace_sap_index (connection_id, workspace_id, generation, phase, object_type, object_name, item_key, package, data, content_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, c.ID, c.WorkspaceID, c.Generation, phase, objType, name, key, pkg, raw, hash(data))
}

// CleanCore writes one object's analysis under c.Generation; findings and conversion are
// marshalled as given (cleancore.Reason lists or maps of the same shape).
func (c Conn) CleanCore(t testing.TB, objType, name, pkg, level string, findings, conversion any) {
	t.Helper()
	f, err := json.Marshal(findings)
	require.NoError(t, err)
	cv, err := json.Marshal(conversion)
	require.NoError(t, err)
	c.exec(t, `INSERT INTO clean_core_analysis (connection_id, workspace_id, generation, object_type, object_name, package, level, findings, conversion)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, c.ID, c.WorkspaceID, c.Generation, objType, name, pkg, level, f, cv)
}

// Doc writes a generated doc confirmed for generation gen.
func (c Conn) Doc(t testing.TB, kind, subject, title, markdown string, gen int64) {
	t.Helper()
	c.exec(t, `INSERT INTO sap_generated_docs (connection_id, workspace_id, kind, subject, title, markdown, input_hash, model, generation)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'test:model', $8)`, c.ID, c.WorkspaceID, kind, subject, title, markdown, hash(markdown), gen)
}

// Run writes a sync run.
func (c Conn) Run(t testing.TB, mode, status string, started time.Time) uuid.UUID {
	t.Helper()
	id := uuid.New()
	c.exec(t, `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status, generation, started_at, finished_at)
		VALUES ($1, $2, $3, $4, 'run', $5, 'manual', $6, $7, $8::timestamptz, $8::timestamptz + interval '1 minute')`,
		id, c.WorkspaceID, c.ID, "sync/"+c.ID.String(), mode, status, c.Generation, started)
	return id
}
