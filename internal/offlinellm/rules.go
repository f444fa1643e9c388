package offlinellm

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"
)

// ToolCallRule is a tool call a rule makes the model emit.
type ToolCallRule struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text; $1..$9 refer to the rule's Match groups
}

// Rule decides the reply to a conversation whose last message is the user's: the first rule
// whose Match matches that message's text wins.
type Rule struct {
	Name       string         `json:"name"`
	Match      string         `json:"match"`
	Reply      string         `json:"reply,omitempty"`
	Reasoning  string         `json:"reasoning,omitempty"`
	ToolCalls  []ToolCallRule `json:"tool_calls,omitempty"`
	TokenDelay *Duration      `json:"token_delay,omitempty"`
	FailStatus int            `json:"fail_status,omitempty"`

	re *regexp.Regexp
}

// Duration is a time.Duration written in JSON as "20ms".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"20ms\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// LoadRules reads a JSON array of rules.
func LoadRules(path string) ([]Rule, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("offline model rules %s: %w", path, err)
	}
	var rules []Rule
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("offline model rules %s: %w", path, err)
	}
	if err := compileRules(rules); err != nil {
		return nil, fmt.Errorf("offline model rules %s: %w", path, err)
	}
	return rules, nil
}

func compileRules(rules []Rule) error {
	for i := range rules {
		re, err := regexp.Compile(rules[i].Match)
		if err != nil {
			return fmt.Errorf("rule %d (%s): match: %w", i, rules[i].Name, err)
		}
		rules[i].re = re
	}
	return nil
}

// expand substitutes $1..$9 of the match into a template.
func (r *Rule) expand(template, text string) string {
	m := r.re.FindStringSubmatchIndex(text)
	if m == nil {
		return template
	}
	return string(r.re.ExpandString(nil, template, text, m))
}
