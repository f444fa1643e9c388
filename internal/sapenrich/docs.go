package sapenrich

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sapagent/sapagent/internal/llm"
	"github.com/sapagent/sapagent/internal/sapindex"
)

// Doc kinds (sap_generated_docs.kind).
const (
	DocPackage         = "package"
	DocObject          = "object"
	DocERDiagram       = "er_diagram"
	DocBusinessProcess = "business_process"
)

// DefaultMaxModelDocs caps the model-written docs of one run. A landscape of 50,000 custom
// objects would otherwise cost 50,000 model calls on its first sync (hours and real money);
// with the cap, each run writes the next batch (packages and processes first, then objects
// in name order) and the cache by input hash makes later runs skip what is done.
const DefaultMaxModelDocs = 500

// DocsOptions tune GenerateDocs.
type DocsOptions struct {
	Models *llm.Registry // the product's providers
	Model  string        // "provider:model" that writes the docs (the lead passes PRIMARY_MODEL)
	// Concurrency is the number of model calls in flight (default 4).
	Concurrency int
	// MaxModelDocs caps model calls per run (0: DefaultMaxModelDocs; negative: no cap).
	// Docs over the cap are counted as Deferred and written by a later run.
	MaxModelDocs int
	// SourceExcerptChars bounds the source an object's prompt quotes (default 3,000).
	SourceExcerptChars int
	// MaxReplyTokens bounds one doc's reply (default 700).
	MaxReplyTokens int
	// CallTimeout bounds one model call (default 2 minutes).
	CallTimeout time.Duration
}

// DocsResult counts what GenerateDocs did.
type DocsResult struct {
	Written   int64 `json:"written"`   // model-written docs, new or with changed input
	Diagrams  int64 `json:"diagrams"`  // ER diagrams written (new or changed)
	Unchanged int64 `json:"unchanged"` // input unchanged: only the generation was bumped
	Failed    int64 `json:"failed"`    // the model failed for the doc: skipped, the previous version kept
	Deferred  int64 `json:"deferred"`  // over MaxModelDocs: left for a later run
	Removed   int64 `json:"removed"`   // docs whose subject is gone
	Entries   int64 `json:"entries"`   // doc search entries written or updated
}

// ErrModelOutage is returned when the model failed every call it was given (or a long run of
// them): the activity should retry later; docs written so far are kept and not redone.
var ErrModelOutage = errors.New("sapenrich: the docs model is failing")

// outageAfter consecutive failed calls abort the run as an outage.
const outageAfter = 8

// promptVersion is part of every input hash: changing the prompts regenerates the docs.
const promptVersion = "sapenrich-docs-1"

// GenerateDocs writes the generated docs of the scope: per package a module doc and an ER
// diagram, per business process touched by custom code a process doc, per custom object a
// technical doc; then a search entry per doc (category "doc"). A doc whose input (hash)
// did not change is not rewritten, only confirmed for the generation. In a delta scope only
// the changed objects and their packages are looked at. Run it after AnalyzeCleanCore: the
// levels are part of the docs.
func GenerateDocs(ctx context.Context, db DB, s Scope, opts DocsOptions, progress Progress) (DocsResult, error) {
	if err := s.check(); err != nil {
		return DocsResult{}, err
	}
	if opts.Models == nil || opts.Model == "" {
		return DocsResult{}, errors.New("sapenrich: a model registry and model are required for docs")
	}
	client, model, err := opts.Models.Client(opts.Model)
	if err != nil {
		return DocsResult{}, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.MaxModelDocs == 0 {
		opts.MaxModelDocs = DefaultMaxModelDocs
	}
	if opts.SourceExcerptChars <= 0 {
		opts.SourceExcerptChars = 3000
	}
	if opts.MaxReplyTokens <= 0 {
		opts.MaxReplyTokens = 700
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 2 * time.Minute
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &docRunner{db: db, s: s, opts: opts, client: client, model: model, modelRef: opts.Model,
		progress: progress, budget: int64(opts.MaxModelDocs), jobs: make(chan docJob), cancel: cancel}
	for range opts.Concurrency {
		r.wg.Add(1)
		go r.work(ctx)
	}
	genErr := r.generate(ctx)
	close(r.jobs)
	r.wg.Wait()
	if err := r.flushBumps(context.WithoutCancel(ctx)); err != nil && genErr == nil {
		genErr = err
	}
	if cause := context.Cause(ctx); cause != nil {
		return r.res, cause
	}
	if genErr != nil {
		return r.res, genErr
	}
	if r.res.Written == 0 && r.outageFails > 0 {
		return r.res, fmt.Errorf("%w: all %d calls failed, last: %v", ErrModelOutage, r.res.Failed, r.lastErr)
	}
	removed, err := pruneDocs(ctx, db, s, r.processes)
	if err != nil {
		return r.res, err
	}
	r.res.Removed = removed
	if r.res.Entries, err = IndexDocs(ctx, db, s); err != nil {
		return r.res, err
	}
	report(progress, r.total, r.total) // the total counted every known process; fewer may exist
	return r.res, nil
}

type docJob struct {
	kind, subject, title string
	system, user         string // the prompt; empty system: markdown is complete (no model)
	markdown             string // the whole doc (no model) or the facts after the model's text
	hash, oldHash        []byte
}

type docRunner struct {
	db       DB
	s        Scope
	opts     DocsOptions
	client   *openai.Client
	model    string
	modelRef string
	progress Progress
	jobs     chan docJob
	wg       sync.WaitGroup
	cancel   context.CancelCauseFunc

	mu          sync.Mutex // guards everything below
	res         DocsResult
	done, total int64
	budget      int64
	bumps       [][2]string
	failsInRow  int
	outageFails int // failures that say the model is unavailable (not a refused request)
	lastErr     error
	processes   []string // business processes of this run (the others are pruned)
}

func (r *docRunner) report() {
	report(r.progress, r.done, r.total)
}

// submit decides what a doc needs: nothing (unchanged input), a write (no model) or a model
// call (within the budget).
func (r *docRunner) submit(ctx context.Context, j docJob) error {
	h := sha256.New()
	for _, part := range []string{promptVersion, j.kind, j.subject, j.title, j.system, j.user, j.markdown} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	j.hash = h.Sum(nil)
	r.mu.Lock()
	r.done++
	if r.done%50 == 0 {
		r.report()
	}
	if bytes.Equal(j.hash, j.oldHash) {
		r.res.Unchanged++
		r.bumps = append(r.bumps, [2]string{j.kind, j.subject})
		full := len(r.bumps) >= 500
		r.mu.Unlock()
		if full {
			return r.flushBumps(ctx)
		}
		return nil
	}
	if j.system == "" {
		r.res.Diagrams++
		r.mu.Unlock()
		return r.save(ctx, j, j.markdown, "")
	}
	if r.budget == 0 {
		r.res.Deferred++
		r.mu.Unlock()
		return nil
	}
	r.budget--
	r.mu.Unlock()
	select {
	case r.jobs <- j:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (r *docRunner) work(ctx context.Context) {
	defer r.wg.Done()
	for j := range r.jobs {
		if ctx.Err() != nil {
			continue // drain
		}
		text, err := r.write(ctx, j)
		if err == nil {
			err = r.save(ctx, j, "# "+j.title+"\n\n"+text+"\n\n"+j.markdown, r.modelRef)
			if err != nil {
				r.cancel(err) // the database failing is not the model's fault
				continue
			}
		}
		r.mu.Lock()
		if err != nil && ctx.Err() == nil {
			r.res.Failed++
			if docRejected(err) {
				r.mu.Unlock()
				continue // this doc's request was refused; the model itself is fine
			}
			r.failsInRow++
			r.outageFails++
			r.lastErr = err
			if r.failsInRow >= outageAfter {
				r.cancel(fmt.Errorf("%w: %d calls in a row failed, last: %v", ErrModelOutage, r.failsInRow, err))
			}
		} else if err == nil {
			r.res.Written++
			r.failsInRow = 0
		}
		r.mu.Unlock()
	}
}

// docRejected reports whether the model refused one request (a 4xx other than timeout and
// rate limit, e.g. a prompt over the context size): that doc fails, the model is not out.
func docRejected(err error) bool {
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	return status >= 400 && status < 500 && status != 408 && status != 429
}

// write asks the model for a doc's text.
func (r *docRunner) write(ctx context.Context, j docJob) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	resp, err := r.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: r.model, MaxCompletionTokens: r.opts.MaxReplyTokens,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: j.system},
			{Role: openai.ChatMessageRoleUser, Content: j.user},
		},
	})
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Message.Content) == "" {
		return "", errors.New("the model wrote nothing")
	}
	return strings.TrimSpace(resp.Choices[0].Message.Content), nil
}

func (r *docRunner) save(ctx context.Context, j docJob, markdown, model string) error {
	err := r.db.SaveDoc(ctx, r.s.scoped(), sapindex.GeneratedDoc{Kind: j.kind, Subject: j.subject, Title: j.title, Markdown: markdown, InputHash: j.hash, Model: model})
	if err != nil {
		return ctxErr(ctx, fmt.Errorf("save doc %s %s: %w", j.kind, j.subject, err))
	}
	return nil
}

// flushBumps confirms unchanged docs for the generation.
func (r *docRunner) flushBumps(ctx context.Context) error {
	r.mu.Lock()
	bumps := r.bumps
	r.bumps = nil
	r.mu.Unlock()
	if len(bumps) == 0 {
		return nil
	}
	if err := r.db.ConfirmDocs(ctx, r.s.scoped(), bumps); err != nil {
		return fmt.Errorf("confirm unchanged docs: %w", err)
	}
	return nil
}

// generate walks packages, processes and objects and submits their docs.
func (r *docRunner) generate(ctx context.Context) error {
	objects, err := r.db.CountCustomObjects(ctx, r.s.selection())
	if err != nil {
		return fmt.Errorf("count custom objects: %w", err)
	}
	pkgs, err := r.db.CountCustomPackages(ctx, r.s.selection())
	if err != nil {
		return fmt.Errorf("count packages: %w", err)
	}
	r.mu.Lock()
	r.total = objects + 2*pkgs + int64(len(processes)) // an estimate: not every package has tables
	r.report()
	r.mu.Unlock()
	if err := r.packageDocs(ctx); err != nil {
		return err
	}
	if err := r.processDocs(ctx); err != nil {
		return err
	}
	return r.objectDocs(ctx)
}

// oldHash is the input hash a doc was last written from (nil: none).
func (r *docRunner) oldHash(ctx context.Context, kind, subject string) ([]byte, error) {
	return r.db.DocInputHash(ctx, r.s.scoped(), kind, subject)
}
