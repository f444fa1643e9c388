package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/tools"
)

// A script helper call is checked on its actual arguments where it runs: a write the script did
// not show needs a person's approval, and with four eyes someone other than the requester's
// (issue 18 findings 1 and 7).
func TestHelperWritesNeedTheScriptsApproval(t *testing.T) {
	rfc, ok := tools.Default().Get(tools.SAPExecuteRFC)
	require.True(t, ok)
	read := map[string]any{"function": "BAPI_CUSTOMER_GETDETAIL2"}
	commit := map[string]any{"function": "BAPI_CUSTOMER_GETDETAIL2", "commit": true}
	reserve := map[string]any{"function": "BAPI_MATERIAL_GETINTNUMBER"}

	hidden := approval{requester: "alice"} // a script classified as read-only, run without asking
	assert.NoError(t, helperMayRun(hidden, rfc, read))
	assert.ErrorContains(t, helperMayRun(hidden, rfc, commit), "the script did not show it as a write")
	assert.ErrorContains(t, helperMayRun(hidden, rfc, reserve), "nothing was sent to SAP")

	declared := approval{requester: "alice", declaredWrite: true} // a write script run under run_everything
	assert.NoError(t, helperMayRun(declared, rfc, commit))
	approved := approval{requester: "alice", decidedBy: "alice"} // a person approved the script
	assert.NoError(t, helperMayRun(approved, rfc, commit))

	for _, g := range []approval{
		{requester: "alice", declaredWrite: true, fourEyes: true},
		{requester: "alice", decidedBy: "alice", declaredWrite: true, fourEyes: true},
	} {
		assert.ErrorContains(t, helperMayRun(g, rfc, commit), "four eyes", "%+v", g)
		assert.NoError(t, helperMayRun(g, rfc, read), "reads run")
	}
	assert.NoError(t, helperMayRun(approval{requester: "alice", decidedBy: "bob", fourEyes: true}, rfc, commit))

	assert.ErrorContains(t, fourEyesRefusal(approval{requester: "alice", fourEyes: true}, "save_note"), "no one approved it")
	assert.ErrorContains(t, fourEyesRefusal(approval{requester: "alice", decidedBy: "alice", fourEyes: true}, "save_note"), "only by its requester")
	assert.NoError(t, fourEyesRefusal(approval{requester: "alice", decidedBy: "bob", fourEyes: true}, "save_note"))
	assert.NoError(t, fourEyesRefusal(approval{requester: "alice"}, "save_note"))
}
