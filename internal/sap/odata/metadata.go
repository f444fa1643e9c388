package odata

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is what a service's $metadata says about its entity types and sets: enough to check
// a write before it is sent.
type Schema struct {
	Namespace   string
	EntityTypes map[string]*EntityType // by qualified name, e.g. API_BUSINESS_PARTNER.A_BusinessPartnerType
	EntitySets  map[string]*EntitySet  // by set name, e.g. A_BusinessPartner
}

// EntityType is one EntityType with its key and properties in document order.
type EntityType struct {
	Name       string // qualified
	Key        []string
	Properties []Property
	byName     map[string]int
}

// Property is one Property. MaxLength 0 means none given; Creatable/Updatable follow
// sap:creatable / sap:updatable (default true).
type Property struct {
	Name      string
	Type      string // Edm.String, Edm.Decimal, ...
	MaxLength int
	Precision int
	Scale     int
	Nullable  bool
	Creatable bool
	Updatable bool
}

// EntitySet is one EntitySet with the SAP annotations on what it allows.
type EntitySet struct {
	Name       string
	EntityType *EntityType
	Creatable  bool
	Updatable  bool
	Deletable  bool
}

// Property returns the named property.
func (t *EntityType) Property(name string) (Property, bool) {
	i, ok := t.byName[name]
	if !ok {
		return Property{}, false
	}
	return t.Properties[i], true
}

type edmx struct {
	Schemas []edmSchema `xml:"DataServices>Schema"`
}

type edmSchema struct {
	Namespace   string       `xml:"Namespace,attr"`
	EntityTypes []edmType    `xml:"EntityType"`
	Containers  []edmContain `xml:"EntityContainer"`
}

type edmType struct {
	Name       string    `xml:"Name,attr"`
	Key        []edmRef  `xml:"Key>PropertyRef"`
	Properties []edmProp `xml:"Property"`
}

type edmRef struct {
	Name string `xml:"Name,attr"`
}

type edmProp struct {
	Name      string     `xml:"Name,attr"`
	Type      string     `xml:"Type,attr"`
	MaxLength string     `xml:"MaxLength,attr"`
	Precision string     `xml:"Precision,attr"`
	Scale     string     `xml:"Scale,attr"`
	Nullable  string     `xml:"Nullable,attr"`
	Attrs     []xml.Attr `xml:",any,attr"`
}

type edmContain struct {
	Sets []edmSet `xml:"EntitySet"`
}

type edmSet struct {
	Name       string     `xml:"Name,attr"`
	EntityType string     `xml:"EntityType,attr"`
	Attrs      []xml.Attr `xml:",any,attr"`
}

const sapNS = "http://www.sap.com/Protocols/SAPData"

// sapFlag reads an sap:<name> annotation; absent means true.
func sapFlag(attrs []xml.Attr, name string) bool {
	for _, a := range attrs {
		if a.Name.Space == sapNS && a.Name.Local == name {
			return a.Value != "false"
		}
	}
	return true
}

// ParseMetadata reads an OData v2 $metadata document (edmx).
func ParseMetadata(body []byte) (*Schema, error) {
	if !utf8.Valid(body) {
		return nil, &Error{Kind: ErrMalformed, Message: "$metadata is not valid UTF-8"}
	}
	var doc edmx
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&doc); err != nil {
		return nil, &Error{Kind: ErrMalformed, Message: "$metadata: " + err.Error()}
	}
	if len(doc.Schemas) == 0 {
		return nil, &Error{Kind: ErrMalformed, Message: "$metadata has no Schema"}
	}
	s := &Schema{EntityTypes: map[string]*EntityType{}, EntitySets: map[string]*EntitySet{}}
	for _, sch := range doc.Schemas {
		if s.Namespace == "" {
			s.Namespace = sch.Namespace
		}
		for _, et := range sch.EntityTypes {
			t := &EntityType{Name: sch.Namespace + "." + et.Name, byName: map[string]int{}}
			for _, k := range et.Key {
				t.Key = append(t.Key, k.Name)
			}
			for _, p := range et.Properties {
				prop := Property{
					Name: p.Name, Type: p.Type, Nullable: p.Nullable != "false",
					Creatable: sapFlag(p.Attrs, "creatable"), Updatable: sapFlag(p.Attrs, "updatable"),
				}
				prop.MaxLength, _ = strconv.Atoi(p.MaxLength)
				prop.Precision, _ = strconv.Atoi(p.Precision)
				prop.Scale, _ = strconv.Atoi(p.Scale)
				t.byName[p.Name] = len(t.Properties)
				t.Properties = append(t.Properties, prop)
			}
			s.EntityTypes[t.Name] = t
		}
	}
	for _, sch := range doc.Schemas {
		for _, c := range sch.Containers {
			for _, es := range c.Sets {
				t := s.EntityTypes[es.EntityType]
				if t == nil {
					return nil, &Error{Kind: ErrMalformed, Message: fmt.Sprintf("$metadata: entity set %s names unknown type %s", es.Name, es.EntityType)}
				}
				s.EntitySets[es.Name] = &EntitySet{
					Name: es.Name, EntityType: t,
					Creatable: sapFlag(es.Attrs, "creatable"), Updatable: sapFlag(es.Attrs, "updatable"),
					Deletable: sapFlag(es.Attrs, "deletable"),
				}
			}
		}
	}
	return s, nil
}

// Write kinds for ValidateWrite.
const (
	WriteCreate = "create"
	WriteUpdate = "update"
)

// ValidateWrite checks an entity body against the set's type before it is sent: the set
// allows the write, every field exists and may be written, strings fit MaxLength, values
// have the property's type, and null only where Nullable. Missing fields are not an error:
// SAP fills defaults and numbers keys such as BusinessPartner from a number range. The
// first problem (fields in name order) is a bad-input *Error naming the field.
func (s *Schema) ValidateWrite(set, kind string, entity map[string]any) error {
	if kind != WriteCreate && kind != WriteUpdate {
		return &Error{Kind: ErrBadInput, Message: "write kind " + kind + " is neither create nor update"}
	}
	es, ok := s.EntitySets[set]
	if !ok {
		return &Error{Kind: ErrNotFound, Message: "entity set " + set + " is not in the service's $metadata"}
	}
	if kind == WriteCreate && !es.Creatable || kind == WriteUpdate && !es.Updatable {
		return &Error{Kind: ErrBadInput, Message: "entity set " + set + " does not allow " + kind}
	}
	names := make([]string, 0, len(entity))
	for n := range entity {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == "__metadata" {
			continue
		}
		p, ok := es.EntityType.Property(n)
		if !ok {
			return badField(n, "is not a property of "+es.EntityType.Name)
		}
		if kind == WriteCreate && !p.Creatable || kind == WriteUpdate && !p.Updatable {
			return badField(n, "may not be written on "+kind+" (sap:"+kind+"able=false)")
		}
		if err := checkValue(p, entity[n]); err != nil {
			return err
		}
	}
	return nil
}

func badField(field, msg string) error {
	return &Error{Kind: ErrBadInput, Field: field, Message: field + " " + msg}
}

// checkValue checks a JSON value against an Edm type. OData v2 JSON carries Edm.Decimal,
// Edm.Int64 and dates as strings, so strings are accepted for them.
func checkValue(p Property, v any) error {
	if v == nil {
		if !p.Nullable {
			return badField(p.Name, "may not be null")
		}
		return nil
	}
	switch p.Type {
	case "Edm.String":
		str, ok := v.(string)
		if !ok {
			return badField(p.Name, "must be a string")
		}
		if p.MaxLength > 0 && utf8.RuneCountInString(str) > p.MaxLength {
			return badField(p.Name, fmt.Sprintf("is %d characters long, at most %d allowed", utf8.RuneCountInString(str), p.MaxLength))
		}
	case "Edm.Boolean":
		if _, ok := v.(bool); !ok {
			return badField(p.Name, "must be true or false")
		}
	case "Edm.Int16", "Edm.Int32", "Edm.Byte", "Edm.SByte":
		if _, ok := v.(float64); !ok {
			if _, ok := v.(int); !ok {
				return badField(p.Name, "must be a number")
			}
		}
	case "Edm.Decimal", "Edm.Int64", "Edm.Double", "Edm.Single":
		switch x := v.(type) {
		case float64, int:
		case string:
			if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return badField(p.Name, "must be a number")
			}
		default:
			return badField(p.Name, "must be a number")
		}
	}
	return nil
}
