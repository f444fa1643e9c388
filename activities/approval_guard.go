package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// approval is how a running call was approved, checked again where it runs: the workflow's
// classification is not the only guard of a write (issue 18 findings 1 and 7).
type approval struct {
	requester string // whose message led to the call (its SAP login)
	decidedBy string // who approved it; "" when it ran without approval
	// declaredWrite: the call itself counts as a write (for execute_code: its script references
	// a write helper), so the turn's rule decided whether it asks.
	declaredWrite bool
	fourEyes      bool // the workspace has four eyes now
}

type approvalKey struct{}

func withApproval(ctx context.Context, g approval) context.Context {
	return context.WithValue(ctx, approvalKey{}, g)
}

// approvalOf is the call's approval; a context without one approved nothing.
func approvalOf(ctx context.Context) approval {
	g, _ := ctx.Value(approvalKey{}).(approval)
	return g
}

// callApproval reads the workspace's four-eyes rule as it is now and says how the call was
// approved. refused is a tool error when the call is a write the rule does not let run (with
// four eyes, a write runs only once someone other than its requester approved it); err is an
// outage (nothing ran: the activity is retried).
func (a *Activities) callApproval(ctx context.Context, agent store.Agent, in workflows.ToolCallInput) (g approval, refused, err error) {
	g = approval{requester: in.UserID, decidedBy: in.DecidedBy}
	if def, ok := a.registry().Get(in.Call.Name); ok {
		if args, perr := def.ParseArguments(in.Call.Arguments); perr == nil {
			g.declaredWrite = tools.Writes(def, args)
		}
	}
	rules, err := a.Store.ToolRules(ctx, agent.WorkspaceID, in.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return g, errors.New("not run: the agent's workspace no longer exists"), nil
	}
	if err != nil {
		return g, nil, fmt.Errorf("load the workspace's approval rules: %w", err)
	}
	g.fourEyes = rules.FourEyes
	if g.declaredWrite {
		refused = fourEyesRefusal(g, in.Call.Name)
	}
	return g, refused, nil
}

// fourEyesRefusal is why a write may not run under the workspace's four-eyes rule, or nil.
func fourEyesRefusal(g approval, what string) error {
	if !g.fourEyes {
		return nil
	}
	switch g.decidedBy {
	case "":
		return fmt.Errorf("not run: %s changes data and this workspace requires a second person's approval for writes (four eyes), "+
			"but no one approved it; nothing was sent to SAP", what)
	case g.requester:
		return fmt.Errorf("not run: %s changes data and this workspace requires a second person's approval for writes (four eyes), "+
			"but it was approved only by its requester; nothing was sent to SAP", what)
	}
	return nil
}

// helperMayRun checks one execute_code helper call as it runs, on its actual arguments: a
// helper call that writes runs only when the script's approval covered writes (a person
// approved the script, or the script was classified as a write and so went through the
// turn's rule) and, with four eyes, someone other than the requester approved it. A script can
// hide a write from the classifier (a computed keyword such as **{"commit": True}); it cannot
// hide it here.
func helperMayRun(g approval, def *tools.Definition, args map[string]any) error {
	if !tools.Writes(def, args) {
		return nil
	}
	if err := fourEyesRefusal(g, def.Name+" with these arguments"); err != nil {
		return err
	}
	if g.decidedBy == "" && !g.declaredWrite {
		return fmt.Errorf("not run: %s with these arguments changes data, but the script did not show it as a write, so no one was asked "+
			"to approve it (nothing was sent to SAP); call write helpers with literal keyword arguments (function=\"…\", commit=True) "+
			"so the script asks for approval", def.Name)
	}
	return nil
}
