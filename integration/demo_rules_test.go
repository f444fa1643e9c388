package integration

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
	"github.com/sapagent/sapagent/internal/script"
	"github.com/sapagent/sapagent/internal/tools"
)

// The demo rules must produce calls the product's tools accept.
func TestDemoRulesCallTheToolsWithValidArguments(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(offlinellm.New(offlinellm.Options{Rules: devstack.DemoRules()}).Handler())
	defer srv.Close()
	cfg := openai.DefaultConfig("x")
	cfg.BaseURL = srv.URL + "/v1"
	c := openai.NewClientWithConfig(cfg)
	reg := tools.Default()
	var offered []openai.Tool
	for _, n := range reg.Names() {
		offered = append(offered, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: n}})
	}
	for msg, want := range map[string]string{
		"save a note titled Close: post accruals":        tools.SaveNote,
		"draft a note titled Idea: check GR/IR":          tools.SaveNote,
		"list my notes":                                  tools.ListNotes,
		"export my notes":                                tools.ExportNote,
		"show the schema of table MARA":                  tools.ExecuteCode,
		"read 5 rows from table KNA1 where LAND1 = 'DE'": tools.ExecuteCode,
		"rename material 000000000000000001 to Bolt M8":  tools.ExecuteCode,
		"map table KNA1 from ECC to S4":                  tools.GenerateFieldMapping,
		"dry run customers from ECC to S4":               tools.ExtractTransformLoad,
		"load customers from ECC to S4":                  tools.ExtractTransformLoad,
		"reconcile customers from ECC to S4":             tools.ReconcileMigration,
	} {
		st, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "m", Tools: offered,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: msg}}})
		require.NoError(t, err)
		name, args := "", ""
		for {
			ch, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			for _, tc := range ch.Choices[0].Delta.ToolCalls {
				if tc.Function.Name != "" {
					name = tc.Function.Name
				}
				args += tc.Function.Arguments
			}
		}
		st.Close()
		assert.Equal(t, want, name, msg)
		def, _ := reg.Get(name)
		parsed, err := def.ParseArguments(args)
		assert.NoError(t, err, msg)
		if name == tools.ExecuteCode {
			_, err := script.Referenced(parsed["code"].(string), nil)
			assert.NoError(t, err, "the demo script of %q parses", msg)
		}
	}
}
