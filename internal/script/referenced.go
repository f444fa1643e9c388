package script

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/syntax"
)

// Parse parses a script in the sandbox's dialect without running it, for analyses outside this
// package (such as which functions a script calls). Syntax errors carry their line and column.
func Parse(code string) (*syntax.File, error) {
	f, err := fileOptions.Parse(filename, code, 0)
	if err != nil {
		var se syntax.Error
		if errors.As(err, &se) {
			return nil, syntaxError(se, strings.Split(code, "\n"))
		}
		return nil, fmt.Errorf("syntax error: %v", err)
	}
	return f, nil
}

// Referenced parses code (without running it) and returns the names of known helpers it
// references, sorted and deduplicated. Any use of the name counts — a call, an alias such as
// `f = sap_write`, a reference inside a function, lambda or comprehension — because a script can
// reach a helper only through its name; names inside strings and comments do not. It is pure
// and deterministic (workflows call it to decide whether approval is needed). A syntax error is
// returned as an error with its line:col.
func Referenced(code string, helpers []string) (names []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			names, err = nil, fmt.Errorf("the script could not be analysed (internal error: %v)", p)
		}
	}()
	f, err := Parse(code)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(helpers))
	for _, h := range helpers {
		known[h] = true
	}
	found := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && known[id.Name] {
			found[id.Name] = true
		}
		return true
	})
	names = make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// NeedsApproval reports whether the code references a helper that Writes.
func NeedsApproval(code string, helpers []Helper) (bool, error) {
	names := make([]string, len(helpers))
	writes := make(map[string]bool, len(helpers))
	for i, h := range helpers {
		names[i] = h.Name
		writes[h.Name] = writes[h.Name] || h.Writes
	}
	refs, err := Referenced(code, names)
	if err != nil {
		return false, err
	}
	for _, name := range refs {
		if writes[name] {
			return true, nil
		}
	}
	return false, nil
}
