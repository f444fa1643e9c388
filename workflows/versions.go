package workflows

import (
	"github.com/sapagent/sapagent/internal/toolpolicy"
)

// Change IDs of workflow.GetVersion, all of them: each guards a change of commands so histories
// recorded before it still replay (workflows/testdata). An ID is part of recorded histories:
// never rename or reuse one; a new change gets a new ID here.
const (
	versionCancelTimers = "cancel-await-timers" // idle and approval timers are cancelled when input arrives
	versionRecordedMode = "tool-modes-recorded" // tool modes come from the model activity's result
	versionParkQueued   = "park-queued"         // queued messages are parked in Postgres before continue-as-new
	versionCompaction   = "compaction"          // older turns are summarised when a request left them out
	versionDecidedBy    = "decided-by"          // approvals publish tool_approved with who decided
	versionTitle        = "title"               // the first turn names the conversation (GenerateTitle)
	versionStopSyncs    = "stop-syncs"          // a workspace deletion cancels its running SAP syncs first
)

// LegacyClassifier decides a tool call's mode the way workflow code did before
// versionRecordedMode, or says why the call cannot run; *tools.Registry is one. It is passed in
// rather than imported, so workflow code does not link the tools (and their Starlark parser).
//
// Retire rule: legacyModes and this interface serve only conversation runs whose tool step ran
// before versionRecordedMode (commit ba4a0aa, 2026-11-23): such a step has no
// "tool-modes-recorded" marker. A conversation run ends at most DefaultIdleTimeout after its last
// message or continues as new, and a new run records the marker. Remove both, and make that
// GetVersion's minimum 1, once (a) no Conversation run started before the deployment of
// ba4a0aa is open anywhere (visibility: WorkflowType='Conversation' AND
// ExecutionStatus='Running' AND StartTime < the deployment), and (b)
// workflows/testdata/conversation_tool_approval.json, the one recorded history that needs it, is
// deleted in the same change.
type LegacyClassifier interface {
	Classify(name, arguments string, p toolpolicy.Policy) (mode toolpolicy.Mode, invalid string)
}
