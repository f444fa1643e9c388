package script

import (
	"fmt"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The json module's encoder and decoder recurse once per nesting level (and the encoder
// compares each value with every enclosing one), so `json.decode("[" * 2000000 + "]" * 2000000)`
// overflows the Go stack, which no recover() can catch. The script's json module checks the
// nesting first and then calls the library.
const (
	// maxJSONDepth bounds the nesting json.* accepts (Python's own default is about 1,000).
	maxJSONDepth = 1000
	// maxJSONNodes bounds the values json.encode visits, so a list that repeats itself
	// ([a, a] sixty levels deep) fails at once instead of printing 2^60 elements.
	maxJSONNodes = 1 << 24
)

var jsonModule = &starlarkstruct.Module{
	Name: "json",
	Members: starlark.StringDict{
		"encode":        jsonGuard("encode", encodeDepthOK),
		"encode_indent": jsonGuard("encode_indent", encodeDepthOK),
		"decode":        jsonGuard("decode", decodeDepthOK),
		"indent":        jsonGuard("indent", decodeDepthOK),
	},
}

// jsonGuard wraps the library's json.<name>: check(first positional argument) runs first.
func jsonGuard(name string, check func(starlark.Value) error) *starlark.Builtin {
	lib := starjson.Module.Members[name].(*starlark.Builtin)
	return starlark.NewBuiltin(lib.Name(), func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			if err := check(args[0]); err != nil {
				return nil, fmt.Errorf("%s: %v", lib.Name(), err)
			}
		}
		return lib.CallInternal(thread, args, kwargs)
	})
}

// decodeDepthOK scans JSON text for brackets nested deeper than maxJSONDepth (brackets inside
// strings do not count). Malformed text is left to the decoder to report.
func decodeDepthOK(v starlark.Value) error {
	s, ok := starlark.AsString(v)
	if !ok {
		return nil
	}
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > maxJSONDepth {
				return fmt.Errorf("the JSON is nested more than %d levels deep", maxJSONDepth)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// encodeDepthOK walks a value before it is encoded: at most maxJSONDepth levels (which also
// stops a list that contains itself) and maxJSONNodes values.
func encodeDepthOK(v starlark.Value) error {
	nodes := 0
	var walk func(v starlark.Value, depth int) error
	walk = func(v starlark.Value, depth int) error {
		if depth > maxJSONDepth {
			return fmt.Errorf("the value is nested more than %d levels deep (or contains itself)", maxJSONDepth)
		}
		if nodes++; nodes > maxJSONNodes {
			return fmt.Errorf("the value has more than %d elements (counting repeats)", maxJSONNodes)
		}
		switch v := v.(type) {
		case *starlark.List, starlark.Tuple:
			seq := v.(starlark.Indexable)
			for i := range seq.Len() {
				if err := walk(seq.Index(i), depth+1); err != nil {
					return err
				}
			}
		case *starlark.Dict:
			for _, item := range v.Items() {
				if err := walk(item[1], depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v, 0)
}
