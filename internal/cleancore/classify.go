package cleancore

import (
	"strings"
)

// Level is a Clean Core level; a later letter is worse.
type Level uint8

const (
	LevelA Level = iota + 'A' // only released APIs
	LevelB                    // also classic APIs
	LevelC                    // reads SAP-internal objects
	LevelD                    // writes SAP tables, modifies SAP, implicit enhancements, noAPI objects
)

func (l Level) String() string {
	if l < LevelA || l > LevelD {
		return "?"
	}
	return string(rune(l))
}

// MarshalText writes a level as its letter.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UsageKind is how an object uses another.
type UsageKind uint8

const (
	KindRead         UsageKind = iota // SELECT, reading a CDS view
	KindWrite                         // INSERT/UPDATE/MODIFY/DELETE
	KindCall                          // CALL FUNCTION, method calls, SUBMIT, CALL TRANSACTION
	KindType                          // TYPE, TYPE REF TO, INCLUDE STRUCTURE
	KindEnhancement                   // an enhancement of the used object (explicit if a BAdI/spot, else implicit)
	KindModification                  // a modification of the SAP object itself
)

var kindNames = [...]string{"read", "write", "call", "type", "enhancement", "modification"}

func (k UsageKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// MarshalText writes a kind by name.
func (k UsageKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ParseUsageKind reads a kind by name.
func ParseUsageKind(s string) (UsageKind, bool) {
	for i, n := range kindNames {
		if strings.EqualFold(s, n) {
			return UsageKind(i), true
		}
	}
	return 0, false
}

// Usage is one object an analysed object uses: TADIR type (TABL, FUNC, CLAS,
// INTF, DDLS, PROG, FUGR, DTEL …), name and kind.
type Usage struct {
	Type string    `json:"type"`
	Name string    `json:"name"`
	Kind UsageKind `json:"kind"`
}

// Reason explains the level one SAP usage implies.
type Reason struct {
	Usage            Usage    `json:"usage"`
	State            State    `json:"state"` // the object's state in the repository
	Level            Level    `json:"level"`
	Why              string   `json:"why"`
	Deprecated       bool     `json:"deprecated,omitempty"`
	Successors       []Object `json:"successors,omitempty"`
	SuccessorConcept string   `json:"successorConcept,omitempty"`
}

// Result is an object's Clean Core level: the worst level over its SAP
// usages (A when it uses none), with one reason per distinct SAP usage.
type Result struct {
	Level   Level    `json:"level"`
	Reasons []Reason `json:"reasons"`
	Custom  int      `json:"customUsages"` // usages of the customer's own objects, ignored
}

// Options configure a Classifier.
type Options struct {
	// CustomerNamespaces are the customer's own namespaces, e.g. "/ACME/";
	// objects in them, like Z* and Y* objects, are not SAP objects.
	CustomerNamespaces []string
}

// Classifier assigns Clean Core levels against one repository; it is safe
// for concurrent use.
type Classifier struct {
	repo  *Repository
	ns    []string
	names map[string]bool // the customer's objects outside Z*, Y* and ns (WithCustomObjects)
}

// New makes a classifier; a nil repository means the shipped copy.
func New(repo *Repository, opts Options) (*Classifier, error) {
	if repo == nil {
		var err error
		if repo, err = Default(); err != nil {
			return nil, err
		}
	}
	c := &Classifier{repo: repo}
	for _, n := range opts.CustomerNamespaces {
		n = strings.ToUpper(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if !strings.HasPrefix(n, "/") {
			n = "/" + n
		}
		if !strings.HasSuffix(n, "/") {
			n += "/"
		}
		c.ns = append(c.ns, n)
	}
	return c, nil
}

// IsCustom reports whether a name is the customer's: Z*, Y* or in one of the
// customer namespaces.
func (c *Classifier) IsCustom(name string) bool {
	name = strings.TrimSpace(name)
	if name == "" {
		return false
	}
	switch name[0] {
	case 'Z', 'Y', 'z', 'y':
		return true
	}
	if c.names[strings.ToUpper(name)] {
		return true
	}
	switch name[0] {
	case '/':
		for _, n := range c.ns {
			if len(name) >= len(n) && strings.EqualFold(name[:len(n)], n) {
				return true
			}
		}
	}
	return false
}

// explicitEnhancement types are enhancement spots and BAdI definitions: an
// enhancement of them is explicit; an enhancement of anything else is an
// implicit enhancement (level D).
func explicitEnhancement(typ string) bool {
	switch strings.ToUpper(typ) {
	case "ENHS", "BADI_DEF", "SXSD", "ENHO", "SXCI":
		return true
	}
	return false
}

// Reason is the level one usage implies; ok is false for custom objects.
func (c *Classifier) Reason(u Usage) (Reason, bool) {
	if c.IsCustom(u.Name) {
		return Reason{}, false
	}
	u = normalize(u)
	var builtinWhy string
	i, ok := c.repo.find(u.Type, u.Name)
	if !ok {
		u, builtinWhy = c.resolve(u)
		i, ok = c.repo.find(u.Type, u.Name)
	}
	r := Reason{Usage: u}
	if ok {
		e := &c.repo.entries[i]
		r.State, r.Deprecated, r.Successors, r.SuccessorConcept = e.state, e.deprecated, e.successors, e.concept
	}
	switch {
	case u.Kind == KindModification:
		r.Level, r.Why = LevelD, "modifies an SAP object"
	case u.Kind == KindWrite:
		r.Level, r.Why = LevelD, "writes to an SAP object"
	case u.Kind == KindEnhancement && !explicitEnhancement(u.Type):
		r.Level, r.Why = LevelD, "implicit enhancement of an SAP object"
	case builtinWhy != "":
		r.State, r.Level, r.Why = StateReleased, LevelA, builtinWhy
	default:
		r.Level, r.Why = levelOf(r.State, r.Deprecated)
	}
	return r, true
}

// alternatives are the TADIR types a reference of one type may really have
// when the type came from source alone: a bare TYPE is a data element,
// structure, table type or CDS entity; a table and a CDS view are both data
// sources and association targets; a class and an interface look alike.
var alternatives = map[string][]string{
	"TYPE": {"DTEL", "TABL", "TTYP", "DDLS", "VIEW"},
	"DTEL": {"TABL", "TTYP", "DDLS"},
	"TTYP": {"DTEL", "TABL", "DDLS"},
	"TABL": {"DDLS", "VIEW"},
	"DDLS": {"TABL", "VIEW"},
	"VIEW": {"DDLS", "TABL"},
	"CLAS": {"INTF"},
	"INTF": {"CLAS"},
}

// builtinReleased are objects every ABAP Cloud program may use that the
// Cloudification Repository does not list: the system fields (sy-, structure
// SYST) are part of the language.
var builtinReleased = map[Object]string{
	{Type: "TABL", Name: "SYST"}: "system fields (sy-): part of the ABAP language",
	{Type: "TABL", Name: "SY"}:   "system fields (sy-): part of the ABAP language",
}

// resolve finds the repository entry of a usage the exact (type, name) misses,
// the way the repository is keyed: first the other TADIR types the name may
// have, then the type group of a type-group type (ABAP_BOOL is a type of type
// group ABAP: type-group types carry their group's name as prefix). A usage
// found nowhere is returned unchanged. why is set for built-in released objects.
func (c *Classifier) resolve(u Usage) (Usage, string) {
	if why, ok := builtinReleased[Object{Type: u.Type, Name: u.Name}]; ok {
		return u, why
	}
	for _, t := range alternatives[u.Type] {
		if _, ok := c.repo.find(t, u.Name); ok {
			u.Type = t
			return u, ""
		}
	}
	switch u.Type {
	case "TYPE", "DTEL", "TTYP":
		if k := strings.IndexByte(u.Name, '_'); k > 0 {
			if _, ok := c.repo.find("TYPE", u.Name[:k]); ok {
				u.Type, u.Name = "TYPE", u.Name[:k]
			}
		}
	}
	return u, ""
}

// normalize upper-cases and trims a usage; it allocates only when needed.
func normalize(u Usage) Usage {
	u.Type, u.Name = upperTrim(u.Type), upperTrim(u.Name)
	return u
}

func upperTrim(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || ('a' <= c && c <= 'z') {
			return strings.ToUpper(strings.TrimSpace(s))
		}
	}
	return s
}

func levelOf(s State, deprecated bool) (Level, string) {
	switch s {
	case StateReleased:
		if deprecated {
			return LevelA, "released API (deprecated in another release channel)"
		}
		return LevelA, "released API"
	case StateDeprecated:
		return LevelA, "deprecated released API: still level A, replace with its successor"
	case StateClassicAPI:
		return LevelB, "classic API"
	case StateNoAPI:
		return LevelD, "classified noAPI: not to be used"
	case StateNotToBeReleased, StateNotToBeReleasedStable:
		return LevelC, "SAP-internal object, not to be released"
	}
	return LevelC, "SAP-internal object (not in the Cloudification Repository)"
}

// Classify gives an object's level from its usages. Repeated usages (same
// type, name and kind) give one reason.
func (c *Classifier) Classify(usages []Usage) Result {
	res := Result{Level: LevelA}
	var seen map[Usage]struct{}
	if len(usages) > 8 {
		seen = make(map[Usage]struct{}, len(usages))
	}
	for _, u := range usages {
		r, ok := c.Reason(u)
		if !ok {
			res.Custom++
			continue
		}
		if seen != nil {
			if _, dup := seen[r.Usage]; dup {
				continue
			}
			seen[r.Usage] = struct{}{}
		} else if containsUsage(res.Reasons, r.Usage) {
			continue
		}
		if r.Level > res.Level {
			res.Level = r.Level
		}
		res.Reasons = append(res.Reasons, r)
	}
	return res
}

func containsUsage(rs []Reason, u Usage) bool {
	for i := range rs {
		if rs[i].Usage == u {
			return true
		}
	}
	return false
}

// ConversionItem is an SAP object an ECC object uses that S/4HANA replaces:
// deprecated, or not released with a successor SAP names.
type ConversionItem struct {
	Object           Object   `json:"object"`
	State            State    `json:"state"`
	Deprecated       bool     `json:"deprecated,omitempty"`
	Successors       []Object `json:"successors,omitempty"`
	SuccessorConcept string   `json:"successorConcept,omitempty"`
}

// ConversionReadiness lists, for an ECC object, the SAP objects it uses that
// have S/4HANA successors or are deprecated, once per object.
func (c *Classifier) ConversionReadiness(usages []Usage) []ConversionItem {
	var out []ConversionItem
	seen := map[Object]struct{}{}
	for _, u := range usages {
		if c.IsCustom(u.Name) {
			continue
		}
		u = normalize(u)
		i, ok := c.repo.find(u.Type, u.Name)
		if !ok {
			u, _ = c.resolve(u)
			if i, ok = c.repo.find(u.Type, u.Name); !ok {
				continue
			}
		}
		typ := objectType(u.Type)
		e := &c.repo.entries[i]
		if !e.deprecated && e.state != StateDeprecated && len(e.successors) == 0 && e.concept == "" {
			continue
		}
		if e.state == StateReleased && !e.deprecated {
			continue // released and current: nothing to convert
		}
		o := Object{Type: typ, Name: u.Name}
		if _, dup := seen[o]; dup {
			continue
		}
		seen[o] = struct{}{}
		out = append(out, ConversionItem{Object: o, State: e.state, Deprecated: e.deprecated || e.state == StateDeprecated,
			Successors: e.successors, SuccessorConcept: e.concept})
	}
	return out
}
