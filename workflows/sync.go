package workflows

import (
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// SAPSync indexes one SAP connection's metadata (DESIGN.md "Sync workflows", docs/sync.md):
// probe for changes → index phases → enrichment → switch. Its ID is sync/<connection>, so
// Temporal itself keeps it to one run per connection: a manual start while one runs is refused
// (the API answers 409), and a scheduled start goes through SAPSyncScheduled, which records a
// skipped run instead. Nothing of the landscape passes through the workflow: phases stream
// pages from the connector into Postgres and return counts.
const (
	SyncWorkflowName          = "SAPSync"
	SyncScheduledWorkflowName = "SAPSyncScheduled"
)

// SyncWaiting is what a run waits for while the connector fails: the connector's failure
// (safe to show), the phase retried, the attempt that failed last and when waiting began.
type SyncWaiting struct {
	Reason  string    `json:"reason"`
	Phase   string    `json:"phase"`
	Attempt int32     `json:"attempt"`
	Since   time.Time `json:"since"`
}

// SyncWorkflowID is the ID every sync of a connection runs under.
func SyncWorkflowID(connectionID string) string { return "sync/" + connectionID }

// Sync run statuses (sap_sync_runs.status).
const (
	SyncRunning   = "running"
	SyncSucceeded = "succeeded"
	SyncFailed    = "failed"
	SyncCancelled = "cancelled"
	SyncSkipped   = "skipped"
)

// Enrichment steps, reported as phases after the index phases.
const (
	StepProbe      = "probe"
	StepCleanCore  = "clean_core"
	StepDocs       = "docs"
	StepEmbeddings = "embeddings"
	StepSwitch     = "switch"
)

// SyncInput starts a sync of one connection.
type SyncInput struct {
	WorkspaceID  string `json:"workspace_id"`
	ConnectionID string `json:"connection_id"`
	Mode         string `json:"mode"`    // full | delta | enrich-only
	Trigger      string `json:"trigger"` // manual | schedule
	RequestedBy  string `json:"requested_by,omitempty"`
}

// SyncStart is what StartSyncRun found: the run row and where the index stands.
type SyncStart struct {
	RunID      string `json:"run_id"`
	SystemType string `json:"system_type"`
	// Mode is the mode the run actually has: a delta or enrich-only without an index is a full.
	Mode       string `json:"mode"`
	Generation int64  `json:"generation"` // the generation readers see (0: none)
	Build      int64  `json:"build"`      // the generation this run writes (full: new; delta: staging)
	ChangeSeq  int64  `json:"change_seq"` // the change-log position the current index reflects
}

// ProbeInput asks for the changes after the index's change-log position.
type ProbeInput struct {
	RunID        string `json:"run_id"`
	WorkspaceID  string `json:"workspace_id"`
	ConnectionID string `json:"connection_id"`
	AfterSeq     int64  `json:"after_seq"`
	// Full: only read where the change log stands now (a full sync reads everything; the
	// next delta starts there).
	Full bool `json:"full,omitempty"`
}

// ProbeResult counts the changed objects (stored in sap_sync_changes) and the newest position.
type ProbeResult struct {
	Changes   int64 `json:"changes"`
	LatestSeq int64 `json:"latest_seq"`
}

// PhaseInput runs one index phase or enrichment step of a run.
type PhaseInput struct {
	RunID        string `json:"run_id"`
	WorkspaceID  string `json:"workspace_id"`
	ConnectionID string `json:"connection_id"`
	SystemType   string `json:"system_type"`
	Mode         string `json:"mode"`
	Phase        string `json:"phase"`
	Generation   int64  `json:"generation"` // written (index phases) or enriched
	AfterSeq     int64  `json:"after_seq"`  // delta: only objects changed after this position
}

// PhaseResult is what a phase did.
type PhaseResult struct {
	Items int64 `json:"items"`
	// Skipped says why the phase did nothing (the connector does not support it …).
	Skipped string `json:"skipped,omitempty"`
}

// PhaseStatus is one phase of a run as the progress query and sap_sync_runs.phases show it.
type PhaseStatus struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // pending | running | done | skipped | failed | cancelled
	Items   int64  `json:"items"`
	MS      int64  `json:"ms"`
	Skipped string `json:"skipped,omitempty"`
}

// SyncStatus is a run's progress and outcome.
type SyncStatus struct {
	RunID        string        `json:"run_id"`
	ConnectionID string        `json:"connection_id"`
	Mode         string        `json:"mode"`
	Trigger      string        `json:"trigger"`
	Status       string        `json:"status"`
	Phase        string        `json:"phase"`
	Phases       []PhaseStatus `json:"phases"`
	Generation   int64         `json:"generation"`
	Changes      int64         `json:"changes"`
	Error        string        `json:"error,omitempty"`
	Waiting      *SyncWaiting  `json:"waiting,omitempty"`
}

// FinishInput ends a run: switch (full) or merge (delta) the built generation, count, record.
type FinishInput struct {
	Status      SyncStatus `json:"status"`
	Build       int64      `json:"build"`
	LatestSeq   int64      `json:"latest_seq"`
	WorkspaceID string     `json:"workspace_id"`
}

// The sync's activities. Names are part of recorded histories: never rename one.
var (
	StartSyncRun  = Activity[SyncInput, SyncStart]{"StartSyncRun"}
	ProbeChanges  = Activity[ProbeInput, ProbeResult]{"ProbeSyncChanges"}
	IndexPhase    = Activity[PhaseInput, PhaseResult]{"IndexSyncPhase"}
	EnrichPhase   = Activity[PhaseInput, PhaseResult]{"EnrichSyncPhase"}
	FinishSyncRun = Effect[FinishInput]{"FinishSyncRun"}
	// RecordSkippedSync records a scheduled run that did not start because another ran.
	RecordSkippedSync = Effect[SyncInput]{"RecordSkippedSync"}
)

// ErrTypeSyncRefused marks a connector answer no retry can change (authorization, a phase the
// connection cannot serve): the run fails with it at once.
const ErrTypeSyncRefused = "SyncRefused"

// syncActivities: an outage (worker, Postgres, connector) only delays a run, so attempts are
// unlimited; phases heartbeat every few seconds and resume from their committed cursor.
func syncActivities(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 6 * time.Hour,
		HeartbeatTimeout:    15 * time.Second,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			// 10 s at most: a connector or Postgres that is back is used again within seconds.
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{ErrTypeBadInput, ErrTypeSyncRefused},
		},
	})
}

// SAPSync runs one sync.
func SAPSync(ctx workflow.Context, in SyncInput) (SyncStatus, error) {
	st := SyncStatus{ConnectionID: in.ConnectionID, Mode: in.Mode, Trigger: in.Trigger, Status: SyncRunning, Phase: "starting"}
	if err := SyncProgress.SetHandler(ctx, func() (SyncStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	actx := syncActivities(ctx)
	start, err := StartSyncRun.Run(actx, in)
	if err != nil {
		return st, err // only a connection that does not exist (any more) gets here
	}
	st.RunID, st.Mode, st.Generation = start.RunID, start.Mode, start.Build
	s := syncRun{ctx: ctx, actx: actx, in: in, start: start, st: &st}
	workflow.Go(ctx, s.followWaiting)
	err = s.run()
	return s.finish(err)
}

type syncRun struct {
	ctx, actx workflow.Context
	in        SyncInput
	start     SyncStart
	st        *SyncStatus
	latestSeq int64
}

// followWaiting keeps the run's waiting state from its activities' signals. Receiving a
// signal is no command, so histories recorded before this replay unchanged.
func (s *syncRun) followWaiting(ctx workflow.Context) {
	for {
		w, ok := SyncWaitingChanged.Receive(ctx)
		if !ok {
			return
		}
		if s.st.Status != SyncRunning {
			continue
		}
		if w.Attempt == 0 {
			s.st.Waiting = nil
		} else {
			s.st.Waiting = &w
		}
		s.details()
	}
}

func (s *syncRun) details() {
	if w := s.st.Waiting; w != nil && s.st.Status == SyncRunning {
		workflow.SetCurrentDetails(s.ctx, fmt.Sprintf("**%s** sync of connection %s: %s — %s", s.st.Mode, s.in.ConnectionID, s.st.Phase, WaitingLine(*w)))
		return
	}
	done := 0
	for _, p := range s.st.Phases {
		if p.Status == "done" || p.Status == "skipped" {
			done++
		}
	}
	workflow.SetCurrentDetails(s.ctx, fmt.Sprintf("**%s** sync of connection %s: %s (%d/%d steps done, %d changes)",
		s.st.Mode, s.in.ConnectionID, s.st.Phase, done, len(s.st.Phases), s.st.Changes))
}

// plan lists the steps of the run.
func (s *syncRun) plan() []PhaseStatus {
	var names []string
	if s.st.Mode != "enrich-only" {
		names = append(names, StepProbe) // a full notes where the change log stands; a delta reads it
	}
	if s.st.Mode != "enrich-only" {
		names = append(names, indexPhases(s.start.SystemType)...)
	}
	names = append(names, StepCleanCore, StepDocs, StepEmbeddings, StepSwitch)
	out := make([]PhaseStatus, len(names))
	for i, n := range names {
		out[i] = PhaseStatus{Name: n, Status: "pending"}
	}
	return out
}

// indexPhases mirrors sapindex.Phases (workflows import no I/O packages).
func indexPhases(systemType string) []string {
	p := []string{"custom_objects", "relationships", "custom_code", "catalog_context", "enhancements"}
	if systemType == "S4HANA" {
		p = append(p, "s4_extensions")
	}
	return p
}

func (s *syncRun) step(i int, fn func() (PhaseResult, error)) error {
	p := &s.st.Phases[i]
	s.st.Phase, p.Status = p.Name, "running"
	s.details()
	began := workflow.Now(s.ctx)
	res, err := fn()
	s.st.Waiting = nil // the phase ended: whatever it waited for is over
	p.MS = workflow.Now(s.ctx).Sub(began).Milliseconds()
	if err != nil {
		p.Status = "failed"
		if temporal.IsCanceledError(err) {
			p.Status = "cancelled"
		}
		return err
	}
	p.Items, p.Skipped, p.Status = res.Items, res.Skipped, "done"
	if res.Skipped != "" {
		p.Status = "skipped"
	}
	return nil
}

func (s *syncRun) run() error {
	s.st.Phases = s.plan()
	s.latestSeq = s.start.ChangeSeq
	afterSeq := int64(0)
	for i := range s.st.Phases {
		name := s.st.Phases[i].Name
		in := PhaseInput{RunID: s.start.RunID, WorkspaceID: s.in.WorkspaceID, ConnectionID: s.in.ConnectionID, SystemType: s.start.SystemType,
			Mode: s.st.Mode, Phase: name, Generation: s.start.Build, AfterSeq: afterSeq}
		var err error
		switch name {
		case StepProbe:
			err = s.step(i, func() (PhaseResult, error) {
				res, err := ProbeChanges.Run(s.actx, ProbeInput{RunID: s.start.RunID, WorkspaceID: s.in.WorkspaceID, ConnectionID: s.in.ConnectionID,
					AfterSeq: s.start.ChangeSeq, Full: s.st.Mode == "full"})
				s.st.Changes, s.latestSeq = res.Changes, res.LatestSeq
				return PhaseResult{Items: res.Changes}, err
			})
			if s.st.Mode == "full" {
				break
			}
			if err == nil && s.st.Changes == 0 {
				return errNothingChanged
			}
			afterSeq = s.start.ChangeSeq
		case "custom_objects", "relationships", "custom_code", "catalog_context", "enhancements", "s4_extensions":
			err = s.step(i, func() (PhaseResult, error) { return IndexPhase.Run(s.actx, in) })
		case StepSwitch:
			s.st.Phase = StepSwitch
			return nil // finish switches
		default:
			err = s.step(i, func() (PhaseResult, error) { return EnrichPhase.Run(s.actx, in) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// WaitingLine is how a wait reads to a person: the Temporal UI's details show it.
func WaitingLine(w SyncWaiting) string {
	return fmt.Sprintf("waiting for SAP: %s, attempt %d, since %s", w.Reason, w.Attempt, w.Since.UTC().Format(time.RFC3339))
}

var errNothingChanged = errors.New("nothing changed since the last sync")

// finish records the outcome. It runs on a disconnected context, so a cancelled run still
// removes what it built and says so.
func (s *syncRun) finish(runErr error) (SyncStatus, error) {
	st := s.st
	switch {
	case runErr == nil:
		st.Status = SyncSucceeded
	case errors.Is(runErr, errNothingChanged):
		st.Status, st.Error = SyncSkipped, runErr.Error()
	case temporal.IsCanceledError(runErr):
		st.Status, st.Error = SyncCancelled, "cancelled"
	default:
		st.Status, st.Error = SyncFailed, failureMessage(runErr)
	}
	dctx, cancel := workflow.NewDisconnectedContext(s.ctx)
	defer cancel()
	err := FinishSyncRun.Run(syncActivities(dctx), FinishInput{Status: *st, Build: s.start.Build, LatestSeq: s.latestSeq, WorkspaceID: s.in.WorkspaceID})
	if err == nil && st.Status == SyncSucceeded {
		for i := range st.Phases {
			if st.Phases[i].Name == StepSwitch {
				st.Phases[i].Status = "done"
			}
		}
	}
	st.Phase = st.Status
	s.details()
	if err != nil {
		return *st, err
	}
	if st.Status == SyncCancelled {
		return *st, runErr // the run shows as cancelled in Temporal too
	}
	return *st, nil // a failed sync is recorded in sap_sync_runs; the workflow itself completed its job
}

// failureMessage is an activity's error without Temporal's wrapping: ApplicationError.Error()
// appends "(type: …, retryable: …)", which is no message for the run's reader.
func failureMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}

// SAPSyncScheduled is what a connection's schedules start: the sync itself as a child under the
// connection's one workflow ID, or a skipped run when a sync of the connection is running.
func SAPSyncScheduled(ctx workflow.Context, in SyncInput) (SyncStatus, error) {
	in.Trigger = "schedule"
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            SyncWorkflowID(in.ConnectionID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, SyncWorkflowName, in)
	var exec workflow.Execution
	if err := child.GetChildWorkflowExecution().Get(ctx, &exec); err != nil {
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			st := SyncStatus{ConnectionID: in.ConnectionID, Mode: in.Mode, Trigger: in.Trigger, Status: SyncSkipped, Error: "another sync of this connection was running"}
			return st, RecordSkippedSync.Run(syncActivities(ctx), in)
		}
		return SyncStatus{}, err
	}
	var st SyncStatus
	err := child.Get(ctx, &st)
	return st, err
}
