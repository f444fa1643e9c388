package sapenrich

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// landscape is a test database with one workspace and connection whose index rows the test
// inserts directly, as the phase activities would.
type landscape struct {
	t     testing.TB
	st    *store.Store
	scope Scope
}

func newLandscape(t testing.TB, systemType string) *landscape {
	t.Helper()
	ctx := context.Background()
	st, _ := storetest.New(t)
	org, err := st.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := st.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	conn, err := st.CreateConnection(ctx, store.Connection{WorkspaceID: ws.ID, Name: "ERP", SystemType: systemType, Simulated: true, Environment: "development"})
	require.NoError(t, err)
	return &landscape{t: t, st: st, scope: Scope{WorkspaceID: ws.ID, ConnectionID: conn.ID, Generation: 1, SystemType: systemType}}
}

func (l *landscape) db() *pgxpool.Pool { return l.st.Pool }

func (l *landscape) x() DB { return sapindex.New(l.st.Pool) }

type object struct {
	typ, name, pkg, desc string
	fields               []map[string]any // TABL: the table's fields, when the index has them
}

type rel struct {
	fromType, from, toType, to, kind, usage string
	line                                    int
}

// index writes items of one generation as the phase activities store them.
func (l *landscape) index(gen int64, objs []object, rels []rel, code map[string]string) {
	l.t.Helper()
	ctx := context.Background()
	var rows [][]any
	add := func(phase, typ, name, key, pkg, desc string, data map[string]any) {
		raw, err := json.Marshal(data)
		require.NoError(l.t, err)
		h := sha256.Sum256(raw)
		rows = append(rows, []any{l.scope.ConnectionID, l.scope.WorkspaceID, gen, phase, typ, name, key, pkg, desc, raw, h[:]})
	}
	for _, o := range objs {
		d := map[string]any{"type": o.typ, "name": o.name, "description": o.desc, "package": o.pkg}
		if o.fields != nil {
			d["fields"] = o.fields
		}
		add("custom_objects", o.typ, o.name, "", o.pkg, o.desc, d)
	}
	for _, r := range rels {
		d := map[string]any{"from_type": r.fromType, "from": r.from, "to_type": r.toType, "to": r.to, "kind": r.kind}
		if r.usage != "" {
			d["usage"] = r.usage
		}
		if r.line != 0 {
			d["line"] = r.line
		}
		add("relationships", r.fromType, r.from, r.kind+":"+r.toType+":"+r.to+":"+r.usage, "", "", d)
	}
	for key, src := range code {
		typ, name, _ := strings.Cut(key, " ") // "PROG ZREPORT"
		add("custom_code", typ, name, "", "", "", map[string]any{"type": typ, "name": name, "source": src})
	}
	_, err := l.st.Pool.CopyFrom(ctx, pgx.Identifier{"workspace_sap_index"},
		[]string{"connection_id", "workspace_id", "generation", "phase", "object_type", "object_name", "item_key", "package", "description", "data", "content_hash"},
		pgx.CopyFromRows(rows))
	require.NoError(l.t, err)
}

// run records a delta sync run with its changed objects and returns its ID.
func (l *landscape) run(changes ...[2]string) uuid.UUID {
	l.t.Helper()
	ctx := context.Background()
	id := uuid.New()
	_, err := l.st.Pool.Exec(ctx, `INSERT INTO sap_sync_runs (id, workspace_id, connection_id, workflow_id, workflow_run_id, mode, trigger, status)
		VALUES ($1, $2, $3, 'sync/x', 'r', 'delta', 'manual', 'running')`, id, l.scope.WorkspaceID, l.scope.ConnectionID)
	require.NoError(l.t, err)
	for _, c := range changes {
		_, err := l.st.Pool.Exec(ctx, `INSERT INTO sap_sync_changes (run_id, object_type, object_name, change_type) VALUES ($1, $2, $3, 'modified')`, id, c[0], c[1])
		require.NoError(l.t, err)
	}
	return id
}
