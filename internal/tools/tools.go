// Package tools defines what the agent can call. A tool is one Definition: its JSON-schema
// parameters, its execution mode (and how per-user policies change it), when the model is
// offered it and how it runs. Everything here is pure (no I/O): a definition runs through an Env
// the worker's activities implement, so the conversation workflow can still evaluate policy
// decisions deterministically with the same registry.
package tools

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/sapagent/sapagent/internal/toolpolicy"
)

// Mode and Policy are declared in toolpolicy, which workflow code can import without the tools;
// the aliases keep this package's vocabulary for everyone else.
type (
	Mode   = toolpolicy.Mode
	Policy = toolpolicy.Policy
)

const (
	Auto          = toolpolicy.Auto
	ConfirmBefore = toolpolicy.ConfirmBefore
	ConfirmAfter  = toolpolicy.ConfirmAfter

	AskEveryTime  = toolpolicy.AskEveryTime
	ReadsOnly     = toolpolicy.ReadsOnly
	RunEverything = toolpolicy.RunEverything
)

// ValidPolicy reports whether p is a known policy.
func ValidPolicy(p Policy) bool { return p == AskEveryTime || p == ReadsOnly || p == RunEverything }

// policyRank orders policies by how much runs without asking.
var policyRank = map[Policy]int{AskEveryTime: 0, ReadsOnly: 1, RunEverything: 2}

// EffectivePolicy is the member's chosen policy bounded by the workspace's maximum: the one of
// the two that lets less run without asking. An unknown value counts as run_reads_only.
func EffectivePolicy(chosen, max Policy) Policy {
	if !ValidPolicy(chosen) {
		chosen = ReadsOnly
	}
	if !ValidPolicy(max) {
		max = ReadsOnly
	}
	if policyRank[max] < policyRank[chosen] {
		return max
	}
	return chosen
}

// Rule is what decides the modes of one turn's calls: the requester's effective policy and the
// workspace's four-eyes rule at the turn's start.
type Rule struct {
	Policy Policy
	// FourEyes: every write asks for approval (which its requester cannot give), whatever the policy.
	FourEyes bool
}

// Mode is the execution mode of one call under the rule.
func (r Rule) Mode(d *Definition, args map[string]any) Mode {
	if r.FourEyes && Writes(d, args) {
		return ConfirmBefore
	}
	return Decide(d, args, r.Policy)
}

// Writes reports whether a call changes data: its mode under run_reads_only is to ask first
// (for execute_code, a script that references a write helper).
func Writes(d *Definition, args map[string]any) bool {
	return Decide(d, args, ReadsOnly) == ConfirmBefore
}

// Definition is one tool: everything needed to offer, classify and run it (docs/tools.md).
type Definition struct {
	Name              string
	Description       string
	Parameters        string // JSON schema of the arguments object
	ReturnDescription string // shape of the result, propagated into execute_code's docs
	NeedsApproval     bool   // a write

	// How it is offered: directly to the model, as a helper function inside execute_code
	// scripts, or both (at least one); only once the workspace has Connections SAP
	// connections. DIRECT_CALL_TOOLS offers chosen helpers directly too.
	DirectCallAllowed  bool
	ExecuteCodeAllowed bool
	Connections        int
	// HelperDocs replaces the return description the model sees with the documentation of
	// every execute_code helper (execute_code itself).
	HelperDocs bool

	// ModeFor computes the mode from the arguments (e.g. a BAPI in test-run mode is a read);
	// nil means Auto for reads and ConfirmBefore for writes.
	ModeFor func(args map[string]any) Mode
	// Run executes a call, directly or as a script's helper (required).
	Run Runner

	schema *jsonschema.Schema
}

// Registry is an immutable set of tools.
type Registry struct {
	byName map[string]*Definition
	names  []string
}

// NewRegistry compiles every tool's schema and checks that each can be offered and run; a
// failure is a programming error.
func NewRegistry(defs ...Definition) (*Registry, error) {
	r := &Registry{byName: map[string]*Definition{}}
	for i := range defs {
		d := defs[i]
		switch {
		case d.Run == nil:
			return nil, fmt.Errorf("tool %s has no Run", d.Name)
		case !d.DirectCallAllowed && !d.ExecuteCodeAllowed:
			return nil, fmt.Errorf("tool %s is never offered: allow a direct call, an execute_code helper or both", d.Name)
		}
		c := jsonschema.NewCompiler()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(d.Parameters))
		if err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %w", d.Name, err)
		}
		if err := c.AddResource(d.Name+".json", doc); err != nil {
			return nil, fmt.Errorf("tool %s: %w", d.Name, err)
		}
		if d.schema, err = c.Compile(d.Name + ".json"); err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %w", d.Name, err)
		}
		if _, dup := r.byName[d.Name]; dup {
			return nil, fmt.Errorf("tool %s defined twice", d.Name)
		}
		r.byName[d.Name] = &d
		r.names = append(r.names, d.Name)
	}
	sort.Strings(r.names)
	return r, nil
}

// Get returns a tool by name.
func (r *Registry) Get(name string) (*Definition, bool) {
	d, ok := r.byName[name]
	return d, ok
}

// Names lists the tools in name order (deterministic).
func (r *Registry) Names() []string { return r.names }

// ParseArguments decodes and validates a call's JSON arguments. The error text is meant for
// the model, which can correct its call.
func (d *Definition) ParseArguments(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if at, ok := nulAt(inst, ""); ok {
		return nil, fmt.Errorf("arguments of %s contain a NUL character (\\u0000) at %s: NUL cannot be sent to SAP or stored; remove it", d.Name, at)
	}
	if err := d.schema.Validate(inst); err != nil {
		return nil, fmt.Errorf("arguments do not match the schema of %s: %s", d.Name, flatten(err))
	}
	args, ok := inst.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	return args, nil
}

// nulAt finds a NUL character in a decoded JSON value (a key or a string) and returns its JSON
// pointer. Such a call is invalid: no tool can do anything sensible with it, and Postgres
// refuses it wherever it would be stored.
func nulAt(v any, path string) (string, bool) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return cmp.Or(path, "/"), true
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same call always names the same place
		for _, k := range keys {
			name := strings.ReplaceAll(k, "\x00", `\u0000`)
			if strings.IndexByte(k, 0) >= 0 {
				return path + "/" + name, true
			}
			if at, ok := nulAt(x[k], path+"/"+name); ok {
				return at, true
			}
		}
	case []any:
		for i, e := range x {
			if at, ok := nulAt(e, fmt.Sprintf("%s/%d", path, i)); ok {
				return at, true
			}
		}
	}
	return "", false
}

var englishPrinter = message.NewPrinter(language.English)

func flatten(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		var b bytes.Buffer
		for _, leaf := range leaves(ve) {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			loc := "/" + strings.Join(leaf.InstanceLocation, "/")
			fmt.Fprintf(&b, "at %s: %s", loc, leaf.ErrorKind.LocalizedString(englishPrinter))
		}
		return b.String()
	}
	return err.Error()
}

func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// Decide is the execution mode of one call: the tool's own mode for these arguments,
// then the user's policy.
func Decide(d *Definition, args map[string]any, p Policy) Mode {
	mode := Auto
	if d.NeedsApproval {
		mode = ConfirmBefore
	}
	if d.ModeFor != nil {
		mode = d.ModeFor(args)
	}
	switch p {
	case RunEverything:
		return Auto
	case AskEveryTime:
		if mode == Auto {
			return ConfirmBefore
		}
	}
	return mode
}

// Schema returns a tool's parameters as raw JSON (for the model's tool list).
func (d *Definition) Schema() json.RawMessage { return json.RawMessage(d.Parameters) }

// Classify decides how a call runs under the policy, or why it cannot run at all (invalid is
// then a message for the model).
func (r *Registry) Classify(name, arguments string, p Policy) (mode Mode, invalid string) {
	return r.ClassifyUnder(name, arguments, Rule{Policy: p})
}

// ClassifyUnder is Classify under a turn's whole rule (policy and four eyes).
func (r *Registry) ClassifyUnder(name, arguments string, rule Rule) (mode Mode, invalid string) {
	def, ok := r.Get(name)
	switch {
	case name == "":
		return "", "the tool call has no tool name"
	case !ok:
		return "", "unknown tool " + name
	}
	args, err := def.ParseArguments(arguments)
	if err != nil {
		return "", err.Error()
	}
	return rule.Mode(def, args), ""
}
