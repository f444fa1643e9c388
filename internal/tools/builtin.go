package tools

import (
	"sync"

	"github.com/sapagent/sapagent/internal/script"
)

// The built-in tools work on the conversation's notes: a small, real capability that exercises
// every execution mode before the SAP tools arrive.
const (
	ListNotes  = "list_notes"
	SaveNote   = "save_note"
	ExportNote = "export_notes"
)

// Builtin returns the built-in tool definitions.
func Builtin() []Definition {
	return []Definition{
		{
			Name:              ListNotes,
			Description:       "List the notes saved in this conversation (newest first).",
			Parameters:        `{"type":"object","additionalProperties":false,"properties":{"limit":{"type":"integer","minimum":1,"maximum":100}}}`,
			ReturnDescription: `{"notes": [{"id": str, "title": str, "body": str, "draft": bool, "created_at": str}]}`,
			DirectCallAllowed: true,
		},
		{
			Name:        SaveNote,
			Description: "Save a note in this conversation. Final notes need the user's approval; drafts (draft=true) are saved at once.",
			Parameters: `{"type":"object","additionalProperties":false,"required":["title","body"],"properties":{
				"title":{"type":"string","minLength":1,"maxLength":200},
				"body":{"type":"string","minLength":1,"maxLength":10000},
				"draft":{"type":"boolean"}}}`,
			ReturnDescription: `{"id": str, "title": str, "draft": bool}`,
			NeedsApproval:     true,
			DirectCallAllowed: true,
			ModeFor: func(args map[string]any) Mode {
				if draft, _ := args["draft"].(bool); draft {
					return Auto
				}
				return ConfirmBefore
			},
		},
		{
			Name:              ExportNote,
			Description:       "Export this conversation's notes as CSV. The user reviews the export before you see it.",
			Parameters:        `{"type":"object","additionalProperties":false,"properties":{}}`,
			ReturnDescription: `{"csv": str, "rows": int}`,
			DirectCallAllowed: true,
			ModeFor:           func(map[string]any) Mode { return ConfirmAfter },
		},
	}
}

// Default is the registry every conversation uses today. It is built once: compiling the
// schemas is not free, and the workflow, the model and tool activities all consult it per step.
var Default = sync.OnceValue(func() *Registry {
	var reg *Registry
	defs := append(Builtin(), SAP()...)
	defs = append(defs, Cross()...)
	defs = append(defs, executeCode(func() []script.Helper { return reg.Helpers() }))
	reg, err := NewRegistry(defs...)
	if err != nil {
		panic(err) // the built-in schemas are constants
	}
	return reg
})
