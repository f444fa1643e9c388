package tenancy

import (
	"context"
	"errors"
	"sync"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/workflows"
)

// removalFanOut bounds how many conversations a removal tells at once.
const removalFanOut = 8

// forgetMember tells the busy conversations of the workspaces user lost (remove_member): her
// queued messages are dropped, her pending calls rejected, her running turn stopped. The
// removal is committed before this runs and stands whatever happens here: a conversation that
// is not running has nothing of hers, and one that cannot be told now still refuses her turns,
// tools and SAP calls when they run (they check membership). It outlives the request, so a
// client that hangs up does not cut it short.
func (s *Handler) forgetMember(ctx context.Context, workspaces []uuid.UUID, user string) {
	if len(workspaces) == 0 || s.Temporal == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	agents, err := s.Agents.BusyAgentIDs(ctx, workspaces)
	if err != nil {
		s.Log.Warn("removed member: conversations not listed; their activities refuse her work", "error", err)
		return
	}
	work := make(chan uuid.UUID)
	var wg sync.WaitGroup
	for range min(removalFanOut, len(agents)) {
		wg.Go(func() {
			for id := range work {
				s.tellRemoved(ctx, id, user)
			}
		})
	}
	for _, id := range agents {
		work <- id
	}
	close(work)
	wg.Wait()
}

func (s *Handler) tellRemoved(parent context.Context, agentID uuid.UUID, user string) {
	ctx, cancel := httpx.TemporalContext(parent, s.TemporalTimeout)
	defer cancel()
	res, err := workflows.RemoveMember.Do(ctx, s.Temporal, workflows.ConversationWorkflowID(agentID.String()), workflows.RemoveMemberRequest{UserID: user})
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound): // not running: nothing of hers is waiting
	case err != nil:
		httpx.LogTemporalFailure(parent, s.Log, s.TemporalTimeout, "removed member: conversation "+agentID.String()+" not told", err)
	default:
		s.Log.Info("removed member's work stopped", "agent", agentID, "dropped", res.Dropped, "rejected", res.Rejected, "stopped", res.Stopped)
	}
}
