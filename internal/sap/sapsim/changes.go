package sapsim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/sapagent/sapagent/internal/sap"
)

// genChange is what happened to a generated custom object since it was generated.
type genChange struct {
	seq      int64 // change-log seq of the latest change
	version  int
	deleted  bool
	shadowed bool // an activated object of the same name replaced it
}

// activatable are the object types ActivateObject accepts.
var activatable = map[string]bool{"PROG": true, "CLAS": true, "INTF": true, "FUNC": true, "DDLS": true, "DDLX": true, "DCLS": true,
	"BDEF": true, "SRVD": true, "ENHO": true, "INCL": true, "TABL": true, "DTEL": true, "DOMA": true}

// prepare extracts what a loaded object uses (the where-used index a real system updates on
// activation) and marks the catalog stale. Callers hold s.mu for writing.
func (s *System) prepare(o *object) {
	o.refs = extractRefs(o)
	o.relCount = len(s.relationships(o))
	s.objVersion++
}

// rebuildKeys refreshes the sorted keys of the loaded objects. Callers hold s.mu for writing.
func (s *System) rebuildKeys() {
	s.matKeys = sortedNames(s.objects)
	s.objVersion++
}

// ActivateObject creates or modifies a custom object as a transport import or an activation in
// SE80 would: its references are extracted again and the change log gets an entry (created or
// modified) that probe_changes and the index phases' after_seq see. A generated object of the
// same name is replaced by this one.
func (s *System) ActivateObject(typ, name, description, pkg, source string) error {
	typ, name = strings.ToUpper(strings.TrimSpace(typ)), strings.ToUpper(strings.TrimSpace(name))
	if !activatable[typ] {
		return fmt.Errorf("cannot activate object type %q", typ)
	}
	if !isCustomName(name) || len(name) > 40 {
		return fmt.Errorf("%s %q is not a customer object name (Z* or Y*, at most 40 characters)", typ, name)
	}
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.catalog()
	key := typ + "/" + name
	change := "modified"
	o, exists := s.objects[key]
	if !exists {
		o = &object{Type: typ, Name: name, CreatedBy: "DEVELOPER"}
		if g, ok := s.generatedObject(typ, name); ok {
			o = g
			o.generated = false
			s.genChanged[g.genIndex] = genChange{shadowed: true, version: g.version}
		} else {
			change = "created"
		}
		s.objects[key] = o
		s.rebuildKeys()
	}
	if description != "" {
		o.Description = description
	}
	if pkg != "" {
		o.Package = strings.ToUpper(pkg)
	}
	if o.Package == "" {
		o.Package = "$TMP"
	}
	o.Source = source
	if o.createdOn == "" && change != "created" {
		o.createdOn = o.ChangedAt
	}
	o.ChangedAt = time.Now().UTC().Format("2006-01-02")
	s.prepare(o)
	if typ == "FUNC" {
		s.funcs[name] = &function{iface: sapFunctionInterface(o), run: customFunction(name)}
	}
	o.Seq = s.logChange(typ, name, change, "DEVELOPER")
	s.discover(before, o)
	return nil
}

// discover records the SAP objects o references that the catalog did not list before (the
// simulator learns of SAP objects from custom code), so a catalog delta after o's change lists
// them once. Callers hold s.mu for writing.
func (s *System) discover(before *catalogSnapshot, o *object) {
	after := s.catalog()
	for _, r := range o.refs {
		typ := s.resolveType(r.Type, r.Name)
		k := typ + "/" + r.Name
		if _, was := before.byKey[k]; was {
			continue
		}
		if _, now := after.byKey[k]; now {
			s.discovered[o.Seq] = append(s.discovered[o.Seq], k)
			before.byKey[k] = -1 // once per object, even if referenced in several ways
		}
	}
}

// DeleteObject deletes a custom object (loaded or generated); probe_changes reports it with
// change_type "deleted".
func (s *System) DeleteObject(typ, name string) error {
	typ, name = strings.ToUpper(strings.TrimSpace(typ)), strings.ToUpper(strings.TrimSpace(name))
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := typ + "/" + name
	if _, ok := s.objects[key]; ok {
		delete(s.objects, key)
		if typ == "FUNC" {
			delete(s.funcs, name)
		}
		s.rebuildKeys()
	} else if i, ok := s.gen.customIndex(typ, name); ok && !s.genChanged[i].deleted && !s.genChanged[i].shadowed {
		s.genChanged[i] = genChange{deleted: true, version: s.genChanged[i].version}
	} else {
		return errorf(http.StatusNotFound, sap.ErrNotFound, "NOT_FOUND", "no custom object %s %s in %s", typ, name, s.info.SystemID)
	}
	seq := s.logChange(typ, name, "deleted", "DEVELOPER")
	if i, ok := s.gen.customIndex(typ, name); ok {
		ch := s.genChanged[i]
		ch.deleted, ch.seq = true, seq
		s.genChanged[i] = ch
	}
	return nil
}

// TouchCustomObjects modifies n custom objects as a transport would (a new version of their
// source; generated objects first, in a rotation) and returns their names, oldest change first.
func (s *System) TouchCustomObjects(n int) []string {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if s.gen.custom > 0 {
		for tried := 0; len(out) < n && tried < s.gen.custom; tried++ {
			i := s.touchNext % s.gen.custom
			s.touchNext++
			ch := s.genChanged[i]
			if ch.deleted || ch.shadowed {
				continue
			}
			ch.version++
			name := s.gen.customName(i)
			ch.seq = s.logChange(s.gen.customType(i), name, "modified", "DEVELOPER")
			s.genChanged[i] = ch
			out = append(out, name)
		}
		return out
	}
	for tried := 0; len(out) < n && tried < len(s.matKeys); tried++ {
		o := s.objects[s.matKeys[s.touchNext%len(s.matKeys)]]
		s.touchNext++
		if o.Source == "" {
			continue
		}
		o.version++
		o.Source = strings.TrimRight(o.Source, "\n") + fmt.Sprintf("\n\" changed by transport, version %d\n", o.version)
		if o.createdOn == "" {
			o.createdOn = o.ChangedAt
		}
		o.ChangedAt = time.Now().UTC().Format("2006-01-02")
		s.prepare(o)
		o.Seq = s.logChange(o.Type, o.Name, "modified", "DEVELOPER")
		out = append(out, o.Name)
	}
	return out
}

// ChangeStandardObject records that a support package or SAP Note changed a standard object
// of the catalog; index/catalog_context with after_seq lists it again.
func (s *System) ChangeStandardObject(typ, name string) error {
	typ, name = strings.ToUpper(strings.TrimSpace(typ)), strings.ToUpper(strings.TrimSpace(name))
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.catalogItem(typ, name); !ok || s.isCustom(name) {
		return errorf(http.StatusNotFound, sap.ErrNotFound, "NOT_FOUND", "no standard object %s %s in %s", typ, name, s.info.SystemID)
	}
	s.stdSeq[typ+"/"+name] = s.logChange(typ, name, "modified", "SAP")
	return nil
}

// logChange appends to the change log and returns the entry's seq; callers hold s.mu.
func (s *System) logChange(objType, name, change, by string) int64 {
	seq := int64(1)
	if n := len(s.changes); n > 0 {
		seq = s.changes[n-1].Seq + 1
	}
	s.changes = append(s.changes, sap.Change{Seq: seq, ObjectType: objType, ObjectName: name, ChangeType: change, ChangedAt: time.Now().UTC().Format(time.RFC3339), ChangedBy: by})
	return seq
}

func (s *System) probeChanges(req sap.ProbeChangesRequest) sap.ProbeChangesResponse {
	s.mu.RLock()
	defer s.mu.RUnlock()
	limit := req.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	res := sap.ProbeChangesResponse{Changes: []sap.Change{}}
	if n := len(s.changes); n > 0 {
		res.LatestSeq = s.changes[n-1].Seq
	}
	for p := s.changeIndexAfter(req.AfterSeq); p < len(s.changes); p++ {
		if len(res.Changes) == limit {
			res.More = true
			break
		}
		res.Changes = append(res.Changes, s.changes[p])
	}
	return res
}

// changeObjectClass is the change-document object class SAP logs a table's changes under.
var changeObjectClass = map[string]string{"MARA": "MATERIAL", "MAKT": "MATERIAL", "MARC": "MATERIAL", "MARD": "MATERIAL", "MBEW": "MATERIAL",
	"KNA1": "DEBI", "KNB1": "DEBI", "KNVV": "DEBI", "LFA1": "KRED", "LFB1": "KRED", "LFM1": "KRED",
	"VBAK": "VERKBELEG", "VBAP": "VERKBELEG", "VBEP": "VERKBELEG", "EKKO": "EINKBELEG", "EKPO": "EINKBELEG", "BKPF": "BELEG", "BSEG": "BELEG"}

// changeDocument writes CDHDR and CDPOS rows for one row written to t (old nil: inserted), as
// SAP's change documents record business data changes. Callers hold s.mu for writing.
func (s *System) changeDocument(t *table, old, row map[string]string, by string) {
	hdr, pos := s.tables["CDHDR"], s.tables["CDPOS"]
	if hdr == nil || pos == nil || t == hdr || t == pos {
		return
	}
	s.cdNext++
	nr := fmt.Sprintf("%010d", s.cdNext)
	class := changeObjectClass[t.schema.Table]
	if class == "" {
		class = t.schema.Table
	}
	var keyParts []string
	for _, k := range t.keys {
		keyParts = append(keyParts, row[k])
	}
	objectID := strings.Join(keyParts, "")
	tabKey := client + objectID
	now := time.Now().UTC()
	ind := "U"
	if old == nil {
		ind = "I"
	}
	hdr.put(map[string]string{"MANDANT": client, "OBJECTCLAS": class, "OBJECTID": clip(objectID, 90), "CHANGENR": nr, "USERNAME": by,
		"UDATE": now.Format("20060102"), "UTIME": now.Format("150405"), "TCODE": "ZSAPAGENT", "CHANGE_IND": ind})
	addPos := func(field, chng, newV, oldV string) {
		pos.put(map[string]string{"MANDANT": client, "OBJECTCLAS": class, "OBJECTID": clip(objectID, 90), "CHANGENR": nr, "TABNAME": t.schema.Table,
			"TABKEY": clip(tabKey, 70), "FNAME": field, "CHNGIND": chng, "VALUE_NEW": clip(newV, 254), "VALUE_OLD": clip(oldV, 254)})
	}
	if old == nil {
		addPos("KEY", "I", "", "")
		return
	}
	fields := make([]string, 0, len(row))
	for f := range row {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		if row[f] != old[f] {
			addPos(f, "U", row[f], old[f])
		}
	}
}

func clip(v string, n int) string {
	if len(v) > n {
		return v[:n]
	}
	return v
}
