// Package toolpolicy declares the words of tool approval, execution modes and user policies,
// without the tools themselves: the conversation workflow needs only these, and importing
// package tools would link the Starlark interpreter into workflow code.
package toolpolicy

// Mode says when a human must confirm a call (seed 001 "Tool Categories by Policy").
type Mode string

const (
	// Auto runs without asking.
	Auto Mode = "auto"
	// ConfirmBefore asks before running (writes).
	ConfirmBefore Mode = "confirm_before_execution"
	// ConfirmAfter runs, shows the result, and lets the model see it only once approved.
	ConfirmAfter Mode = "confirm_after_execution"
)

// Policy is a user's per-workspace choice of how much runs without asking.
type Policy string

const (
	// AskEveryTime confirms every call before it runs.
	AskEveryTime Policy = "ask_every_time"
	// ReadsOnly runs reads automatically and asks for writes (the default).
	ReadsOnly Policy = "run_reads_only"
	// RunEverything runs every call without asking.
	RunEverything Policy = "run_everything"
)
