package cleancore

import "strings"

// WithCustomObjects is a copy of the classifier that also counts a repository's own objects as
// the customer's, whatever their namespace: every /NS/ namespace among names is added to the
// customer namespaces, and every name without one is custom by itself. The classifier it is
// made from is unchanged.
func (c *Classifier) WithCustomObjects(names []string) *Classifier {
	out := &Classifier{repo: c.repo, ns: append([]string(nil), c.ns...), names: map[string]bool{}}
	for n := range c.names {
		out.names[n] = true
	}
	for _, name := range names {
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" || out.IsCustom(name) {
			continue
		}
		if ns := Namespace(name); ns != "" {
			out.ns = append(out.ns, ns)
			continue
		}
		out.names[name] = true
	}
	return out
}

// Namespace is a name's namespace prefix ("/DMO/" of "/DMO/TRAVEL"), "" without one.
func Namespace(name string) string {
	if !strings.HasPrefix(name, "/") {
		return ""
	}
	if i := strings.IndexByte(name[1:], '/'); i > 0 {
		return strings.ToUpper(name[:i+2])
	}
	return ""
}
