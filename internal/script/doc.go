package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// param is one keyword parameter of a helper, read from its JSON schema.
type param struct {
	Name     string
	Required bool
	Schema   propSchema
}

// propSchema is the part of a property's JSON schema that the documentation shows.
type propSchema struct {
	Type        any             `json:"type"`
	Enum        []any           `json:"enum"`
	Items       *propSchema     `json:"items"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
}

// parseParams reads a helper's parameters: required ones first, each group in the schema's
// property order. strict is false when the schema cannot be read, declares no properties or
// allows additional ones: then any keyword is accepted.
func parseParams(schema string) (params []param, strict bool) {
	if strings.TrimSpace(schema) == "" {
		return nil, false
	}
	var top struct {
		Properties           json.RawMessage `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if json.Unmarshal([]byte(schema), &top) != nil {
		return nil, false
	}
	// Keywords are checked against the declared properties unless the schema declares none or
	// explicitly allows others.
	lax := len(top.Properties) == 0 ||
		(len(top.AdditionalProperties) > 0 && string(bytes.TrimSpace(top.AdditionalProperties)) != "false")
	names, props, ok := orderedProperties(top.Properties)
	if !ok {
		return nil, false
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
		if _, seen := props[r]; !seen {
			names = append(names, r)
			props[r] = propSchema{}
		}
	}
	for _, req := range []bool{true, false} {
		for _, n := range names {
			if required[n] == req {
				params = append(params, param{Name: n, Required: req, Schema: props[n]})
			}
		}
	}
	return params, !lax
}

// orderedProperties decodes a "properties" object keeping its key order.
func orderedProperties(raw json.RawMessage) ([]string, map[string]propSchema, bool) {
	props := map[string]propSchema{}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, props, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		name, _ := t.(string)
		var rawProp json.RawMessage
		if dec.Decode(&rawProp) != nil {
			return nil, nil, false
		}
		// A property schema that is not an object (e.g. `true`) still names a parameter.
		var p propSchema
		_ = json.Unmarshal(rawProp, &p)
		if _, dup := props[name]; !dup {
			names = append(names, name)
		}
		props[name] = p
	}
	return names, props, true
}

// paramNames lists a helper's parameter names (required first); strict as in parseParams.
func paramNames(schema string) ([]string, bool) {
	params, ok := parseParams(schema)
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return names, ok
}

var jsonTypes = map[string]string{
	"string": "str", "integer": "int", "number": "float", "boolean": "bool",
	"array": "list", "object": "dict", "null": "None",
}

// typeName renders a property schema as a Python-style type.
func typeName(p propSchema, depth int) string {
	if len(p.Enum) > 0 && len(p.Enum) <= 12 {
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			vals[i] = literal(e)
		}
		return strings.Join(vals, " | ")
	}
	var types []string
	switch t := p.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return "any"
	}
	out := make([]string, len(types))
	for i, t := range types {
		name, ok := jsonTypes[t]
		if !ok {
			name = t
		}
		if t == "array" && p.Items != nil && depth < 3 {
			name = "list[" + typeName(*p.Items, depth+1) + "]"
		}
		out[i] = name
	}
	return strings.Join(out, " | ")
}

// literal renders a JSON value as a Starlark literal.
func literal(v any) string {
	sv, err := toStarlark(v, 0)
	if err != nil {
		return fmt.Sprint(v)
	}
	return sv.String()
}

func defaultLiteral(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "None"
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "None"
	}
	return literal(v)
}

// Signature renders a helper's call signature, e.g.
// `sap_read_table(table: str, row_count: int = None) -> {"rows": [dict]}`.
func signature(h Helper) string {
	params, strict := parseParams(h.Parameters)
	args := make([]string, len(params), len(params)+1)
	for i, p := range params {
		args[i] = p.Name + ": " + typeName(p.Schema, 0)
		if !p.Required {
			args[i] += " = " + defaultLiteral(p.Schema.Default)
		}
	}
	if !strict {
		args = append(args, "**kwargs")
	}
	sig := h.Name + "(" + strings.Join(args, ", ") + ")"
	if ret := shortReturn(h); ret != "" {
		sig += " -> " + ret
	}
	return sig
}

// shortReturn is the return shape when it fits in a signature (one short line), else "".
func shortReturn(h Helper) string {
	ret := strings.TrimSpace(h.ReturnDescription)
	if strings.ContainsRune(ret, '\n') || len(ret) > 120 {
		return ""
	}
	return ret
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Documentation renders the helpers for the execute_code tool description: each helper's
// signature (keyword parameters with types, required first), description, parameter notes and
// return shape, then the sandbox rules and limits.
func Documentation(helpers []Helper, limits Limits) string {
	limits = limits.WithDefaults()
	var b strings.Builder
	b.WriteString("Runs a short script in a sandbox. The language is Starlark, a small dialect of Python. " +
		"The script's only capabilities are the helper functions below (each one is one of your tools) " +
		"plus the json module (json.encode, json.decode, json.indent) and the math module.\n")
	if len(helpers) == 0 {
		b.WriteString("\nNo helpers are available.\n")
	} else {
		b.WriteString("\nHelpers (call them with keyword arguments only, e.g. name(arg=value); dicts they return have sorted keys):\n")
	}
	for _, h := range helpers {
		fmt.Fprintf(&b, "\n%s\n", signature(h))
		if d := strings.TrimSpace(h.Description); d != "" {
			for _, line := range strings.Split(d, "\n") {
				fmt.Fprintf(&b, "    %s\n", strings.TrimSpace(line))
			}
		}
		params, _ := parseParams(h.Parameters)
		for _, p := range params {
			if d := oneLine(p.Schema.Description); d != "" {
				req := ""
				if p.Required {
					req = " (required)"
				}
				fmt.Fprintf(&b, "    %s%s: %s\n", p.Name, req, d)
			}
		}
		if ret := oneLine(h.ReturnDescription); ret != "" && shortReturn(h) == "" {
			fmt.Fprintf(&b, "    Returns %s\n", ret)
		}
		if h.Writes {
			b.WriteString("    Changes data: a script that mentions this helper runs only after the user approves it.\n")
		}
	}
	fmt.Fprintf(&b, `
Rules:
- Use print() for what you want to see and/or assign the global variable `+"`result`"+` (None, bool, int, float, str, list or dict with str keys); both are returned to you.
- Starlark is not full Python: no import or load(), no try/except/raise, no classes, no f-strings (use "%%s" %% x or "{}".format(x)), no recursion (use loops), no generators or with. while loops, top-level if/for/while, set([...]) and comprehensions work; iterate over a string's characters with s.elems().
- There is no file, network, clock or randomness access; helpers are the only way to reach data.
- A helper that fails stops the script with "helper <name> failed: <message>"; output printed before that is kept.
- Limits per run: %d execution steps, %s wall-clock time, %d bytes of printed output plus result, %d helper calls, and a memory limit (one string built with + or * holds at most %d MiB, one list %d elements). Exceeding one stops the script with an error.
`, limits.MaxSteps, limits.Timeout, limits.MaxOutput, limits.MaxCalls, maxStringBytes>>20, maxListElems)
	return b.String()
}
