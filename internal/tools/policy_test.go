package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A workspace's maximum bounds every member's policy: the effective one is whichever lets less
// run without asking (issue 18 finding 1).
func TestWorkspaceMaximumBoundsTheMembersPolicy(t *testing.T) {
	for _, c := range []struct{ chosen, max, want Policy }{
		{RunEverything, RunEverything, RunEverything},
		{RunEverything, ReadsOnly, ReadsOnly},
		{RunEverything, AskEveryTime, AskEveryTime},
		{ReadsOnly, RunEverything, ReadsOnly},
		{ReadsOnly, AskEveryTime, AskEveryTime},
		{AskEveryTime, RunEverything, AskEveryTime},
		{"", RunEverything, ReadsOnly},        // unknown choice: the default
		{RunEverything, "bogus", ReadsOnly},   // unknown bound: never "no bound"
		{AskEveryTime, "bogus", AskEveryTime}, // …and never looser than the choice
	} {
		assert.Equal(t, c.want, EffectivePolicy(c.chosen, c.max), "%s bounded by %s", c.chosen, c.max)
	}
}

// With four eyes a write asks whatever the member's policy; reads still follow the policy.
func TestFourEyesMakesEveryWriteAskWhateverThePolicy(t *testing.T) {
	r := Default()
	save, _ := r.Get(SaveNote)
	list, _ := r.Get(ListNotes)
	code, _ := r.Get(ExecuteCode)
	rfc, _ := r.Get(SAPExecuteRFC)
	writeScript := map[string]any{"code": `sap_execute_rfc(function="BAPI_MATERIAL_SAVEDATA", imports={}, commit=True)`}
	readScript := map[string]any{"code": `sap_read_table(table="T000")`}
	for _, p := range []Policy{AskEveryTime, ReadsOnly, RunEverything} {
		four := Rule{Policy: p, FourEyes: true}
		assert.Equal(t, ConfirmBefore, four.Mode(save, nil), p)
		assert.Equal(t, ConfirmBefore, four.Mode(code, writeScript), p)
		assert.Equal(t, ConfirmBefore, four.Mode(rfc, map[string]any{"function": "BAPI_MATERIAL_GETINTNUMBER"}), p)
		assert.Equal(t, Decide(list, nil, p), four.Mode(list, nil), "reads follow the policy: %s", p)
		assert.Equal(t, Decide(code, readScript, p), four.Mode(code, readScript), p)
	}
	assert.Equal(t, Auto, Rule{Policy: RunEverything}.Mode(save, nil), "without four eyes run_everything runs writes")
	assert.Equal(t, Auto, Rule{Policy: RunEverything, FourEyes: true}.Mode(list, nil))

	mode, invalid := r.ClassifyUnder(SaveNote, `{"title":"t","body":"b"}`, Rule{Policy: RunEverything, FourEyes: true})
	require.Empty(t, invalid)
	assert.Equal(t, ConfirmBefore, mode)
	mode, _ = r.Classify(SaveNote, `{"title":"t","body":"b"}`, RunEverything)
	assert.Equal(t, Auto, mode)
}

// Function modules are classified by what they are known to do, not by their names: only the
// listed reads run unasked (issue 18 finding 7).
func TestFunctionModulesAreWritesUnlessKnownToRead(t *testing.T) {
	def, _ := Default().Get(SAPExecuteRFC)
	for args, want := range map[string]Mode{
		`{"function":"BAPI_MATERIAL_GETINTNUMBER"}`:                    ConfirmBefore, // reserves material numbers
		`{"function":"BAPI_SALESORDER_GETNEXTNUMBER"}`:                 ConfirmBefore,
		`{"function":"BAPI_SOMETHING_GETDETAIL"}`:                      ConfirmBefore, // unknown, whatever its name
		`{"function":"BAPI_MATERIAL_EXISTENCECHECK"}`:                  Auto,
		`{"function":"BAPI_COMPANYCODE_GETLIST"}`:                      Auto,
		`{"function":"RFC_READ_TABLE"}`:                                Auto,
		`{"function":"DDIF_FIELDINFO_GET"}`:                            Auto,
		`{"function":"rfc_get_function_interface"}`:                    Auto,
		`{"function":"RFC_READ_TABLE","commit":true}`:                  ConfirmBefore, // a commit always asks
		`{"function":"BAPI_CUSTOMER_CHANGEFROMDATA1","test_run":true}`: Auto,          // a test run saves nothing
		`{"function":"BAPI_MATERIAL_GETINTNUMBER","test_run":true}`:    ConfirmBefore, // not a BAPI with a test run
		`{"function":"BAPI_TRANSACTION_COMMIT","test_run":true}`:       ConfirmBefore,
	} {
		parsed, err := def.ParseArguments(args)
		require.NoError(t, err, args)
		assert.Equal(t, want, Decide(def, parsed, ReadsOnly), args)
	}

	code, _ := Default().Get(ExecuteCode)
	assert.Equal(t, ConfirmBefore, Decide(code, map[string]any{"code": `r = sap_execute_rfc(function="BAPI_MATERIAL_GETINTNUMBER", imports={})`}, ReadsOnly),
		"a script calling it asks too")
}
