// Package sapenrich enriches a connection's SAP index after its phases were written
// (docs/sap-enrichment.md): Clean Core levels and conversion readiness of custom objects,
// model-written documentation with deterministic ER diagrams, and embeddings of the search
// entries. Every step works on one index generation, streams its rows, is idempotent (a
// retried activity redoes or skips work, never duplicates it) and reports progress.
package sapenrich

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// Scope is the index an enrichment step works on.
type Scope struct {
	WorkspaceID  uuid.UUID
	ConnectionID uuid.UUID
	Generation   int64
	// RunID, when set, limits the step to the objects that delta run changed (its
	// sap_sync_changes rows); uuid.Nil means every object of the generation.
	RunID uuid.UUID
	// SystemType is the connection's system type; "ECC" adds conversion readiness.
	SystemType string
}

// Progress receives how many of a step's items are done out of how many (total 0: unknown);
// activities heartbeat from it. It is called from one goroutine at a time.
type Progress func(done, total int64)

// DB is the database the steps read and write.
type DB = *pgxpool.Pool

func (s Scope) check() error {
	if s.WorkspaceID == uuid.Nil || s.ConnectionID == uuid.Nil {
		return errors.New("sapenrich: workspace and connection are required")
	}
	if s.Generation <= 0 {
		return errors.New("sapenrich: generation must be positive")
	}
	return nil
}

func (s Scope) delta() bool { return s.RunID != uuid.Nil }

func report(p Progress, done, total int64) {
	if p != nil {
		p(done, total)
	}
}

// changedFilter restricts an alias's (object_type, object_name) to the run's changes when
// the scope is a delta ($4, the run ID, is not NULL).
var changedFilter = sapindex.ChangedFilter

// index is where the step's results are written (sapindex owns every write of the index).
func (s Scope) index(db DB) (*sapindex.Index, sapindex.Scoped) {
	return sapindex.New(db), sapindex.Scoped{ConnectionID: s.ConnectionID, WorkspaceID: s.WorkspaceID, Generation: s.Generation}
}

// args are the query arguments every scoped query takes: $1 connection, $2 workspace,
// $3 generation, $4 run (delta only).
func (s Scope) args(extra ...any) []any {
	a := []any{s.ConnectionID, s.WorkspaceID, s.Generation}
	if s.delta() {
		a = append(a, s.RunID)
	} else {
		a = append(a, nil)
	}
	return append(a, extra...)
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
