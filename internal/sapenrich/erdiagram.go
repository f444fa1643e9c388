package sapenrich

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// An ER diagram is built without a model: the package's tables and the tables its objects
// use, their fields where the index has them, and links from check tables, shared key
// fields, appends and co-usage. Mermaid's erDiagram grammar is strict, so every name is
// quoted or reduced to the characters it allows.

// Caps that keep a diagram readable and its input bounded.
const (
	erMaxTables = 40
	erMaxFields = 25 // per table
	erMaxLinks  = 60
)

type erField struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	DataType   string `json:"datatype"`
	Length     int    `json:"length"`
	Key        bool   `json:"key"`
	CheckTable string `json:"check_table"`
	Desc       string `json:"description"`
}

type erTable struct {
	Name   string
	Owned  bool // a table of the package itself
	Fields []erField
}

type erLink struct {
	From, To, Label string
	Kind            string // "fk" (check table or shared key), "append", "usage"
}

// parseFields reads the optional "fields" of a custom_objects item.
func parseFields(raw []byte) []erField {
	if len(raw) == 0 {
		return nil
	}
	var fs []erField
	if json.Unmarshal(raw, &fs) != nil {
		return nil
	}
	out := fs[:0]
	for _, f := range fs {
		if strings.TrimSpace(f.Name) == "" {
			continue
		}
		if f.Type == "" {
			f.Type = f.DataType
		}
		out = append(out, f)
	}
	return out
}

// keyFields are a table's key fields without the client.
func keyFields(t erTable) []string {
	var out []string
	for _, f := range t.Fields {
		if f.Key && !strings.EqualFold(f.Name, "MANDT") && !strings.EqualFold(f.Name, "CLIENT") {
			out = append(out, strings.ToUpper(f.Name))
		}
	}
	return out
}

// erLinks derives links between the tables: check tables, then a field that is the single
// (non-client) key of another table, then the given appends and co-usages for pairs not yet
// linked. Deterministic: tables and fields are visited in order.
func erLinks(tables []erTable, extra []erLink) []erLink {
	byName := map[string]bool{}
	singleKey := map[string]string{} // key field -> table whose whole key it is
	for _, t := range tables {
		byName[t.Name] = true
		if k := keyFields(t); len(k) == 1 {
			if _, taken := singleKey[k[0]]; !taken {
				singleKey[k[0]] = t.Name
			}
		}
	}
	var out []erLink
	linked := map[[2]string]bool{}
	add := func(l erLink) {
		p := [2]string{l.From, l.To}
		if l.From == l.To || linked[p] || linked[[2]string{l.To, l.From}] || len(out) >= erMaxLinks {
			return
		}
		linked[p] = true
		out = append(out, l)
	}
	for _, t := range tables {
		for _, f := range t.Fields {
			if ct := strings.ToUpper(strings.TrimSpace(f.CheckTable)); ct != "" && byName[ct] {
				add(erLink{From: t.Name, To: ct, Label: f.Name, Kind: "fk"})
			}
		}
	}
	for _, t := range tables {
		own := keyFields(t)
		for _, f := range t.Fields {
			target, ok := singleKey[strings.ToUpper(f.Name)]
			if !ok || target == t.Name || (len(own) == 1 && own[0] == strings.ToUpper(f.Name)) {
				continue // a table's own single key does not point at another table with that key
			}
			add(erLink{From: t.Name, To: target, Label: f.Name, Kind: "fk"})
		}
	}
	for _, l := range extra {
		if byName[l.From] && byName[l.To] {
			add(l)
		}
	}
	return out
}

// mermaidER renders an erDiagram.
func mermaidER(tables []erTable, links []erLink) string {
	var b strings.Builder
	b.WriteString("erDiagram\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "    %s", erEntity(t.Name))
		if len(t.Fields) == 0 {
			b.WriteString("\n")
			continue
		}
		b.WriteString(" {\n")
		for i, f := range t.Fields {
			if i == erMaxFields {
				break
			}
			typ := f.Type
			if f.Length > 0 {
				typ = fmt.Sprintf("%s_%d", typ, f.Length)
			}
			fmt.Fprintf(&b, "        %s %s", erWord(typ, "FIELD"), erWord(f.Name, "FIELD"))
			if f.Key {
				b.WriteString(" PK")
			}
			if f.CheckTable != "" {
				if f.Key {
					b.WriteString(",FK")
				} else {
					b.WriteString(" FK")
				}
			}
			if d := erText(f.Desc); strings.TrimSpace(f.Desc) != "" {
				b.WriteString(` "` + d + `"`)
			}
			b.WriteString("\n")
		}
		b.WriteString("    }\n")
	}
	for _, l := range links {
		rel := "}o--||" // many rows of From point at one row of To
		switch l.Kind {
		case "append":
			rel = "||--||"
		case "usage":
			rel = "}o..o{"
		}
		fmt.Fprintf(&b, "    %s %s %s : \"%s\"\n", erEntity(l.From), rel, erEntity(l.To), erText(l.Label))
	}
	return b.String()
}

// erEntity quotes a table name; quoted entity names may hold anything but '"', '%', '\' and
// line breaks (/ACME/TABLE is fine).
func erEntity(name string) string {
	return `"` + strings.Map(func(r rune) rune {
		switch r {
		case '"', '%', '\\', '\n', '\r', '\v', '\b':
			return '_'
		}
		return r
	}, name) + `"`
}

// erWord reduces an attribute type or name to Mermaid's [A-Za-z_][A-Za-z0-9_-]*.
func erWord(s, fallback string) string {
	var b strings.Builder
	for i, r := range strings.TrimSpace(s) {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && (r == '-' || (r >= '0' && r <= '9')))
		if !ok {
			if i == 0 && r >= '0' && r <= '9' {
				b.WriteByte('_')
				b.WriteRune(r)
				continue
			}
			r = '_'
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return fallback
	}
	return b.String()
}

// erText makes a label or comment safe inside double quotes.
func erText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '"', '%', '\\', '\n', '\r', '\v', '\b', '#', ';':
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80])
	}
	if s == "" {
		return "-"
	}
	return s
}

func sortTables(ts []erTable) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Owned != ts[j].Owned {
			return ts[i].Owned // the package's own tables first
		}
		return ts[i].Name < ts[j].Name
	})
}
