package activities

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/events"
	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/sandbox"
	"github.com/sapagent/sapagent/internal/tools"
)

// scriptOwner says whose script env runs, for the sandboxes' fair queue (per organization,
// then per user), and tells the conversation while the script waits for a sandbox: a
// tool_update "queued" (with its place in line), then "running" again when it starts. The
// activity keeps heartbeating meanwhile (ExecuteTool), so Temporal does not time it out.
func (a *Activities) scriptOwner(ctx context.Context, env tools.Env) sandbox.Owner {
	e, ok := env.(*toolEnv)
	if !ok {
		return sandbox.Owner{}
	}
	topic := events.AgentTopic(e.agent.ID.String())
	update := func(suffix string, f frames.ToolUpdate) {
		f.ToolCallID, f.Tool = e.callID, tools.ExecuteCode
		// Bounded: a slow event bus must not hold the script's place in line.
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		a.publish(pctx, topic, events.Event{ID: "tool:" + e.callID + ":" + suffix, Frame: f})
	}
	return sandbox.Owner{
		Org:     a.orgOf(ctx, e.agent.WorkspaceID),
		User:    e.user,
		Queued:  func(position int) { update("queued", frames.ToolUpdate{Status: "queued", Position: position}) },
		Started: func() { update("started", frames.ToolUpdate{Status: "running"}) },
	}
}

// orgOf is the organization of a workspace; when it cannot be read, the workspace stands for
// its organization (the queue stays fair between workspaces).
func (a *Activities) orgOf(ctx context.Context, workspaceID uuid.UUID) string {
	if a.Store != nil {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if w, err := a.Store.WorkspaceAccess(lctx, workspaceID, ""); err == nil {
			return "org:" + w.OrgID.String()
		}
	}
	return "workspace:" + workspaceID.String()
}
