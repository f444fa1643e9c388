package tools

import (
	"context"
	"sort"

	"go.starlark.net/syntax"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/script"
)

// ExecuteCode runs a Starlark script whose functions are the execute-code-allowed tools
// (seed 000: SAP tools are reached through it by default).
const ExecuteCode = "execute_code"

// Helpers lists the registry's execute-code-allowed tools as script helpers, in name order.
func (r *Registry) Helpers() []script.Helper {
	var out []script.Helper
	for _, name := range r.names {
		d := r.byName[name]
		if !d.ExecuteCodeAllowed {
			continue
		}
		out = append(out, script.Helper{Name: d.Name, Description: d.Description, Parameters: d.Parameters,
			ReturnDescription: d.ReturnDescription, Writes: d.NeedsApproval})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// executeCode's mode is computed from the script: it asks for approval only when the script
// references a helper that writes. A script that does not parse runs (and fails with its
// syntax error, which the model can fix) without bothering the user.
func executeCode(helpers func() []script.Helper) Definition {
	return Definition{
		Name: ExecuteCode,
		Description: "Run a short Python-dialect (Starlark) script whose functions are SAP helpers; use it to look up, read, " +
			"combine and summarise SAP data in one step. print() output and the value of a global `result` are returned.",
		Parameters: `{"type":"object","additionalProperties":false,"required":["code"],"properties":{
			"code":{"type":"string","minLength":1,"maxLength":20000,"description":"the script"},
			"purpose":{"type":"string","maxLength":300,"description":"one line saying what the script does (shown to the user)"}}}`,
		ReturnDescription: `{"output": str, "result": any, "calls": [{"helper": str, "ms": int, "error": str}]}`,
		DirectCallAllowed: true,
		Connections:       1, // its helpers are the SAP tools
		HelperDocs:        true,
		Run: func(ctx context.Context, env Env, args map[string]any) (any, error) {
			code, _ := args["code"].(string)
			return env.Script(ctx, code)
		},
		ModeFor: func(args map[string]any) Mode {
			code, _ := args["code"].(string)
			hs := helpers()
			for i := range hs {
				// sap_execute_rfc writes only for some functions: a script whose every call
				// names a known read function (as a string literal) does not need approval.
				if hs[i].Name == SAPExecuteRFC && onlyReadRFCs(code) {
					hs[i].Writes = false
				}
			}
			writes, err := script.NeedsApproval(code, hs)
			if err != nil || !writes {
				return Auto
			}
			return ConfirmBefore
		},
	}
}

// onlyReadRFCs reports whether every use of sap_execute_rfc in code is a direct call with a
// literal function= naming a known read, without commit. Any other use (an alias, a computed
// function name, a commit) counts as a possible write. Parsing is pure, so workflows may call it.
func onlyReadRFCs(code string) bool {
	f, err := script.Parse(code)
	if err != nil {
		return false
	}
	calls, uses := 0, 0
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Ident:
			if n.Name == SAPExecuteRFC {
				uses++
			}
		case *syntax.CallExpr:
			id, isIdent := n.Fn.(*syntax.Ident)
			if !isIdent || id.Name != SAPExecuteRFC {
				return true
			}
			calls++
			fn := ""
			for _, arg := range n.Args {
				bin, isKw := arg.(*syntax.BinaryExpr)
				if !isKw || bin.Op != syntax.EQ {
					continue
				}
				key, _ := bin.X.(*syntax.Ident)
				if key == nil {
					continue
				}
				switch key.Name {
				case "function":
					if lit, isLit := bin.Y.(*syntax.Literal); isLit {
						fn, _ = lit.Value.(string)
					}
				case "commit":
					if v, isIdent := bin.Y.(*syntax.Ident); !isIdent || v.Name != "False" {
						ok = false
					}
				}
			}
			if fn == "" || sap.RFCWrites(fn) {
				ok = false
			}
		}
		return true
	})
	return ok && calls == uses
}
