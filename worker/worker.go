// Package worker builds the Temporal worker that runs every workflow and activity.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/sapagent/sapagent/activities"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// StickyScheduleToStart bounds how long a task waits for the worker that has its workflow
// cached (a hung or killed one never takes it).
const StickyScheduleToStart = 2 * time.Second

// New registers the workflows and activities on a worker for taskQueue. The caller starts it
// (Run or Start) and stops it. Stopping stops polling at once and lets running activities
// finish for up to stopGrace before they are cancelled (and retried on another worker).
func New(c client.Client, taskQueue string, acts *activities.Activities, stopGrace time.Duration) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{
		WorkerStopTimeout: stopGrace,
		// A workflow's next task waits this long for the worker that has it cached before any
		// worker takes it (and replays the history): when that worker died, a conversation
		// answers again after about this long instead of the SDK's default 5 s.
		StickyScheduleToStartTimeout: StickyScheduleToStart,
		// Heartbeats carry cancellation to a streaming model call: sending them at least every
		// second makes Stop take effect within about a second.
		MaxHeartbeatThrottleInterval:     time.Second,
		DefaultHeartbeatThrottleInterval: time.Second,
	})
	Register(w, acts)
	return w
}

// reportPause is how long Run keeps the process up after the worker stopped: an activity
// cancelled when the stop grace ended reports its failure in that time, so Temporal retries it
// on another worker at once instead of after its heartbeat timeout.
const reportPause = time.Second

// Run runs w until interrupt is closed, stops it (New's stop grace) and pauses for the
// cancelled activities' reports.
func Run(w sdkworker.Worker, interrupt <-chan interface{}) error {
	err := w.Run(interrupt)
	time.Sleep(reportPause)
	return err
}

// Register adds the product's workflows and activities to any registry (a worker, a replayer's
// test environment).
func Register(w sdkworker.Registry, acts *activities.Activities) {
	workflows.RegisterWorkflows(w, tools.Default())
	if acts != nil {
		acts.Register(w)
	}
}
