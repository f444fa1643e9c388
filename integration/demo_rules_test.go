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
	"github.com/sapagent/sapagent/internal/tools"
)

// The demo rules must produce calls the product's tools accept.
func TestDemoRulesCallTheBuiltinToolsWithValidArguments(t *testing.T) {
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
		"save a note titled Close: post accruals": tools.SaveNote,
		"draft a note titled Idea: check GR/IR":   tools.SaveNote,
		"list my notes":                           tools.ListNotes,
		"export my notes":                         tools.ExportNote,
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
		_, err = def.ParseArguments(args)
		assert.NoError(t, err, msg)
	}
}
