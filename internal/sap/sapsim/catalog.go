package sapsim

import (
	"sort"
	"strings"
	"sync"

	"github.com/sapagent/sapagent/internal/cleancore"
)

// The catalog is every standard object the system has: its DDIC tables, function modules and
// other SAP objects, the real SAP objects generated code uses, SAP objects referenced by custom
// code even without a definition here, and the generated standard objects. Release states of
// real SAP names come from SAP's Cloudification Repository (internal/cleancore).

var (
	repoOnce sync.Once
	repo     *cleancore.Repository
)

// cleanCoreRepository is the shipped Cloudification Repository (nil if it cannot be parsed,
// which a test of cleancore would catch first).
func cleanCoreRepository() *cleancore.Repository {
	repoOnce.Do(func() {
		r, err := cleancore.Default()
		if err == nil {
			repo = r
		}
	})
	return repo
}

type catalogEntry struct {
	typ, name, description, pkg, component, state, successor string
}

func (e *catalogEntry) key() string { return e.name + "\x00" + e.typ }

func (e *catalogEntry) item() map[string]any {
	return map[string]any{"type": e.typ, "name": e.name, "description": e.description, "package": e.pkg,
		"application_component": e.component, "release_state": e.state, "successor": e.successor}
}

func stdItem(o stdObject) map[string]any {
	return map[string]any{"type": o.typ, "name": o.name, "description": o.description, "package": o.pkg,
		"application_component": o.component, "release_state": o.state, "successor": o.successor}
}

// catalogSnapshot is the named part of the catalog, sorted by name and type.
type catalogSnapshot struct {
	version int
	entries []catalogEntry
	byKey   map[string]int // TYPE/NAME -> entries index
}

// realComponents are package and application component of the real SAP objects the simulator
// defines (as TADIR/TDEVC have them).
var realComponents = map[string][2]string{
	"T000": {"SZME", "BC-CCM-CNF"}, "T001": {"FBZ", "FI"}, "T001W": {"WB", "LO-MD-PL"}, "T001L": {"MB", "MM-IM"},
	"T005": {"SZA", "BC-SRV-ADR"}, "T005T": {"SZA", "BC-SRV-ADR"}, "TCURC": {"SFIB", "BC-SRV-BSF-CUR"}, "T006": {"SZME", "BC-SRV-ASF-UOM"},
	"T023": {"MG", "LO-MD-MM"}, "T134": {"MG", "LO-MD-MM"}, "TVKO": {"VS", "SD-BF"}, "TVTW": {"VS", "SD-BF"}, "TSPA": {"VS", "SD-BF"},
	"MARA": {"MG", "LO-MD-MM"}, "MAKT": {"MG", "LO-MD-MM"}, "MARC": {"MG", "LO-MD-MM"}, "MARD": {"MG", "LO-MD-MM"}, "MBEW": {"MG", "LO-MD-MM"},
	"MVKE": {"MG", "LO-MD-MM"}, "KNA1": {"VS", "LO-MD-BP-CM"}, "KNB1": {"VS", "LO-MD-BP-CM"}, "KNVV": {"VS", "LO-MD-BP-CM"},
	"LFA1": {"FBKR", "LO-MD-BP-VM"}, "LFB1": {"FBKR", "LO-MD-BP-VM"}, "LFM1": {"FBKR", "LO-MD-BP-VM"},
	"VBAK": {"VA", "SD-SLS"}, "VBAP": {"VA", "SD-SLS"}, "VBEP": {"VA", "SD-SLS"}, "LIKP": {"VL", "LE-SHP"}, "LIPS": {"VL", "LE-SHP"},
	"VBRK": {"VF", "SD-BIL"}, "VBRP": {"VF", "SD-BIL"}, "BKPF": {"FBAS", "FI-GL"}, "BSEG": {"FBAS", "FI-GL"}, "SKA1": {"FBAS", "FI-GL"},
	"SKAT": {"FBAS", "FI-GL"}, "CSKS": {"KBAS", "CO-OM-CCA"}, "EKKO": {"ME", "MM-PUR"}, "EKPO": {"ME", "MM-PUR"}, "EBAN": {"ME", "MM-PUR"},
	"MKPF": {"MB", "MM-IM"}, "MSEG": {"MB", "MM-IM"}, "ADRC": {"SZA", "BC-SRV-ADR"}, "MATDOC": {"MB", "MM-IM"},
	"ACDOCA": {"FINS_ACDOC", "FI-GL"}, "BUT000": {"BUPA", "LO-MD-BP"}, "BUT020": {"BUPA", "LO-MD-BP"}, "KONV": {"V61A", "SD-BF-PR"},
	"CDHDR": {"SCD0", "BC-SRV-ASF-CHD"}, "CDPOS": {"SCD0", "BC-SRV-ASF-CHD"},
}

// catalog is the named part of the catalog, rebuilt when custom objects changed. Callers hold
// s.mu (read or write); catMu serialises the rebuild.
func (s *System) catalog() *catalogSnapshot {
	s.catMu.Lock()
	defer s.catMu.Unlock()
	if s.cat != nil && s.cat.version == s.objVersion {
		return s.cat
	}
	cat := &catalogSnapshot{version: s.objVersion, byKey: map[string]int{}}
	seen := map[string]bool{}
	add := func(typ, name, desc, pkg string) {
		if name == "" || s.isCustom(name) || seen[typ+"/"+name] {
			return
		}
		seen[typ+"/"+name] = true
		e := catalogEntry{typ: typ, name: name, description: desc, pkg: pkg}
		if c, ok := realComponents[name]; ok {
			if e.pkg == "" || e.pkg == "SAP" {
				e.pkg = c[0]
			}
			e.component = c[1]
		}
		e.state, e.successor = releaseState(typ, name)
		cat.entries = append(cat.entries, e)
	}
	for _, name := range sortedNames(s.tables) {
		if t := s.tables[name]; !t.schema.Custom {
			add("TABL", name, t.schema.Description, "")
		}
	}
	for _, name := range sortedNames(s.funcs) {
		add("FUNC", name, s.funcs[name].iface.Description, s.funcs[name].iface.Group)
	}
	for _, name := range sortedNames(standardObjects) {
		add(standardObjects[name].typ, name, "SAP standard object", "")
	}
	if s.gen.custom > 0 {
		for _, name := range sortedNames(genWellKnown) {
			add(genWellKnown[name], name, "", "")
		}
	}
	for _, k := range s.matKeys {
		o := s.objects[k]
		for _, r := range o.refs {
			if _, custom := s.objects[r.Type+"/"+r.Name]; custom || r.Name == o.Name {
				continue
			}
			typ := s.resolveType(r.Type, r.Name)
			if _, generated := s.gen.stdIndex(typ, r.Name); generated {
				continue // listed in the generated section
			}
			add(typ, r.Name, "", "")
		}
		if o.Implements != "" && o.Kind == "badi" {
			add("BADI", o.Implements, "", "")
		}
	}
	sort.Slice(cat.entries, func(a, b int) bool { return cat.entries[a].key() < cat.entries[b].key() })
	for i := range cat.entries {
		cat.byKey[cat.entries[i].typ+"/"+cat.entries[i].name] = i
	}
	s.cat = cat
	return cat
}

// releaseState is a real SAP object's Clean Core state from the Cloudification Repository
// (by TADIR type and name); objects it does not list keep the simulator's own classification
// or are "unknown" (SAP-internal).
func releaseState(typ, name string) (state, successor string) {
	if r := cleanCoreRepository(); r != nil {
		if e, ok := r.Lookup(typ, name); ok {
			return e.IndexState()
		}
	}
	if so, ok := standardObjects[name]; ok && so.typ == typ {
		return so.state, so.successor
	}
	return "unknown", ""
}

// catalogItem finds one catalog object by type and name. Callers hold s.mu.
func (s *System) catalogItem(typ, name string) (map[string]any, bool) {
	if j, ok := s.gen.stdIndex(typ, name); ok {
		return stdItem(s.gen.stdObject(j)), true
	}
	cat := s.catalog()
	if i, ok := cat.byKey[typ+"/"+strings.ToUpper(name)]; ok {
		return cat.entries[i].item(), true
	}
	return nil, false
}
