package sapsim

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

// Index phases are served as a walk over ordered sections, resumed from an opaque cursor:
// loaded custom objects in key order ("m"), then generated custom objects by index ("g");
// the catalog's named objects in name order ("n"), then generated standard objects by index
// ("s"); key-user fields of tables ("t"); and, for a delta (after_seq > 0), the change log from
// after_seq ("d"). A cursor names the object it stopped in and how many of its items were
// already served, so a page costs O(limit) plus an O(log n) seek, and no item repeats or is
// skipped while the system is unchanged.

const (
	defaultPageLimit = 200
	maxPageLimit     = 1000
)

type position struct {
	sec byte   // m, g, n, s, t, d
	key string // object key in m, n and t
	idx int    // index in g and s, change-log position in d
	sub int    // items of this object already served
}

// encode makes the opaque cursor: the position and a checksum, so a cursor that was cut or
// edited is refused rather than silently resuming somewhere else.
func (p position) encode() string {
	text := fmt.Sprintf("%c|%d|%d|%s", p.sec, p.idx, p.sub, p.key)
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%08x%s", crc32.ChecksumIEEE([]byte(text)), text)))
}

func decodePosition(c string) (position, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(raw) < 8 {
		return position{}, false
	}
	text := string(raw[8:])
	if fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(text))) != string(raw[:8]) {
		return position{}, false
	}
	parts := strings.SplitN(text, "|", 4)
	if len(parts) != 4 || len(parts[0]) != 1 || !strings.Contains("mgnstd", parts[0]) {
		return position{}, false
	}
	idx, err1 := strconv.Atoi(parts[1])
	sub, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || idx < 0 || sub < 0 {
		return position{}, false
	}
	return position{sec: parts[0][0], idx: idx, sub: sub, key: parts[3]}, true
}

// sections are the sections an endpoint walks, in order.
func sections(endpoint string, delta bool) string {
	if delta {
		return "d"
	}
	switch endpoint {
	case sap.EndpointIndexCatalogContext:
		return "ns"
	case sap.EndpointIndexEnhancements:
		return "m"
	case sap.EndpointIndexS4Extensions:
		return "mt"
	}
	return "mg"
}

// indexPhase serves one page of an index phase.
func (s *System) indexPhase(endpoint string, req sap.IndexRequest) (sap.IndexPage, error) {
	if endpoint == sap.EndpointIndexS4Extensions && s.info.SystemType != "S4HANA" {
		return sap.IndexPage{}, errorf(http.StatusUnprocessableEntity, sap.ErrNotSupported, "", "S/4HANA extensions exist only on S/4HANA systems; %s is %s", s.info.SystemID, s.info.SystemType)
	}
	if req.AfterSeq < 0 {
		return sap.IndexPage{}, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "after_seq must not be negative")
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	limit = min(limit, maxPageLimit)
	secs := sections(endpoint, req.AfterSeq > 0)
	s.mu.RLock()
	defer s.mu.RUnlock()
	from := position{sec: secs[0]}
	if secs[0] == 'd' {
		from.idx = s.changeIndexAfter(req.AfterSeq)
	}
	if req.Cursor != "" {
		p, ok := decodePosition(req.Cursor)
		if !ok || !strings.ContainsRune(secs, rune(p.sec)) {
			return sap.IndexPage{}, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "invalid cursor %q for %s", req.Cursor, endpoint)
		}
		from = p
	}
	page := sap.IndexPage{Items: make([]map[string]any, 0, min(limit, 64))}
	s.walk(endpoint, secs, from, func(items []map[string]any, at position) bool {
		skip := 0
		if at.sec == from.sec && at.idx == from.idx && at.key == from.key {
			skip = from.sub
		}
		for k := skip; k < len(items); k++ {
			if len(page.Items) == limit {
				at.sub = k
				page.NextCursor = at.encode()
				return false
			}
			page.Items = append(page.Items, items[k])
		}
		return true
	})
	page.Total = s.total(endpoint, secs, req.AfterSeq)
	return page, nil
}

// walk calls fn with the items of each object from position from on, until fn returns false.
// Callers hold s.mu.
func (s *System) walk(endpoint, secs string, from position, fn func([]map[string]any, position) bool) {
	started := false
	for k := 0; k < len(secs); k++ {
		sec := secs[k]
		if !started && sec != from.sec {
			continue
		}
		resume := !started
		started = true
		switch sec {
		case 'm':
			i := 0
			if resume {
				i = sort.SearchStrings(s.matKeys, from.key)
			}
			for ; i < len(s.matKeys); i++ {
				if !fn(s.objectItems(endpoint, s.objects[s.matKeys[i]]), position{sec: 'm', key: s.matKeys[i]}) {
					return
				}
			}
		case 'g':
			i := 0
			if resume {
				i = from.idx
			}
			for ; i < s.gen.custom; i++ {
				o, ok := s.genCustom(i, endpoint != sap.EndpointIndexCustomObjects)
				if !ok {
					continue
				}
				if !fn(s.objectItems(endpoint, o), position{sec: 'g', idx: i}) {
					return
				}
			}
		case 'n':
			cat := s.catalog()
			i := 0
			if resume {
				i = sort.Search(len(cat.entries), func(n int) bool { return cat.entries[n].key() >= from.key })
			}
			for ; i < len(cat.entries); i++ {
				e := &cat.entries[i]
				if !fn([]map[string]any{e.item()}, position{sec: 'n', key: e.key()}) {
					return
				}
			}
		case 's':
			j := 0
			if resume {
				j = from.idx
			}
			for ; j < s.gen.std; j++ {
				if !fn([]map[string]any{stdItem(s.gen.stdObject(j))}, position{sec: 's', idx: j}) {
					return
				}
			}
		case 't':
			names := sortedNames(s.tables)
			i := 0
			if resume {
				i = sort.SearchStrings(names, from.key)
			}
			for ; i < len(names); i++ {
				var items []map[string]any
				for _, f := range s.tables[names[i]].schema.Fields {
					if strings.HasPrefix(f.Name, "YY1_") {
						items = append(items, map[string]any{"type": "FIELD", "kind": "custom_field", "name": f.Name, "extends": names[i], "description": f.Description})
					}
				}
				if len(items) > 0 && !fn(items, position{sec: 't', key: names[i]}) {
					return
				}
			}
		case 'd':
			for p := from.idx; p < len(s.changes); p++ {
				items := s.deltaItems(endpoint, s.changes[p])
				if len(items) > 0 && !fn(items, position{sec: 'd', idx: p}) {
					return
				}
			}
		}
	}
}

// changeIndexAfter is the change-log position of the first entry with Seq > seq.
func (s *System) changeIndexAfter(seq int64) int {
	return sort.Search(len(s.changes), func(i int) bool { return s.changes[i].Seq > seq })
}

// deltaItems are the items a change-log entry contributes to a delta page: those of the
// object it changed, if the entry is that object's latest change and the object still exists.
func (s *System) deltaItems(endpoint string, c sap.Change) []map[string]any {
	if c.ObjectType == "DATA" || c.ChangeType == "deleted" {
		return nil
	}
	if endpoint == sap.EndpointIndexCatalogContext {
		var out []map[string]any
		if !s.isCustom(c.ObjectName) && s.stdSeq[c.ObjectType+"/"+c.ObjectName] == c.Seq {
			if it, ok := s.catalogItem(c.ObjectType, c.ObjectName); ok {
				out = append(out, it)
			}
		}
		for _, k := range s.discovered[c.Seq] { // SAP objects this change's custom code named first
			typ, name, _ := strings.Cut(k, "/")
			if it, ok := s.catalogItem(typ, name); ok && s.stdSeq[k] <= c.Seq {
				out = append(out, it)
			}
		}
		return out
	}
	if o, ok := s.objects[c.ObjectType+"/"+c.ObjectName]; ok {
		if o.Seq != c.Seq {
			return nil
		}
		return s.objectItems(endpoint, o)
	}
	if i, ok := s.gen.customIndex(c.ObjectType, c.ObjectName); ok {
		if ch := s.genChanged[i]; ch.seq == c.Seq && !ch.deleted && !ch.shadowed {
			o, _ := s.genCustom(i, endpoint != sap.EndpointIndexCustomObjects)
			return s.objectItems(endpoint, o)
		}
	}
	return nil
}

// total counts a phase's items without building them (a delta counts its changed objects').
func (s *System) total(endpoint, secs string, afterSeq int64) int {
	if secs == "d" {
		n := 0
		for p := s.changeIndexAfter(afterSeq); p < len(s.changes); p++ {
			n += len(s.deltaItems(endpoint, s.changes[p]))
		}
		return n
	}
	n := 0
	switch endpoint {
	case sap.EndpointIndexCatalogContext:
		return len(s.catalog().entries) + s.gen.std
	case sap.EndpointIndexS4Extensions:
		for _, t := range s.tables {
			for _, f := range t.schema.Fields {
				if strings.HasPrefix(f.Name, "YY1_") {
					n++
				}
			}
		}
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		switch endpoint {
		case sap.EndpointIndexRelationships:
			n += o.relCount
		default:
			n += len(s.objectItems(endpoint, o))
		}
	}
	if !strings.Contains(secs, "g") || s.gen.custom == 0 {
		return n
	}
	switch endpoint {
	case sap.EndpointIndexCustomObjects:
		n += s.gen.custom
	case sap.EndpointIndexCustomCode:
		n += s.gen.custom - (s.gen.custom+1)/10 // every tenth (i%10 == 9) is a table without source
	case sap.EndpointIndexRelationships:
		n += s.gen.relTotal()
	}
	for i, ch := range s.genChanged {
		if !ch.deleted && !ch.shadowed {
			continue
		}
		switch endpoint {
		case sap.EndpointIndexCustomObjects:
			n--
		case sap.EndpointIndexCustomCode:
			if s.gen.customType(i) != "TABL" {
				n--
			}
		case sap.EndpointIndexRelationships:
			n -= s.gen.relCount(i)
		}
	}
	return n
}

// relTotal is the number of relationship items of all generated custom objects, counted once.
func (g *generator) relTotal() int {
	g.mu.Lock()
	done, sum := g.relSumDone, g.relSum
	g.mu.Unlock()
	if done {
		return sum
	}
	sum = 0
	for i := 0; i < g.custom; i++ {
		sum += g.relCount(i)
	}
	g.mu.Lock()
	g.relSum, g.relSumDone = sum, true
	g.mu.Unlock()
	return sum
}

// objectItems are the items one custom object contributes to a phase.
func (s *System) objectItems(endpoint string, o *object) []map[string]any {
	switch endpoint {
	case sap.EndpointIndexCustomObjects:
		return []map[string]any{{"type": o.Type, "name": o.Name, "description": o.Description, "package": o.Package, "created_by": o.CreatedBy, "changed_at": o.ChangedAt}}
	case sap.EndpointIndexRelationships:
		return s.relationships(o)
	case sap.EndpointIndexCustomCode:
		if o.Source == "" {
			return nil
		}
		return []map[string]any{{"type": o.Type, "name": o.Name, "source": o.Source, "lines": strings.Count(o.Source, "\n") + 1}}
	case sap.EndpointIndexEnhancements:
		if o.Kind == "badi" || o.Kind == "user_exit" || o.Kind == "append" || o.Kind == "enhancement" {
			return []map[string]any{{"type": o.Type, "kind": o.Kind, "name": o.Name, "enhances": o.Implements, "description": o.Description}}
		}
	case sap.EndpointIndexS4Extensions:
		if o.Kind == "key_user_field" || o.Kind == "cds_extension" {
			return []map[string]any{{"type": o.Type, "kind": o.Kind, "name": o.Name, "extends": o.Implements, "description": o.Description}}
		}
	}
	return nil
}

// refsOf is what an object uses: cached for loaded objects, extracted on demand for generated.
func (s *System) refsOf(o *object) []abapref.Ref {
	if o.generated && o.refs == nil && o.Source != "" {
		o.refs = abapref.Extract(o.Type, o.Source)
	}
	return o.refs
}

// relationships are an object's relationship items: one per (to type, to, usage).
func (s *System) relationships(o *object) []map[string]any {
	refs := s.refsOf(o)
	out := make([]map[string]any, 0, len(refs)+1)
	seen := make(map[string]bool, len(refs)+1)
	for _, r := range refs {
		typ := s.resolveType(r.Type, r.Name)
		key := typ + "/" + r.Name + "/" + string(r.Kind)
		if seen[key] || (r.Name == o.Name && typ == o.Type) { // a DCLS or DDLX names its view: that is no self-reference
			continue
		}
		seen[key] = true
		out = append(out, map[string]any{"from_type": o.Type, "from": o.Name, "to_type": typ, "to": r.Name, "kind": sap.RelationKind(string(r.Kind), typ), "usage": string(r.Kind), "line": r.Line})
	}
	add := func(toType, kind, usage string) {
		if key := toType + "/" + o.Implements + "/" + usage; !seen[key] {
			seen[key] = true
			out = append(out, map[string]any{"from_type": o.Type, "from": o.Name, "to_type": toType, "to": o.Implements, "kind": kind, "usage": usage, "line": 0})
		}
	}
	switch o.Kind {
	case "badi":
		add("BADI", "implements_badi", "implement")
	case "append", "key_user_field":
		add("TABL", "extends", "extend")
	case "cds_extension":
		add("DDLS", "extends", "extend")
	case "enhancement":
		add("PROG", "extends", "enhancement")
	}
	return out
}

// resolveType gives a reference the TADIR type the system knows for it: abapref cannot tell a
// data element from a structure ("TYPE"), the DDIC can.
func (s *System) resolveType(typ, name string) string {
	if alts, ok := sourceAlternatives[typ]; ok {
		return s.resolveByObject(typ, name, alts)
	}
	if typ != "TYPE" {
		return typ
	}
	if t, ok := s.tables[name]; ok && t != nil {
		return "TABL"
	}
	if _, ok := s.objects["TABL/"+name]; ok {
		return "TABL"
	}
	if _, ok := s.objects["DTEL/"+name]; ok {
		return "DTEL"
	}
	if _, ok := s.dtels[name]; ok {
		return "DTEL"
	}
	if _, ok := dataElements[name]; ok {
		return "DTEL"
	}
	if j, ok := s.gen.stdIndex("", name); ok {
		return s.gen.stdType(j)
	}
	if i, ok := s.gen.customIndex("", name); ok {
		return s.gen.customType(i)
	}
	if _, ok := s.objects["DDLS/"+name]; ok {
		return "DDLS" // a CDS entity used as a type
	}
	if repo := cleanCoreRepository(); repo != nil {
		for _, t := range []string{"TABL", "DTEL", "TTYP", "DDLS"} {
			if _, ok := repo.Lookup(t, name); ok {
				return t
			}
		}
	}
	return typ
}

// sourceAlternatives are the TADIR types a reference typed from source alone
// (by naming rules) may really have: a data source or association target is a
// table or a CDS entity, a class-like name a class or an interface.
var sourceAlternatives = map[string][]string{
	"TABL": {"DDLS"},
	"DDLS": {"TABL"},
	"CLAS": {"INTF"},
	"INTF": {"CLAS"},
}

// resolveByObject keeps typ when an object of that type exists (loaded,
// generated or in the Cloudification Repository) and takes the other type of
// the family when only that exists; a name known nowhere keeps typ.
func (s *System) resolveByObject(typ, name string, alts []string) string {
	for _, t := range append([]string{typ}, alts...) {
		if s.knows(t, name) {
			return t
		}
	}
	return typ
}

// knows reports whether the system has an object of this type and name.
func (s *System) knows(typ, name string) bool {
	if _, ok := s.objects[typ+"/"+name]; ok {
		return true
	}
	if typ == "TABL" {
		if t, ok := s.tables[name]; ok && t != nil {
			return true
		}
	}
	if _, ok := s.gen.stdIndex(typ, name); ok {
		return true
	}
	if _, ok := s.gen.customIndex(typ, name); ok {
		return true
	}
	if repo := cleanCoreRepository(); repo != nil {
		if _, ok := repo.Lookup(typ, name); ok {
			return true
		}
	}
	return false
}

// isCustomName says whether a name is in the customer namespace.
func isCustomName(name string) bool {
	return strings.HasPrefix(name, "Z") || strings.HasPrefix(name, "Y")
}

// isCustom says whether a name is the customer's: Z*, Y*, or the namespace or name of an
// object loaded from a customer repository (a repository's own code is custom whatever its
// namespace). Callers hold s.mu.
func (s *System) isCustom(name string) bool {
	if isCustomName(name) || s.customName[name] {
		return true
	}
	for _, ns := range s.customNS {
		if strings.HasPrefix(name, ns) {
			return true
		}
	}
	return false
}

// addCustomName records a loaded custom object's namespace, or its name when it has none and
// is not Z*/Y*. Callers hold s.mu for writing.
func (s *System) addCustomName(name string) {
	if ns := namespaceOf(name); ns != "" {
		for _, n := range s.customNS {
			if n == ns {
				return
			}
		}
		s.customNS = append(s.customNS, ns)
		sort.Strings(s.customNS)
		return
	}
	if !isCustomName(name) {
		if s.customName == nil {
			s.customName = map[string]bool{}
		}
		s.customName[name] = true
	}
}

// namespaceOf is a name's namespace prefix ("/DMO0/" of "/DMO0/TRAVEL"), "" without one.
func namespaceOf(name string) string {
	if !strings.HasPrefix(name, "/") {
		return ""
	}
	if i := strings.IndexByte(name[1:], '/'); i > 0 {
		return name[:i+2]
	}
	return ""
}

// genCustom is generated custom object i as the system has it now (false: deleted, or
// replaced by an activated object of the same name). Callers hold s.mu.
func (s *System) genCustom(i int, withSource bool) (*object, bool) {
	ch, changed := s.genChanged[i]
	if changed && (ch.deleted || ch.shadowed) {
		return nil, false
	}
	o := s.gen.customObject(i, ch.version, withSource)
	if changed {
		o.Seq = ch.seq
	}
	return o, true
}

// generatedObject finds a generated custom object by name. Callers hold s.mu.
func (s *System) generatedObject(typ, name string) (*object, bool) {
	i, ok := s.gen.customIndex(typ, name)
	if !ok {
		return nil, false
	}
	return s.genCustom(i, true)
}

func (s *System) whereUsed(req sap.WhereUsedRequest) sap.WhereUsedResponse {
	s.mu.RLock()
	defer s.mu.RUnlock()
	name := strings.ToUpper(strings.TrimSpace(req.Name))
	want := strings.ToUpper(strings.TrimSpace(req.ObjectType))
	limit := req.Limit
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	res := sap.WhereUsedResponse{Usages: []sap.Usage{}}
	// add reports whether there is room for more.
	add := func(o *object) bool {
		var lines []string
		for _, r := range s.refsOf(o) {
			if r.Name != name || (r.Name == o.Name && r.Type == o.Type) {
				continue
			}
			if want != "" && r.Type != "TYPE" && !strings.EqualFold(s.resolveType(r.Type, r.Name), want) {
				continue
			}
			if lines == nil {
				lines = strings.Split(o.Source, "\n")
			}
			u := sap.Usage{ObjectType: o.Type, Name: o.Name, Line: r.Line}
			if r.Line >= 1 && r.Line <= len(lines) {
				u.Snippet = strings.TrimSpace(lines[r.Line-1])
			}
			res.Usages = append(res.Usages, u)
			if len(res.Usages) >= limit {
				return false
			}
		}
		if o.Implements == name && o.Kind != "" {
			res.Usages = append(res.Usages, sap.Usage{ObjectType: o.Type, Name: o.Name, Snippet: o.Kind + " of " + name})
		}
		return len(res.Usages) < limit
	}
	for _, k := range s.matKeys {
		if !add(s.objects[k]) {
			return res
		}
	}
	if from, to, ok := s.gen.users(want, name); ok {
		for i := from; i < to; i++ {
			if o, ok := s.genCustom(i, true); ok && !add(o) {
				return res
			}
		}
	}
	return res
}
