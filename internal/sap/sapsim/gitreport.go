package sapsim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sapagent/sapagent/internal/abapref"
)

// EndpointABAPGitLoad is the simulator's own endpoint (not part of the connector protocol)
// answering the summary of the last `--abapgit` load.
const EndpointABAPGitLoad = "abapgit_load"

// LoadReport is what an abapGit load did, per object type: objects loaded, references it
// could not resolve (standard DDIC the simulator does not know) and objects skipped, each
// with its reason.
type LoadReport struct {
	Folder     string                 `json:"folder"`
	Loaded     int                    `json:"loaded"`
	Unresolved int                    `json:"unresolved"`
	Skipped    int                    `json:"skipped"`
	Namespaces []string               `json:"custom_namespaces"` // derived from the loaded objects
	Types      map[string]*TypeReport `json:"types"`
}

// TypeReport is the load summary of one object type.
type TypeReport struct {
	Loaded     int         `json:"loaded"`
	Unresolved []LoadIssue `json:"unresolved,omitempty"`
	Skipped    []LoadIssue `json:"skipped,omitempty"`
}

// LoadIssue is one unresolved reference (Reference set) or one skipped object (File set).
type LoadIssue struct {
	Object    string `json:"object"`
	Reference string `json:"reference,omitempty"`
	File      string `json:"file,omitempty"`
	Reason    string `json:"reason"`
}

func newLoadReport(dir string) *LoadReport {
	return &LoadReport{Folder: dir, Types: map[string]*TypeReport{}}
}

func (r *LoadReport) typ(t string) *TypeReport {
	tr := r.Types[t]
	if tr == nil {
		tr = &TypeReport{}
		r.Types[t] = tr
	}
	return tr
}

func (r *LoadReport) loaded(t string) { r.typ(t).Loaded++; r.Loaded++ }

func (r *LoadReport) skip(t, name, file, reason string) {
	r.typ(t).Skipped = append(r.typ(t).Skipped, LoadIssue{Object: name, File: file, Reason: reason})
	r.Skipped++
}

func (r *LoadReport) unresolved(t, name, ref, reason string) {
	r.typ(t).Unresolved = append(r.typ(t).Unresolved, LoadIssue{Object: name, Reference: ref, Reason: reason})
	r.Unresolved++
}

// String is the summary as the simulator logs it: one line per object type.
func (r *LoadReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "abapGit %s: %d loaded, %d unresolved references, %d skipped", r.Folder, r.Loaded, r.Unresolved, r.Skipped)
	types := make([]string, 0, len(r.Types))
	for t := range r.Types {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		tr := r.Types[t]
		fmt.Fprintf(&b, "\n  %-5s loaded %d, unresolved %d, skipped %d", t, tr.Loaded, len(tr.Unresolved), len(tr.Skipped))
		for _, u := range tr.Unresolved {
			fmt.Fprintf(&b, "\n    unresolved %s -> %s: %s", u.Object, u.Reference, u.Reason)
		}
		for _, u := range tr.Skipped {
			fmt.Fprintf(&b, "\n    skipped %s (%s): %s", u.Object, u.File, u.Reason)
		}
	}
	return b.String()
}

// ABAPGitReport is the summary of the last abapGit load (nil before one).
func (s *System) ABAPGitReport() *LoadReport {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gitReport
}

// catalogObject loads an object the simulator keeps only in its object directory (TADIR):
// table types, message classes, transactions, service bindings, packages and any other type
// with an XML file; its description and package come from the XML and the folder, and the
// objects its XML names (a table type's row type, a transaction's program) become references.
func (l *gitLoad) catalogObject(g *gitObject) {
	text, ok := g.parts["xml"]
	if !ok {
		if j, ok := g.parts["json"]; ok { // ABAP file format: the description in its header
			var aff struct {
				Header struct {
					Description string `json:"description"`
				} `json:"header"`
			}
			if err := json.Unmarshal([]byte(j), &aff); err != nil {
				l.rep.skip(g.typ, g.name, g.file, "malformed JSON: "+err.Error())
				return
			}
			l.add(g, &object{Type: g.typ, Name: g.name, Description: aff.Header.Description})
			return
		}
		l.rep.skip(g.typ, g.name, g.file, "object type "+g.typ+" without an XML or JSON file is not loaded by the simulator")
		return
	}
	if err := wellFormed(text); err != nil {
		l.rep.skip(g.typ, g.name, g.file, err.Error())
		return
	}
	v := xmlValues(text)
	o := &object{Type: g.typ, Name: g.name}
	ref := func(kind abapref.Kind, typ, name string) {
		if name = strings.ToUpper(strings.TrimSpace(name)); name != "" {
			o.extraRefs = append(o.extraRefs, abapref.Ref{Kind: kind, Type: typ, Name: name})
		}
	}
	switch g.typ {
	case "TTYP": // DD40V: row type
		o.Description = first(v, "DDTEXT")
		ref(abapref.TypeUse, "TYPE", first(v, "ROWTYPE"))
	case "MSAG": // T100A: the class's text; T100: its messages
		o.Description = first(v, "STEXT")
	case "TRAN": // TSTC: program, TSTCT: text
		o.Description = first(v, "TTEXT")
		ref(abapref.Call, "PROG", first(v, "PGMNA"))
	case "DEVC": // the folder's package
		o.Description = first(v, "CTEXT")
	case "SRVB": // METADATA: description; SERVICES: the service definitions it binds
		o.Description = firstNonEmpty(first(v, "DESCRIPTION", "DDTEXT"), xmlAttr(text, "description"))
		for _, srvd := range xmlChildValues(text, "SRVD_REF", "NAME") {
			ref(abapref.Kind("expose"), "SRVD", srvd)
		}
	default:
		o.Description = xmlAttr(text, "description")
	}
	if g.typ == "DEVC" {
		o.Package = g.name
	}
	l.add(g, o)
}

// xmlChildValues are the texts of the elements named tag directly inside an element named
// parent (NAME inside SRVD_REF, where NAME also names other things).
func xmlChildValues(text, parent, tag string) []string {
	var out []string
	xmlTexts(text, func(path []string, v string) {
		if n := len(path); n >= 2 && path[n-1] == tag && path[n-2] == parent {
			out = append(out, v)
		}
	})
	return out
}

// xmlAttr is the first value of an attribute (any prefix) in an XML file, for formats that
// keep descriptions as attributes (adtcore:description).
func xmlAttr(text, attr string) string {
	lower, key := strings.ToLower(text), strings.ToLower(attr)+"=\""
	for from := 0; ; {
		i := strings.Index(lower[from:], key)
		if i < 0 {
			return ""
		}
		i += from
		if i > 0 && (lower[i-1] == ' ' || lower[i-1] == ':' || lower[i-1] == '\n' || lower[i-1] == '\t') { // a whole attribute name
			rest := text[i+len(key):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
			return ""
		}
		from = i + len(key)
	}
}
