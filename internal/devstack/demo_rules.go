package devstack

import "github.com/sapagent/sapagent/internal/offlinellm"

// DemoRules script the offline model for `make dev` (when OFFLINE_LLM_RULES is not set) so the
// tool loop can be tried without a hosted model:
//
//	save a note titled <Title>: <text>   → save_note (asks for approval)
//	draft a note titled <Title>: <text>  → save_note with draft=true (runs at once)
//	list my notes                        → list_notes
//	export my notes                      → export_notes (runs, then asks before the model sees it)
//	think about <anything>               → streams reasoning first
func DemoRules() []offlinellm.Rule {
	return []offlinellm.Rule{
		{Name: "save", Match: `(?i)^save a note titled (.+?): (.+)$`, Reply: "I'll save that note.",
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"$1","body":"$2"}`}}},
		{Name: "draft", Match: `(?i)^draft a note titled (.+?): (.+)$`,
			ToolCalls: []offlinellm.ToolCallRule{{Name: "save_note", Arguments: `{"title":"$1","body":"$2","draft":true}`}}},
		{Name: "list", Match: `(?i)^list my notes`, ToolCalls: []offlinellm.ToolCallRule{{Name: "list_notes", Arguments: `{}`}}},
		{Name: "export", Match: `(?i)^export my notes`, ToolCalls: []offlinellm.ToolCallRule{{Name: "export_notes", Arguments: `{}`}}},
		{Name: "think", Match: `(?i)^think about (.+)$`, Reasoning: "Let me think about $1 step by step before answering.",
			Reply: "Here is what I concluded about $1."},
	}
}
