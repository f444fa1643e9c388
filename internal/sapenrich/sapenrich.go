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

// DB is the index the steps read and write: sapindex runs every query, the steps compute.
type DB = *sapindex.Index

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

// scoped is the generation the step writes to.
func (s Scope) scoped() sapindex.Scoped {
	return sapindex.Scoped{ConnectionID: s.ConnectionID, WorkspaceID: s.WorkspaceID, Generation: s.Generation}
}

// selection is what the step reads: the generation, or only a delta run's changes in it.
func (s Scope) selection() sapindex.Selection {
	return sapindex.Selection{Scoped: s.scoped(), RunID: s.RunID}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
