package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArgumentsAreValidatedWithMessagesTheModelCanUse(t *testing.T) {
	r := Default()
	save, ok := r.Get(SaveNote)
	require.True(t, ok)
	args, err := save.ParseArguments(`{"title":"Close","body":"Post accruals"}`)
	require.NoError(t, err)
	assert.Equal(t, "Close", args["title"])

	for raw, want := range map[string]string{
		`{"title":"x"}`:                          "body",
		`{"title":"","body":"b"}`:                "/title",
		`{"title":"t","body":"b","extra":1}`:     "extra",
		`{"title":"t","body":"b","draft":"yes"}`: "/draft",
		`not json`:                               "not valid JSON",
		`[1,2]`:                                  "schema",
	} {
		_, err := save.ParseArguments(raw)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
	}
	list, _ := r.Get(ListNotes)
	_, err = list.ParseArguments("")
	assert.NoError(t, err, "no arguments means {}")
}

func TestPolicyDecisions(t *testing.T) {
	r := Default()
	list, _ := r.Get(ListNotes)
	save, _ := r.Get(SaveNote)
	export, _ := r.Get(ExportNote)
	final := map[string]any{"title": "t", "body": "b"}
	draft := map[string]any{"title": "t", "body": "b", "draft": true}
	cases := []struct {
		def    *Definition
		args   map[string]any
		policy Policy
		want   Mode
	}{
		{list, nil, ReadsOnly, Auto},
		{save, final, ReadsOnly, ConfirmBefore},
		{save, draft, ReadsOnly, Auto},
		{export, nil, ReadsOnly, ConfirmAfter},
		{list, nil, AskEveryTime, ConfirmBefore},
		{save, draft, AskEveryTime, ConfirmBefore},
		{export, nil, AskEveryTime, ConfirmAfter},
		{save, final, RunEverything, Auto},
		{export, nil, RunEverything, Auto},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Decide(tc.def, tc.args, tc.policy), "%s %v %s", tc.def.Name, tc.args, tc.policy)
	}
	assert.Equal(t, []string{ExecuteCode, ExportNote, ExtractTransformLoad, GenerateFieldMapping, ListNotes, PreviewDataTransform, ReconcileMigration,
		SAPExecuteRFC, SAPGetFunctionInterface, SAPGetSource, SAPGetSystemInfo, SAPGetTableSchema, SAPListCustomObjects, SAPReadTable, SAPSearchIndex,
		SAPWhereUsed, SaveNote, SuggestTransforms, ValidateMigration}, r.Names())
	for _, name := range r.Names() {
		d, _ := r.Get(name)
		isSAP := strings.HasPrefix(name, "sap_")
		assert.Equal(t, isSAP, d.ExecuteCodeAllowed, "%s: SAP tools, and only they, are execute_code helpers", name)
		assert.Equal(t, !isSAP, d.DirectCallAllowed, "%s: SAP tools are not offered directly by default", name)
	}
	_, err := NewRegistry(Definition{Name: "bad", Parameters: `{"type": 5}`})
	assert.Error(t, err)
}

func TestExecuteCodeAsksOnlyWhenTheScriptMayWrite(t *testing.T) {
	def, ok := Default().Get(ExecuteCode)
	require.True(t, ok)
	for code, want := range map[string]Mode{
		`r = sap_read_table(table="KNA1")`:                                                    Auto,
		`s = sap_get_table_schema(table="MARA")` + "\n" + `print(s)`:                          Auto,
		`r = sap_execute_rfc(function="BAPI_MATERIAL_GET_DETAIL", imports={"MATERIAL": "1"})`: Auto,
		`r = sap_execute_rfc(function="RFC_READ_TABLE", commit=False)`:                        Auto,
		`r = sap_execute_rfc(function="BAPI_MATERIAL_SAVEDATA", imports={}, commit=True)`:     ConfirmBefore,
		`r = sap_execute_rfc(function="BAPI_CUSTOMER_GETDETAIL2", commit=True)`:               ConfirmBefore,
		`fn = "BAPI_MATERIAL_GET_DETAIL"` + "\n" + `sap_execute_rfc(function=fn)`:             ConfirmBefore,
		`f = sap_execute_rfc` + "\n" + `f(function="RFC_READ_TABLE")`:                         ConfirmBefore,
		`r = sap_execute_rfc(function="Z_UNKNOWN_FM")`:                                        ConfirmBefore,
		`print("sap_execute_rfc(function='BAPI_MATERIAL_SAVEDATA')")`:                         Auto,
		"def (": Auto, // fails when it runs
	} {
		assert.Equal(t, want, Decide(def, map[string]any{"code": code}, ReadsOnly), code)
	}
	assert.Equal(t, ConfirmBefore, Decide(def, map[string]any{"code": `sap_read_table(table="A")`}, AskEveryTime))
}

func TestRFCModeFollowsTheFunction(t *testing.T) {
	def, _ := Default().Get(SAPExecuteRFC)
	for args, want := range map[string]Mode{
		`{"function":"BAPI_MATERIAL_GET_DETAIL"}`:                             Auto,
		`{"function":"bapi_salesorder_getlist"}`:                              Auto,
		`{"function":"BAPI_MATERIAL_SAVEDATA"}`:                               ConfirmBefore,
		`{"function":"BAPI_MATERIAL_SAVEDATA","test_run":true}`:               Auto,
		`{"function":"BAPI_MATERIAL_SAVEDATA","test_run":true,"commit":true}`: ConfirmBefore,
		`{"function":"BAPI_TRANSACTION_COMMIT"}`:                              ConfirmBefore,
		`{"function":"Z_CALC_BONUS"}`:                                         ConfirmBefore,
	} {
		parsed, err := def.ParseArguments(args)
		require.NoError(t, err, args)
		assert.Equal(t, want, Decide(def, parsed, ReadsOnly), args)
	}
}

// A NUL character in any argument makes the call invalid, with the place named: nothing can be
// done with it, and Postgres stores no NUL wherever the call would be recorded.
func TestArgumentsWithNULAreRefused(t *testing.T) {
	r := Default()
	save, _ := r.Get(SaveNote)
	for raw, want := range map[string]string{
		`{"title":"a\u0000","body":"b"}`:       "at /title",
		`{"title":"a","body":"b","x\u0000":1}`: "at /x\\u0000",
	} {
		_, err := save.ParseArguments(raw)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), "NUL character", raw)
		assert.Contains(t, err.Error(), want, raw)
		assert.NotContains(t, err.Error(), "\x00", "the message itself is storable")
	}
	mode, invalid := r.Classify(SaveNote, `{"title":"\u0000","body":"b"}`, AskEveryTime)
	assert.Empty(t, mode)
	assert.Contains(t, invalid, "NUL")
	// The text \u0000 (an escaped backslash) is no NUL.
	_, err := save.ParseArguments(`{"title":"\\u0000","body":"b"}`)
	assert.NoError(t, err)
}
