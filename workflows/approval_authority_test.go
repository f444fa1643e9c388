package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/internal/events/frames"
	"github.com/sapagent/sapagent/internal/tools"
)

func TestMayDecide(t *testing.T) {
	write := PendingApproval{ToolCallID: "w1", Mode: string(tools.ConfirmBefore), RequestedBy: "alice"}
	after := PendingApproval{ToolCallID: "e1", Mode: string(tools.ConfirmAfter), RequestedBy: "alice"}
	fourEyesWrite := PendingApproval{ToolCallID: "w2", Mode: string(tools.ConfirmBefore), RequestedBy: "alice", FourEyes: true}
	cases := []struct {
		name    string
		req     ApproveRequest
		call    PendingApproval
		approve bool
		allowed bool
	}{
		{"requester approves", ApproveRequest{DecidedBy: "alice"}, write, true, true},
		{"requester rejects", ApproveRequest{DecidedBy: "alice"}, write, false, true},
		{"other member approves", ApproveRequest{DecidedBy: "bob"}, write, true, false},
		{"other member rejects", ApproveRequest{DecidedBy: "bob"}, write, false, false},
		{"nobody named", ApproveRequest{}, write, true, false},
		{"admin, workspace does not allow it", ApproveRequest{DecidedBy: "carol", DeciderIsAdmin: true}, write, true, false},
		{"member, admins allowed", ApproveRequest{DecidedBy: "bob", AdminsMayApprove: true}, write, true, false},
		{"admin, admins allowed", ApproveRequest{DecidedBy: "carol", DeciderIsAdmin: true, AdminsMayApprove: true}, write, true, true},
		{"four eyes: requester approves own write", ApproveRequest{DecidedBy: "alice", FourEyes: true}, write, true, false},
		{"four eyes: requester (an admin) approves own write", ApproveRequest{DecidedBy: "alice", DeciderIsAdmin: true, AdminsMayApprove: true, FourEyes: true}, write, true, false},
		{"four eyes: requester rejects own write", ApproveRequest{DecidedBy: "alice", FourEyes: true}, write, false, true},
		{"four eyes: second member approves", ApproveRequest{DecidedBy: "bob", FourEyes: true}, write, true, true},
		{"four eyes: second member rejects", ApproveRequest{DecidedBy: "bob", FourEyes: true}, write, false, true},
		{"four eyes: confirm-after stays with the requester", ApproveRequest{DecidedBy: "alice", FourEyes: true}, after, true, true},
		{"four eyes: confirm-after not for others", ApproveRequest{DecidedBy: "bob", FourEyes: true}, after, true, false},
		// Four eyes at request time holds after the workspace switched it off.
		{"requested under four eyes, off now: requester approves", ApproveRequest{DecidedBy: "alice", DeciderIsAdmin: true, AdminsMayApprove: true}, fourEyesWrite, true, false},
		{"requested under four eyes, off now: requester rejects", ApproveRequest{DecidedBy: "alice"}, fourEyesWrite, false, true},
		{"requested under four eyes, off now: second member approves", ApproveRequest{DecidedBy: "bob"}, fourEyesWrite, true, true},
	}
	for _, tc := range cases {
		err := mayDecide(tc.req, tc.call, tc.approve)
		if tc.allowed {
			assert.NoError(t, err, tc.name)
			continue
		}
		var appErr *temporal.ApplicationError
		if assert.ErrorAs(t, err, &appErr, tc.name) {
			assert.Equal(t, ErrTypeNotAllowed, appErr.Type(), tc.name)
		}
	}
}

// eventOf is the first event of type F the workflow published.
func eventOf[F frames.Frame](f *loopFakes) (F, bool) {
	for _, e := range f.published {
		if ev, ok := e.Frame.(F); ok {
			return ev, true
		}
	}
	var none F
	return none, false
}

func TestAnotherMemberCannotApproveAndTheWriteWaitsForItsRequester(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("w1", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	var st State
	stateAt(env, 30*time.Second, &st)
	var bob, admin, alice updateResult
	approveAs(env, time.Minute, &bob, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "bob", AdminsMayApprove: true})
	approveAs(env, 2*time.Minute, &admin, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "carol", DeciderIsAdmin: true})
	var mid State
	stateAt(env, 3*time.Minute, &mid)
	approveAs(env, 4*time.Minute, &alice, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "alice"})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.ErrorContains(t, bob.err, "only the user whose message led to tool call w1")
	require.ErrorContains(t, admin.err, "does not let admins decide")
	require.Len(t, st.PendingApprovals, 1)
	assert.Equal(t, "alice", st.PendingApprovals[0].RequestedBy)
	require.Len(t, mid.PendingApprovals, 1, "refused decisions leave the call pending")
	require.NoError(t, alice.err)
	assert.Equal(t, []string{"w1"}, f.ran)
	assert.Equal(t, "alice", f.deciders["w1"])
	approved, ok := eventOf[frames.ToolApproved](f)
	require.True(t, ok)
	assert.Equal(t, "alice", approved.DecidedBy)
	needed, _ := eventOf[frames.ApprovalNeeded](f)
	assert.Equal(t, "alice", needed.RequestedBy)
}

func TestFourEyesWriteIsApprovedBySomeoneElse(t *testing.T) {
	f := &loopFakes{steps: []TurnResult{{ToolCalls: []ToolCall{call("w1", tools.SaveNote, finalNote), call("w2", tools.SaveNote, finalNote)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save both")
	var own, mixed, bob, reject updateResult
	approveAs(env, time.Minute, &own, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "alice", FourEyes: true})
	// One refused decision refuses the whole request: w2's rejection is not taken either.
	approveAs(env, 2*time.Minute, &mixed, ApproveRequest{Decisions: []Decision{{ToolCallID: "w2", Approved: false}, {ToolCallID: "w1", Approved: true}}, DecidedBy: "alice", FourEyes: true})
	approveAs(env, 3*time.Minute, &bob, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "bob", FourEyes: true})
	approveAs(env, 4*time.Minute, &reject, ApproveRequest{Decisions: []Decision{{ToolCallID: "w2", Approved: false, Reason: "wrong title"}}, DecidedBy: "alice", FourEyes: true})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.ErrorContains(t, own.err, "four eyes")
	require.ErrorContains(t, mixed.err, "four eyes")
	require.NoError(t, bob.err)
	require.NoError(t, reject.err, "the requester may still reject")
	assert.Equal(t, []string{"w1"}, f.ran)
	assert.Equal(t, "bob", f.deciders["w1"])
	rejected, ok := eventOf[frames.ToolRejected](f)
	require.True(t, ok)
	assert.Equal(t, "alice", rejected.DecidedBy)
	assert.Equal(t, "w2", rejected.ToolCallID)
}

// A write requested under four eyes waits for a second person even with the requester's
// run_everything policy, and switching four eyes off afterwards does not let the requester
// approve it (issue 18 finding 1).
func TestFourEyesAtRequestTimeOutlivesTheWorkspaceSwitchingItOff(t *testing.T) {
	f := &loopFakes{policy: string(tools.RunEverything), fourEyes: true,
		steps: []TurnResult{{ToolCalls: []ToolCall{call("w1", tools.SaveNote, finalNote), call("r1", tools.ListNotes, `{}`)}}, {}}}
	env := newLoopEnv(f)
	sendAt(env, time.Second, "save it")
	var st State
	stateAt(env, 30*time.Second, &st)
	var own, bob updateResult
	// The admin switched four eyes off (the API sends the rule as it is now) and approves her own write.
	approveAs(env, time.Minute, &own, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "alice",
		DeciderIsAdmin: true, AdminsMayApprove: true})
	approveAs(env, 2*time.Minute, &bob, ApproveRequest{Decisions: []Decision{{ToolCallID: "w1", Approved: true}}, DecidedBy: "bob"})
	run(env, ConversationInput{})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, st.PendingApprovals, 1, "the read ran, the write waits")
	assert.Equal(t, "w1", st.PendingApprovals[0].ToolCallID)
	assert.True(t, st.PendingApprovals[0].FourEyes)
	needed, _ := eventOf[frames.ApprovalNeeded](f)
	assert.True(t, needed.FourEyes)
	require.ErrorContains(t, own.err, "four eyes")
	require.NoError(t, bob.err)
	assert.Equal(t, []string{"r1", "w1"}, f.ran)
	assert.Equal(t, "bob", f.deciders["w1"])
}
