package tools

import (
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
	assert.Equal(t, []string{ExportNote, ListNotes, SaveNote}, r.Names())
	_, err := NewRegistry(Definition{Name: "bad", Parameters: `{"type": 5}`})
	assert.Error(t, err)
}
