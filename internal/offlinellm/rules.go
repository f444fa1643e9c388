package offlinellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
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
	Match      string         `json:"match"`               // Go regexp
	Reply      string         `json:"reply,omitempty"`     // $1..$9 refer to Match groups
	Reasoning  string         `json:"reasoning,omitempty"` // streamed as reasoning_content first
	ToolCalls  []ToolCallRule `json:"tool_calls,omitempty"`
	TokenDelay *Duration      `json:"token_delay,omitempty"` // overrides Options.TokenDelay
	FailStatus int            `json:"fail_status,omitempty"` // answer with this HTTP error instead
	// CallIDs imitates servers whose tool-call IDs are not unique: "per_response" numbers
	// them call_0, call_1… in every response (several local servers do), "none" sends none.
	CallIDs string `json:"call_ids,omitempty"`

	re *regexp.Regexp
}

// Tool-call ID styles of Rule.CallIDs.
const (
	CallIDsPerResponse = "per_response"
	CallIDsNone        = "none"
)

// Duration is a time.Duration written in JSON as a Go duration string such as "20ms".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"20ms\", got %s", b)
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

// LoadRules reads a JSON array of rules and checks them, so a bad file fails at start-up
// rather than on the first request.
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

// compileRules compiles every Match in place and rejects rules that could only fail later.
func compileRules(rules []Rule) error {
	var errs []error
	for i := range rules {
		r := &rules[i]
		where := fmt.Sprintf("rule %d (%s)", i, r.Name)
		re, err := regexp.Compile(r.Match)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: match: %w", where, err))
			continue
		}
		r.re = re
		if r.CallIDs != "" && r.CallIDs != CallIDsPerResponse && r.CallIDs != CallIDsNone {
			errs = append(errs, fmt.Errorf("%s: call_ids must be %q or %q", where, CallIDsPerResponse, CallIDsNone))
		}
		if r.FailStatus != 0 && (r.FailStatus < 400 || r.FailStatus > 599) {
			errs = append(errs, fmt.Errorf("%s: fail_status %d is not an HTTP error status", where, r.FailStatus))
		}
		for j, tc := range r.ToolCalls {
			if tc.Name == "" {
				errs = append(errs, fmt.Errorf("%s: tool_calls[%d]: name is empty", where, j))
			}
			// Substitute a placeholder for the groups: "$1" may stand for a number outside quotes.
			if sample := expandGroups(tc.arguments(), placeholderGroups, nil); !json.Valid([]byte(sample)) {
				errs = append(errs, fmt.Errorf("%s: tool_calls[%d] (%s): arguments are not valid JSON: %s", where, j, tc.Name, tc.Arguments))
			}
		}
	}
	return errors.Join(errs...)
}

var placeholderGroups = []string{"0", "0", "0", "0", "0", "0", "0", "0", "0", "0"}

// arguments defaults to an empty object: OpenAI always sends JSON object arguments.
func (tc ToolCallRule) arguments() string {
	if strings.TrimSpace(tc.Arguments) == "" {
		return "{}"
	}
	return tc.Arguments
}

// expandGroups replaces $1..$9 with the regexp groups (group 0 is the whole match), passing each
// through escape when set; "$$" is a literal "$". Unlike regexp.Expand, "$1abc" means group 1
// then "abc", and any other "$" (as in "$name") stays literal.
func expandGroups(template string, groups []string, escape func(string) string) string {
	if !strings.Contains(template, "$") {
		return template
	}
	var b strings.Builder
	for i := 0; i < len(template); i++ {
		c := template[i]
		if c == '$' && i+1 < len(template) && template[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c == '$' && i+1 < len(template) && template[i+1] >= '1' && template[i+1] <= '9' {
			if n := int(template[i+1] - '0'); n < len(groups) {
				g := groups[n]
				if escape != nil {
					g = escape(g)
				}
				b.WriteString(g)
			}
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// jsonEscape makes a group safe inside a JSON string, so user text with quotes or newlines
// still yields valid tool-call arguments.
func jsonEscape(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(buf.String(), "\n")
	return out[1 : len(out)-1]
}
