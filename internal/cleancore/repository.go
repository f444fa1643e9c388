// Package cleancore classifies custom ABAP objects into SAP's Clean Core levels
// (A–D, concept of August 2025) from the objects they use, looked up in SAP's
// Cloudification Repository.
//
// NOTICE: data/ holds an unmodified copy of files from SAP's Cloudification
// Repository (github.com/SAP/abap-atc-cr-cv-s4hc), Copyright SAP SE, licensed
// under the Apache License 2.0; the licence text is data/LICENSE.
package cleancore

import (
	"context"
	"embed"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed data/LICENSE data/README.md data/objectReleaseInfo_BTPLatest.json data/objectClassifications_SAP.json data/objectReleaseInfo_PCELatest.csv
var embedded embed.FS

// File names of the repository, as SAP publishes them.
const (
	FileReleaseInfo     = "objectReleaseInfo_BTPLatest.json"
	FileClassifications = "objectClassifications_SAP.json"
	FilePCE             = "objectReleaseInfo_PCELatest.csv"
)

// State is an object's state in the repository.
type State uint8

const (
	StateUnknown               State = iota // not in the repository: SAP-internal
	StateReleased                           // released (BTP or Cloud ERP Private)
	StateDeprecated                         // released once, now deprecated
	StateClassicAPI                         // objectClassifications: classicAPI
	StateNotToBeReleasedStable              // PCE: NOT_TO_BE_RELEASED_STABLE
	StateNotToBeReleased                    // notToBeReleased / NOT_TO_BE_RELEASED
	StateNoAPI                              // objectClassifications: noAPI
)

var stateNames = [...]string{"unknown", "released", "deprecated", "classicAPI", "notToBeReleasedStable", "notToBeReleased", "noAPI"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// MarshalText makes states readable in JSON.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// priority decides which state an object keeps when several files name it:
// the most usable classification wins (an object released for Cloud ERP
// Private and classified classicAPI is released), but an explicit noAPI
// beats a plain "not to be released".
var priority = [...]uint8{
	StateUnknown:               0,
	StateNotToBeReleased:       1,
	StateNotToBeReleasedStable: 2,
	StateNoAPI:                 3,
	StateClassicAPI:            4,
	StateDeprecated:            5,
	StateReleased:              6,
}

func parseState(s string) (State, bool) {
	switch strings.ToLower(s) {
	case "released":
		return StateReleased, true
	case "deprecated":
		return StateDeprecated, true
	case "classicapi":
		return StateClassicAPI, true
	case "nottobereleased", "not_to_be_released":
		return StateNotToBeReleased, true
	case "nottobereleasedstable", "not_to_be_released_stable":
		return StateNotToBeReleasedStable, true
	case "noapi":
		return StateNoAPI, true
	}
	return StateUnknown, false
}

// Object names one repository object by its object type and key
// (FUNC + function module name, CDS_STOB + CDS view name, TABL + table …).
type Object struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// entry is what the repository keeps per object: a state, whether any file
// calls it deprecated, and successors (rare, so a nil slice costs nothing).
type entry struct {
	state      State
	deprecated bool
	concept    string
	successors []Object
}

// Repository is a loaded Cloudification Repository: one compact entry per
// (object type, name).
type Repository struct {
	index   map[string]uint32 // "TYPE\x00NAME" -> entries index
	entries []entry
}

// Len is the number of distinct (type, name) objects.
func (r *Repository) Len() int { return len(r.entries) }

// Entry is an object's repository information.
type Entry struct {
	State            State
	Deprecated       bool
	Successors       []Object
	SuccessorConcept string
}

// Lookup finds an object by TADIR/object type and name, never by name alone.
// DDLS is looked up as CDS_STOB and G4BA as G4S, as the files key them.
func (r *Repository) Lookup(typ, name string) (Entry, bool) {
	i, ok := r.find(typ, name)
	if !ok {
		return Entry{}, false
	}
	e := &r.entries[i]
	return Entry{State: e.state, Deprecated: e.deprecated, Successors: e.successors, SuccessorConcept: e.concept}, true
}

func (r *Repository) find(typ, name string) (uint32, bool) {
	var buf [128]byte
	b := append(buf[:0], objectType(typ)...)
	b = append(b, 0)
	b = appendUpper(b, name)
	i, ok := r.index[string(b)] // no allocation for map lookups of string(bytes)
	return i, ok
}

// objectType maps a TADIR type to the object type the files key by.
func objectType(t string) string {
	switch t {
	case "DDLS", "ddls", "STOB":
		return "CDS_STOB"
	case "G4BA":
		return "G4S"
	}
	return t
}

func appendUpper(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// builder merges the files into one compact repository; strings are interned
// so repeated types and successor names are stored once.
type builder struct {
	r      *Repository
	intern map[string]string
}

func newBuilder() *builder {
	return &builder{r: &Repository{index: make(map[string]uint32, 50000)}, intern: map[string]string{}}
}

func (b *builder) str(s string) string {
	if v, ok := b.intern[s]; ok {
		return v
	}
	s = strings.Clone(s)
	b.intern[s] = s
	return s
}

func (b *builder) add(typ, name string, st State, concept string, succ []Object) {
	typ, name = strings.ToUpper(strings.TrimSpace(typ)), strings.ToUpper(strings.TrimSpace(name))
	if typ == "" || name == "" {
		return
	}
	k := typ + "\x00" + name
	i, ok := b.r.index[k]
	if !ok {
		i = uint32(len(b.r.entries))
		b.r.entries = append(b.r.entries, entry{})
		b.r.index[k] = i
	}
	e := &b.r.entries[i]
	if st == StateDeprecated {
		e.deprecated = true
	}
	if priority[st] > priority[e.state] {
		e.state = st
	}
	if concept != "" && e.concept == "" {
		e.concept = b.str(concept)
	}
	for _, s := range succ {
		s = Object{Type: b.str(objectType(strings.ToUpper(s.Type))), Name: b.str(strings.ToUpper(s.Name))}
		dup := false
		for _, have := range e.successors {
			if have == s {
				dup = true
				break
			}
		}
		if !dup {
			e.successors = append(e.successors, s)
		}
	}
}

func (b *builder) done() *Repository {
	// Trim successor slices so appends' spare capacity is not kept.
	for i := range b.r.entries {
		if s := b.r.entries[i].successors; s != nil {
			b.r.entries[i].successors = s[:len(s):len(s)]
		}
	}
	b.intern = nil
	return b.r
}

type jsonObject struct {
	TadirObject          string `json:"tadirObject"`
	TadirObjName         string `json:"tadirObjName"`
	ObjectType           string `json:"objectType"`
	ObjectKey            string `json:"objectKey"`
	State                string `json:"state"`
	SuccessorConceptName string `json:"successorConceptName"`
	Successors           []struct {
		ObjectType string `json:"objectType"`
		ObjectKey  string `json:"objectKey"`
	} `json:"successors"`
}

// addJSON streams a formatVersion 1 (objectReleaseInfo) or 2
// (objectClassifications) file entry by entry, never holding it decoded.
func (b *builder) addJSON(r io.Reader, name string) error {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("cleancore: %s: not a JSON object", name)
	}
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("cleancore: %s: %w", name, err)
		}
		key, _ := t.(string)
		if key != "objectReleaseInfo" && key != "objectClassifications" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("cleancore: %s: %w", name, err)
			}
			continue
		}
		found = true
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf("cleancore: %s: %s is not an array", name, key)
		}
		var o jsonObject
		for dec.More() {
			o = jsonObject{}
			if err := dec.Decode(&o); err != nil {
				return fmt.Errorf("cleancore: %s: %w", name, err)
			}
			st, ok := parseState(o.State)
			if !ok {
				continue // a state this version does not know: leave the object unknown
			}
			var succ []Object
			for _, s := range o.Successors {
				succ = append(succ, Object{Type: s.ObjectType, Name: s.ObjectKey})
			}
			typ, key := o.ObjectType, o.ObjectKey
			if typ == "" {
				typ, key = o.TadirObject, o.TadirObjName
			}
			b.add(typ, key, st, o.SuccessorConceptName, succ)
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("cleancore: %s: %w", name, err)
		}
	}
	if !found {
		return fmt.Errorf("cleancore: %s: no objectReleaseInfo or objectClassifications array", name)
	}
	return nil
}

// addCSV reads objectReleaseInfo_PCELatest.csv: one row per (object,
// successor), columns found by header name.
func (b *builder) addCSV(r io.Reader, name string) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("cleancore: %s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	need := []string{"object_type", "object_key", "state"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return fmt.Errorf("cleancore: %s: missing column %s", name, n)
		}
	}
	get := func(rec []string, n string) string {
		if i, ok := col[n]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cleancore: %s: %w", name, err)
		}
		st, ok := parseState(get(rec, "state"))
		if !ok {
			continue
		}
		var succ []Object
		if t, n := get(rec, "successor_object_type"), get(rec, "successor_object_name"); t != "" && n != "" {
			succ = []Object{{Type: t, Name: n}}
		}
		b.add(get(rec, "object_type"), get(rec, "object_key"), st, get(rec, "successor_concept_name"), succ)
	}
}

var (
	defaultOnce sync.Once
	defaultRepo *Repository
	defaultErr  error
)

// Default is the copy shipped inside the product, parsed once on first use.
func Default() (*Repository, error) {
	defaultOnce.Do(func() {
		defaultRepo, defaultErr = build(func(name string) (io.ReadCloser, error) {
			return embedded.Open("data/" + name)
		}, true)
	})
	return defaultRepo, defaultErr
}

// License is the licence text of the shipped copy (Apache-2.0).
func License() string {
	b, _ := embedded.ReadFile("data/LICENSE")
	return string(b)
}

// Load reads a newer copy from a directory or an http(s) base URL holding
// the three files under SAP's names (e.g. the raw URL of the repository's
// folder). The PCE CSV may be absent; the two JSON files are required.
func Load(ctx context.Context, location string) (*Repository, error) {
	if strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://") {
		base := strings.TrimSuffix(location, "/") + "/"
		client := &http.Client{Timeout: 2 * time.Minute}
		return build(func(name string) (io.ReadCloser, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+name, nil)
			if err != nil {
				return nil, err
			}
			resp, err := client.Do(req)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode == http.StatusNotFound {
				resp.Body.Close()
				return nil, os.ErrNotExist
			}
			if resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				return nil, fmt.Errorf("GET %s: %s", name, resp.Status)
			}
			return struct {
				io.Reader
				io.Closer
			}{io.LimitReader(resp.Body, maxFileBytes), resp.Body}, nil
		}, false)
	}
	return build(func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(location, name))
	}, false)
}

// maxFileBytes bounds a downloaded file (today's largest is 3.5 MB).
const maxFileBytes = 256 << 20

func build(open func(string) (io.ReadCloser, error), strict bool) (*Repository, error) {
	b := newBuilder()
	for _, f := range []struct {
		name     string
		optional bool
		add      func(io.Reader, string) error
	}{
		{FileReleaseInfo, false, b.addJSON},
		{FileClassifications, false, b.addJSON},
		{FilePCE, !strict, b.addCSV},
	} {
		rc, err := open(f.name)
		if err != nil {
			if f.optional && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("cleancore: open %s: %w", f.name, err)
		}
		err = f.add(rc, f.name)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return b.done(), nil
}
