// Package syncschedule keeps each SAP connection's sync schedules in Temporal (Temporal
// Schedules, not cron code in the product): a weekly full sync and a daily delta, created with
// the connection, updated when its sync settings change, paused, unpaused and triggered through
// the API, deleted with the connection. Both start SAPSyncScheduled, which runs the sync under
// the connection's one workflow ID or records a skipped run while another sync runs; each
// schedule's own overlap policy is skip.
package syncschedule

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// Modes a connection has a schedule for.
var Modes = []string{"full", "delta"}

// ID names a connection's schedule of one mode (operators find them under sync/ in the UI).
func ID(connectionID, mode string) string { return "sync/" + connectionID + "/" + mode }

// Manager creates and changes schedules through a Temporal client.
type Manager struct {
	Client    client.Client
	TaskQueue string
}

// Schedule is what the API shows of one schedule.
type Schedule struct {
	ID           string      `json:"id"`
	ConnectionID string      `json:"connection_id"`
	Mode         string      `json:"mode"`
	Cron         string      `json:"cron"`
	TimeZone     string      `json:"time_zone"`
	Paused       bool        `json:"paused"`
	Note         string      `json:"note,omitempty"`
	NextRuns     []time.Time `json:"next_runs"`
	RecentRuns   []time.Time `json:"recent_runs"`
	Missing      bool        `json:"missing,omitempty"` // not in Temporal (yet): the next Ensure creates it
}

// ErrBadSpec is a cron expression or time zone Temporal cannot schedule.
var ErrBadSpec = errors.New("bad schedule")

var cronField = regexp.MustCompile(`^[0-9A-Za-z*/,\-?]+$`)

// ValidateCron checks a five-field cron expression's shape (Temporal checks the ranges).
func ValidateCron(expr string) error {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return fmt.Errorf("%w: cron %q must have five fields (minute hour day-of-month month day-of-week)", ErrBadSpec, expr)
	}
	for _, x := range f {
		if !cronField.MatchString(x) {
			return fmt.Errorf("%w: cron %q has an invalid field %q", ErrBadSpec, expr, x)
		}
	}
	return nil
}

// ValidateTimeZone checks an IANA time zone name.
func ValidateTimeZone(tz string) error {
	if _, err := time.LoadLocation(tz); err != nil || tz == "" {
		return fmt.Errorf("%w: unknown time zone %q", ErrBadSpec, tz)
	}
	return nil
}

func cronOf(c store.Connection, mode string) string {
	if mode == "full" {
		return c.SyncFullCron
	}
	return c.SyncDeltaCron
}

func (m Manager) action(c store.Connection, mode string) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        "sync-scheduled/" + c.ID.String() + "/" + mode,
		Workflow:  workflows.SyncScheduledWorkflowName,
		TaskQueue: m.TaskQueue,
		Args: []any{workflows.SyncInput{WorkspaceID: c.WorkspaceID.String(), ConnectionID: c.ID.String(), Mode: mode,
			Trigger: "schedule", RequestedBy: "schedule"}},
	}
}

func spec(c store.Connection, mode string) client.ScheduleSpec {
	return client.ScheduleSpec{CronExpressions: []string{cronOf(c, mode)}, TimeZoneName: c.SyncTimeZone}
}

// Ensure creates the connection's schedules, or updates them to its current settings (a
// paused schedule stays paused).
func (m Manager) Ensure(ctx context.Context, c store.Connection) error {
	for _, mode := range Modes {
		id := ID(c.ID.String(), mode)
		_, err := m.Client.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID: id, Spec: spec(c, mode), Action: m.action(c, mode), Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
			Note: "SAP index " + mode + " sync of connection " + c.Name,
		})
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) || isAlreadyExists(err) {
			err = m.Client.ScheduleClient().GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
				DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
					s := in.Description.Schedule
					sp := spec(c, mode)
					s.Spec = &sp
					s.Action = m.action(c, mode)
					if s.Policy == nil {
						s.Policy = &client.SchedulePolicies{}
					}
					s.Policy.Overlap = enums.SCHEDULE_OVERLAP_POLICY_SKIP
					return &client.ScheduleUpdate{Schedule: &s}, nil
				},
			})
		}
		if err != nil {
			return specError(err)
		}
	}
	return nil
}

func isAlreadyExists(err error) bool {
	var ae *serviceerror.AlreadyExists
	return errors.As(err, &ae)
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// specError turns Temporal's refusal of a spec into ErrBadSpec.
func specError(err error) error {
	var ia *serviceerror.InvalidArgument
	if errors.As(err, &ia) {
		return fmt.Errorf("%w: %s", ErrBadSpec, ia.Message)
	}
	return err
}

// Delete removes the connection's schedules (those already gone are fine).
func (m Manager) Delete(ctx context.Context, connectionID string) error {
	for _, mode := range Modes {
		if err := m.Client.ScheduleClient().GetHandle(ctx, ID(connectionID, mode)).Delete(ctx); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

// Stop deletes the connection's schedules and cancels its running sync (both idempotent): what
// deleting a connection or its workspace does before the rows go.
func (m Manager) Stop(ctx context.Context, connectionID string) error {
	if err := m.Delete(ctx, connectionID); err != nil {
		return fmt.Errorf("delete schedules of %s: %w", connectionID, err)
	}
	if err := m.Client.CancelWorkflow(ctx, workflows.SyncWorkflowID(connectionID), ""); err != nil && !isNotFound(err) {
		return fmt.Errorf("cancel sync of %s: %w", connectionID, err)
	}
	return nil
}

// List describes the connection's schedules.
func (m Manager) List(ctx context.Context, c store.Connection) ([]Schedule, error) {
	out := make([]Schedule, 0, len(Modes))
	for _, mode := range Modes {
		s := Schedule{ID: ID(c.ID.String(), mode), ConnectionID: c.ID.String(), Mode: mode, Cron: cronOf(c, mode), TimeZone: c.SyncTimeZone,
			NextRuns: []time.Time{}, RecentRuns: []time.Time{}}
		d, err := m.Client.ScheduleClient().GetHandle(ctx, s.ID).Describe(ctx)
		switch {
		case isNotFound(err):
			s.Missing = true
		case err != nil:
			return nil, err
		default:
			if d.Schedule.State != nil {
				s.Paused, s.Note = d.Schedule.State.Paused, d.Schedule.State.Note
			}
			s.NextRuns = append(s.NextRuns, d.Info.NextActionTimes...)
			for _, r := range d.Info.RecentActions {
				s.RecentRuns = append(s.RecentRuns, r.ActualTime)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ErrNoSchedule is a schedule that does not exist.
var ErrNoSchedule = errors.New("no such schedule")

// Pause stops a schedule from starting runs until Unpause.
func (m Manager) Pause(ctx context.Context, connectionID, mode, note string) error {
	return m.handleErr(m.Client.ScheduleClient().GetHandle(ctx, ID(connectionID, mode)).Pause(ctx, client.SchedulePauseOptions{Note: note}))
}

// Unpause lets a paused schedule start runs again.
func (m Manager) Unpause(ctx context.Context, connectionID, mode, note string) error {
	return m.handleErr(m.Client.ScheduleClient().GetHandle(ctx, ID(connectionID, mode)).Unpause(ctx, client.ScheduleUnpauseOptions{Note: note}))
}

// Trigger starts the schedule's action now (skipped like any other while a sync runs).
func (m Manager) Trigger(ctx context.Context, connectionID, mode string) error {
	return m.handleErr(m.Client.ScheduleClient().GetHandle(ctx, ID(connectionID, mode)).Trigger(ctx,
		client.ScheduleTriggerOptions{Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP}))
}

func (m Manager) handleErr(err error) error {
	if isNotFound(err) {
		return ErrNoSchedule
	}
	return err
}
