package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
)

// schemaOf describes how encoding/json writes a Go value of v's type, so the document's
// response schemas follow the structs the handlers serialise rather than a copy of them.
// A field without omitempty is required; a pointer may be null; json.RawMessage is any JSON.
func schemaOf(v any) map[string]any { return typeSchema(reflect.TypeOf(v)) }

var (
	timeType = reflect.TypeFor[time.Time]()
	uuidType = reflect.TypeFor[uuid.UUID]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func typeSchema(t reflect.Type) map[string]any {
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case uuidType:
		return uuidStr
	case rawType:
		return map[string]any{} // whatever JSON the row holds
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := typeSchema(t.Elem())
		if typ, ok := s["type"].(string); ok {
			return merge(s, map[string]any{"type": []string{typ, "null"}})
		}
		return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
	case reflect.String:
		return strType
	case reflect.Bool:
		return boolean
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return integer
	case reflect.Float32, reflect.Float64:
		return number
	case reflect.Slice, reflect.Array:
		return arrayOf(typeSchema(t.Elem()))
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props, required := map[string]any{}, []string{}
		structFields(t, props, &required)
		s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return map[string]any{}
}

// structFields adds t's JSON fields, those of embedded structs included, as encoding/json
// flattens them.
func structFields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}

// narrowed is a struct's schema with some properties described more closely than their Go
// type says (a string that holds one of a few values, a raw JSON column that holds an object).
func narrowed(s map[string]any, closer map[string]any) map[string]any {
	return merge(s, map[string]any{"properties": merge(s["properties"].(map[string]any), closer)})
}
