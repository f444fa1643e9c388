package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/sapenrich"
	"github.com/sapagent/sapagent/internal/sapindex"
	"github.com/sapagent/sapagent/workflows"
)

// Sync is what the SAP index syncs need from the worker process.
type Sync struct {
	// EmbeddingsModel is provider:model of the search entries' embeddings (EMBEDDINGS_MODEL);
	// empty: entries are searched by keyword only.
	EmbeddingsModel string
	// DocsModel is provider:model that writes the generated docs (empty: the primary model).
	DocsModel string
	// MaxModelDocs caps model-written docs per run (0: sapenrich's default).
	MaxModelDocs int
	// MaxItemsPerPhase caps the items one index phase may bring (SYNC_MAX_ITEMS_PER_PHASE; 0:
	// DefaultMaxItemsPerPhase); past it the run fails with the reason.
	MaxItemsPerPhase int64
	// Classifier grades custom code (nil: SAP's Cloudification Repository shipped with the product).
	Classifier *cleancore.Classifier
}

func (a *Activities) index() *sapindex.Index { return sapindex.New(a.Store.Pool) }

// enrich runs one enrichment step over the run's build generation (a delta: only its changes).
func (a *Activities) enrich(ctx context.Context, in workflows.PhaseInput, progress func(done, total int64)) (int64, string, error) {
	ws, conn, _ := syncIDs(in.WorkspaceID, in.ConnectionID)
	scope := sapenrich.Scope{WorkspaceID: ws, ConnectionID: conn, Generation: in.Generation, SystemType: in.SystemType}
	if in.Mode == sapindex.ModeDelta {
		scope.RunID, _ = uuid.Parse(in.RunID)
	}
	if in.Generation <= 0 {
		return 0, "no index to enrich", nil
	}
	switch in.Phase {
	case workflows.StepCleanCore:
		res, err := sapenrich.AnalyzeCleanCore(ctx, a.index(), scope, sapenrich.CleanCoreOptions{Classifier: a.Sync.Classifier}, progress)
		return res.Objects, "", err
	case workflows.StepDocs:
		model := a.Sync.DocsModel
		if model == "" {
			model = a.PrimaryModel
		}
		if a.Models == nil || model == "" {
			return 0, "no model configured for docs", nil
		}
		res, err := sapenrich.GenerateDocs(ctx, a.index(), scope, sapenrich.DocsOptions{Models: a.Models, Model: model, MaxModelDocs: a.Sync.MaxModelDocs}, progress)
		if errors.Is(err, sapenrich.ErrModelOutage) {
			return 0, "", fmt.Errorf("docs model unavailable: %w", err) // retried with backoff
		}
		return res.Written + res.Diagrams + res.Unchanged, "", err
	case workflows.StepEmbeddings:
		if a.Models == nil || a.Sync.EmbeddingsModel == "" {
			return 0, "no embeddings model configured: search is by keyword only", nil
		}
		emb, err := a.Models.Embedder(a.Sync.EmbeddingsModel)
		if err != nil {
			return 0, "", temporal.NewNonRetryableApplicationError("embeddings model: "+err.Error(), workflows.ErrTypeSyncRefused, nil)
		}
		res, err := sapenrich.EmbedEntries(ctx, a.index(), scope, sapenrich.EmbedOptions{Embedder: emb}, progress)
		return res.Copied + res.Embedded, "", err
	}
	return 0, "", badInput("unknown enrichment step "+in.Phase, nil)
}

// searchEmbedder embeds search questions with the index's embeddings model (nil: keyword only).
func (a *Activities) searchEmbedder() sapindex.Embedder {
	if a.Models == nil || a.Sync.EmbeddingsModel == "" {
		return nil
	}
	emb, err := a.Models.Embedder(a.Sync.EmbeddingsModel)
	if err != nil || emb == nil {
		return nil
	}
	return emb
}
