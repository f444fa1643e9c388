// Package etl maps and moves rows between SAP systems: the field mapping, the twelve transform
// types, and the checks the cross-connection tools run (validate → dry run → execute →
// reconcile). Everything here is pure; the tools supply rows read through connectors.
package etl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Transform types a field mapping may use.
const (
	Direct         = "direct"           // copy the source value
	Constant       = "constant"         // always Value
	Uppercase      = "uppercase"        // upper-case the value
	Lowercase      = "lowercase"        // lower-case the value
	Trim           = "trim"             // strip surrounding spaces
	AlphaIn        = "alpha_in"         // SAP ALPHA input conversion: numeric keys padded with zeros to Length
	AlphaOut       = "alpha_out"        // ALPHA output conversion: leading zeros removed
	Substring      = "substring"        // Start (0-based) and Length characters
	Concat         = "concat"           // join Fields (source fields) with Separator
	ValueMap       = "value_map"        // look the value up in Map; Default (or the value) when missing
	DateFormat     = "date_format"      // re-format a date from From to To (Go layouts or YYYYMMDD, DD.MM.YYYY, YYYY-MM-DD)
	DefaultIfEmpty = "default_if_empty" // the value, or Value when it is empty
)

// Types lists every transform type with a one-line description (system prompt, tool docs).
var Types = []struct{ Name, Description string }{
	{Direct, "copy the source field unchanged"},
	{Constant, "fill the target with a fixed value (value)"},
	{Uppercase, "upper-case the source value"},
	{Lowercase, "lower-case the source value"},
	{Trim, "remove leading and trailing spaces"},
	{AlphaIn, "ALPHA input conversion: pad numeric keys with leading zeros to length (e.g. KUNNR 10)"},
	{AlphaOut, "ALPHA output conversion: remove leading zeros"},
	{Substring, "take length characters from start (0-based)"},
	{Concat, "join several source fields (fields) with separator"},
	{ValueMap, "translate values through map; default for values not in it"},
	{DateFormat, "re-format dates from one format to another (from, to: YYYYMMDD, DD.MM.YYYY, YYYY-MM-DD, MM/DD/YYYY)"},
	{DefaultIfEmpty, "keep the source value, or use value when it is empty"},
}

// IsType reports whether t is a known transform type.
func IsType(t string) bool {
	for _, x := range Types {
		if x.Name == t {
			return true
		}
	}
	return false
}

// FieldMapping maps one target field from the source.
type FieldMapping struct {
	Target    string            `json:"target"`
	Source    string            `json:"source,omitempty"`
	Transform string            `json:"transform"`
	Value     string            `json:"value,omitempty"`
	Length    int               `json:"length,omitempty"`
	Start     int               `json:"start,omitempty"`
	Fields    []string          `json:"fields,omitempty"`
	Separator string            `json:"separator,omitempty"`
	Map       map[string]string `json:"map,omitempty"`
	Default   string            `json:"default,omitempty"`
	From      string            `json:"from,omitempty"`
	To        string            `json:"to,omitempty"`
}

// Check validates a mapping's own parameters (not the tables).
func (m FieldMapping) Check() error {
	if m.Target == "" {
		return fmt.Errorf("a mapping has no target field")
	}
	if !IsType(m.Transform) {
		return fmt.Errorf("%s: unknown transform %q", m.Target, m.Transform)
	}
	needsSource := m.Transform != Constant && m.Transform != Concat
	if needsSource && m.Source == "" {
		return fmt.Errorf("%s: transform %s needs a source field", m.Target, m.Transform)
	}
	switch m.Transform {
	case AlphaIn:
		if m.Length <= 0 {
			return fmt.Errorf("%s: alpha_in needs length", m.Target)
		}
	case Substring:
		if m.Length <= 0 || m.Start < 0 {
			return fmt.Errorf("%s: substring needs start >= 0 and length > 0", m.Target)
		}
	case Concat:
		if len(m.Fields) == 0 {
			return fmt.Errorf("%s: concat needs fields", m.Target)
		}
	case DateFormat:
		if layout(m.From) == "" || layout(m.To) == "" {
			return fmt.Errorf("%s: date_format needs from and to among YYYYMMDD, DD.MM.YYYY, YYYY-MM-DD, MM/DD/YYYY", m.Target)
		}
	}
	return nil
}

// Apply computes the target value from a source row.
func (m FieldMapping) Apply(row map[string]string) (string, error) {
	v := row[m.Source]
	switch m.Transform {
	case Direct:
		return v, nil
	case Constant:
		return m.Value, nil
	case Uppercase:
		return strings.ToUpper(v), nil
	case Lowercase:
		return strings.ToLower(v), nil
	case Trim:
		return strings.TrimSpace(v), nil
	case AlphaIn:
		t := strings.TrimSpace(v)
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return t, nil // ALPHA pads only purely numeric values
		}
		if len(t) > m.Length {
			return "", fmt.Errorf("%s: %q is longer than %d", m.Target, t, m.Length)
		}
		return strings.Repeat("0", m.Length-len(t)) + t, nil
	case AlphaOut:
		t := strings.TrimLeft(strings.TrimSpace(v), "0")
		if t == "" && strings.TrimSpace(v) != "" {
			return "0", nil
		}
		return t, nil
	case Substring:
		r := []rune(v)
		if m.Start >= len(r) {
			return "", nil
		}
		end := m.Start + m.Length
		if end > len(r) {
			end = len(r)
		}
		return string(r[m.Start:end]), nil
	case Concat:
		parts := make([]string, len(m.Fields))
		for i, f := range m.Fields {
			parts[i] = strings.TrimSpace(row[f])
		}
		return strings.Join(parts, m.Separator), nil
	case ValueMap:
		if out, ok := m.Map[v]; ok {
			return out, nil
		}
		if m.Default != "" {
			return m.Default, nil
		}
		return v, nil
	case DateFormat:
		if strings.TrimSpace(v) == "" || v == "00000000" {
			return "", nil
		}
		t, err := time.Parse(layout(m.From), strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Errorf("%s: %q is not a %s date", m.Target, v, m.From)
		}
		return t.Format(layout(m.To)), nil
	case DefaultIfEmpty:
		if strings.TrimSpace(v) == "" {
			return m.Value, nil
		}
		return v, nil
	}
	return "", fmt.Errorf("%s: unknown transform %q", m.Target, m.Transform)
}

func layout(f string) string {
	switch strings.ToUpper(f) {
	case "YYYYMMDD":
		return "20060102"
	case "DD.MM.YYYY":
		return "02.01.2006"
	case "YYYY-MM-DD":
		return "2006-01-02"
	case "MM/DD/YYYY":
		return "01/02/2006"
	}
	return ""
}

// Mapping is a whole table mapping.
type Mapping struct {
	SourceTable string         `json:"source_table"`
	TargetTable string         `json:"target_table"`
	Fields      []FieldMapping `json:"fields"`
}

// Check validates every field mapping and that no target is mapped twice.
func (m Mapping) Check() error {
	if m.SourceTable == "" || m.TargetTable == "" {
		return fmt.Errorf("source_table and target_table are required")
	}
	if len(m.Fields) == 0 {
		return fmt.Errorf("the mapping has no fields")
	}
	seen := map[string]bool{}
	for _, f := range m.Fields {
		if err := f.Check(); err != nil {
			return err
		}
		if seen[f.Target] {
			return fmt.Errorf("target field %s is mapped twice", f.Target)
		}
		seen[f.Target] = true
	}
	return nil
}

// SourceFields lists the source fields the mapping reads, sorted.
func (m Mapping) SourceFields() []string {
	set := map[string]bool{}
	for _, f := range m.Fields {
		if f.Source != "" {
			set[f.Source] = true
		}
		for _, s := range f.Fields {
			set[s] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Transform maps one source row; errors name the field.
func (m Mapping) Transform(row map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(m.Fields))
	for _, f := range m.Fields {
		v, err := f.Apply(row)
		if err != nil {
			return nil, err
		}
		out[f.Target] = v
	}
	return out, nil
}

// Fingerprint identifies a mapping's content, so an execute can require a dry run of exactly
// the same mapping.
func (m Mapping) Fingerprint() string {
	var b strings.Builder
	b.WriteString(m.SourceTable + ">" + m.TargetTable)
	fields := append([]FieldMapping(nil), m.Fields...)
	sort.Slice(fields, func(i, j int) bool { return fields[i].Target < fields[j].Target })
	for _, f := range fields {
		keys := make([]string, 0, len(f.Map))
		for k := range f.Map {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "|%s=%s:%s:%s:%d:%d:%s:%s:%s:%s:%s", f.Target, f.Transform, f.Source, f.Value, f.Length, f.Start,
			strings.Join(f.Fields, ","), f.Separator, f.Default, f.From, f.To)
		for _, k := range keys {
			b.WriteString(";" + k + "=" + f.Map[k])
		}
	}
	return strconv.Itoa(len(b.String())) + ":" + hash(b.String())
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}
