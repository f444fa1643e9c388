package activities

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/workflows"
)

// A sync never hangs silently (docs/sync.md "Waiting for SAP"): when a phase's connector calls
// fail and Temporal will retry the phase, the attempt records what it waits for before it
// returns — on the run's row (the API), on the workspace's event stream and, by a signal, in
// the workflow (its query and the Temporal UI's details). The first page of a later attempt
// clears it. The error of an earlier attempt is not available to the next one, hence the record.

// maxWaitingReason bounds the connector's error text shown as the reason.
const maxWaitingReason = 200

// The workflow hears of the first waitingSignalAttempts attempts at once, of later ones about
// once per waitingSignalEvery: each signal is an event in the run's history, and an outage
// may last days.
const waitingSignalAttempts = 3

var waitingSignalEvery = time.Minute

// syncWaiter reports one phase activity's wait for the connector.
type syncWaiter struct {
	a            *Activities
	runID        uuid.UUID
	workspaceID  string
	connectionID string
	mode, phase  string
	checked      bool // this attempt cleared the wait already
}

func (a *Activities) syncWaiter(runID uuid.UUID, workspaceID, connectionID, mode, phase string) *syncWaiter {
	return &syncWaiter{a: a, runID: runID, workspaceID: workspaceID, connectionID: connectionID, mode: mode, phase: phase}
}

// failed records a connector failure that Temporal will retry and returns err unchanged.
func (w *syncWaiter) failed(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || !retryable(err) {
		return err
	}
	attempt := attemptOf(ctx)
	reason := waitingReason(err)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	wt, serr := w.a.index().SetSyncRunWaiting(sctx, w.runID, reason, w.phase, attempt)
	if serr != nil {
		w.a.Log.Warn("sync waiting state not stored", "run_id", w.runID, "error", serr)
		return err
	}
	w.a.publish(sctx, events.WorkspaceTopic(w.workspaceID), events.Event{Frame: frames.SyncWaiting{
		RunID: w.runID.String(), ConnectionID: w.connectionID, Mode: w.mode, Phase: w.phase,
		Reason: wt.Reason, Attempt: int(wt.Attempt), Since: wt.Since}})
	if attempt <= waitingSignalAttempts || dueSignal(wt.Since, time.Now(), waitingSignalEvery) {
		w.signal(sctx, workflows.SyncWaiting{Reason: wt.Reason, Phase: wt.Phase, Attempt: wt.Attempt, Since: wt.Since})
	}
	return err
}

// dueSignal: the attempt that fails first in each period since the wait began signals. Attempts
// come at most 10 s apart (the workflow's retry policy), so the window of the period's first
// 15 s catches one of them.
func dueSignal(since, now time.Time, every time.Duration) bool {
	return now.Sub(since)%every < 15*time.Second
}

// resumed clears the wait after a call to the connector answered, once per attempt that
// follows a failed one.
func (w *syncWaiter) resumed(ctx context.Context) {
	if w.checked || (activity.IsActivity(ctx) && attemptOf(ctx) <= 1) {
		return // a first attempt follows no failure of this phase
	}
	w.checked = true // later pages of this attempt need not ask again
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	cleared, err := w.a.index().ClearSyncRunWaiting(sctx, w.runID)
	if err != nil || !cleared {
		return
	}
	w.a.publish(sctx, events.WorkspaceTopic(w.workspaceID), events.Event{Frame: frames.SyncResumed{
		RunID: w.runID.String(), ConnectionID: w.connectionID, Mode: w.mode, Phase: w.phase}})
	w.signal(sctx, workflows.SyncWaiting{Phase: w.phase})
}

// signal tells the workflow; a failure only costs the Temporal UI's line, never the run.
func (w *syncWaiter) signal(ctx context.Context, sw workflows.SyncWaiting) {
	if w.a.Temporal == nil || !activity.IsActivity(ctx) {
		return
	}
	info := activity.GetInfo(ctx)
	if err := workflows.SyncWaitingChanged.Send(ctx, w.a.Temporal, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, sw); err != nil {
		w.a.Log.Warn("sync waiting state not signalled", "run_id", w.runID, "error", err)
	}
}

// attemptOf is the activity's attempt (1 when called outside an activity, as tests do).
func attemptOf(ctx context.Context) int32 {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return activity.GetInfo(ctx).Attempt
}

// retryable: Temporal retries every error but the non-retryable application errors.
func retryable(err error) bool {
	var app *temporal.ApplicationError
	return !errors.As(err, &app) || !app.NonRetryable()
}

// secretLike matches what could be a key or token a connector echoed back: a long run of
// letters, digits and key punctuation with at least one digit.
var secretLike = regexp.MustCompile(`[A-Za-z0-9_\-+=~]{24,}`)

// waitingReason is a connector failure as the run shows it: the connector's own code and
// message when it answered, else the transport's error; control characters removed, anything
// that looks like a key redacted, at most maxWaitingReason bytes.
func waitingReason(err error) string {
	text := err.Error()
	var se *sap.Error
	if errors.As(err, &se) {
		text = se.Error()
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, text)
	text = secretLike.ReplaceAllStringFunc(text, func(m string) string {
		if strings.ContainsAny(m, "0123456789") {
			return "[redacted]"
		}
		return m
	})
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > maxWaitingReason {
		cut := maxWaitingReason
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	if text == "" {
		text = "the connector failed"
	}
	return text
}
