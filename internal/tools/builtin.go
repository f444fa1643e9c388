package tools

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

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
			Run: func(ctx context.Context, env Env, args map[string]any) (any, error) {
				limit := 20
				if l, ok := args["limit"].(json.Number); ok {
					if n, err := l.Int64(); err == nil {
						limit = int(n)
					}
				}
				notes, err := env.Notes().List(ctx, limit)
				if err != nil {
					return nil, err
				}
				return map[string]any{"notes": notes}, nil
			},
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
			Run: func(ctx context.Context, env Env, args map[string]any) (any, error) {
				n := Note{}
				n.Title, _ = args["title"].(string)
				n.Body, _ = args["body"].(string)
				n.Draft, _ = args["draft"].(bool)
				n, err := env.Notes().Save(ctx, n)
				if err != nil {
					return nil, err
				}
				return map[string]any{"id": n.ID, "title": n.Title, "draft": n.Draft}, nil
			},
		},
		{
			Name:              ExportNote,
			Description:       "Export this conversation's notes as CSV. The user reviews the export before you see it.",
			Parameters:        `{"type":"object","additionalProperties":false,"properties":{}}`,
			ReturnDescription: `{"csv": str, "rows": int}`,
			DirectCallAllowed: true,
			ModeFor:           func(map[string]any) Mode { return ConfirmAfter },
			Run: func(ctx context.Context, env Env, _ map[string]any) (any, error) {
				notes, err := env.Notes().List(ctx, 1000)
				if err != nil {
					return nil, err
				}
				var b strings.Builder
				w := csv.NewWriter(&b)
				_ = w.Write([]string{"title", "body", "draft", "created_at"})
				for _, n := range notes {
					_ = w.Write([]string{n.Title, n.Body, fmt.Sprint(n.Draft), n.CreatedAt.Format(time.RFC3339)})
				}
				w.Flush()
				return map[string]any{"csv": b.String(), "rows": len(notes)}, nil
			},
		},
	}
}

// WithExecuteCode builds a registry of defs plus execute_code, whose helpers are the
// execute-code-allowed tools among defs.
func WithExecuteCode(defs ...Definition) (*Registry, error) {
	var reg *Registry
	all := append(slices.Clone(defs), executeCode(func() []script.Helper { return reg.Helpers() }))
	var err error
	reg, err = NewRegistry(all...)
	return reg, err
}

// Default is the registry every conversation uses. It is built once: compiling the schemas is
// not free, and the workflow, the model and tool activities all consult it per step.
var Default = sync.OnceValue(func() *Registry {
	reg, err := WithExecuteCode(slices.Concat(Builtin(), SAP(), Cross())...)
	if err != nil {
		panic(err) // the built-in definitions are constants
	}
	return reg
})
