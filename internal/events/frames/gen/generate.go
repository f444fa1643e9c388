package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/events/frames"
)

type file struct {
	path    string // relative to the module root
	content []byte
}

const (
	schemaPath = "schemas/events.schema.json"
	tsPath     = "web/src/chat/events.gen.ts"
)

// generate renders both files from the catalogue and the doc comments of the Go sources.
func generate(root string) ([]file, error) {
	g, err := newGenerator(root)
	if err != nil {
		return nil, err
	}
	if err := g.checkCatalogue(); err != nil {
		return nil, err
	}
	for _, e := range catalogue {
		if err := g.addFrame(e); err != nil {
			return nil, err
		}
	}
	schema, err := g.schema()
	if err != nil {
		return nil, err
	}
	return []file{{schemaPath, schema}, {tsPath, g.typescript()}}, nil
}

type generator struct {
	root, module string
	docs         map[string]*pkgDocs // by package path
	framesPkg    string
	defs         map[string]map[string]any // schema $defs by name
	defTypes     map[string]reflect.Type   // which Go type each def stands for
	frameDefs    []frameDef
	records      map[string]*tsInterface
}

type frameDef struct {
	entry
	name   string // FooFrame
	typ    string // wire type
	fields *tsInterface
}

type tsInterface struct {
	name, doc string
	fields    []tsField
}

type tsField struct {
	name, doc, ts string
	optional      bool
}

func newGenerator(root string) (*generator, error) {
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(string(mod), "\n")
	module := strings.TrimSpace(strings.TrimPrefix(first, "module"))
	return &generator{root: root, module: module, docs: map[string]*pkgDocs{},
		framesPkg: reflect.TypeFor[frames.Status]().PkgPath(),
		defs:      map[string]map[string]any{}, defTypes: map[string]reflect.Type{}, records: map[string]*tsInterface{}}, nil
}

// checkCatalogue: every type of package frames with a FrameType method is in the catalogue.
func (g *generator) checkCatalogue() error {
	d, err := g.pkgDocs(g.framesPkg)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, e := range catalogue {
		listed[baseName(reflect.TypeOf(e.frame))] = true
	}
	for _, name := range d.frameTypes {
		if !listed[name] {
			return fmt.Errorf("frames.%s is not in the generator's catalogue (internal/events/frames/gen/catalogue.go)", name)
		}
	}
	return nil
}

func (g *generator) addFrame(e entry) error {
	t := reflect.TypeOf(e.frame)
	name := baseName(t) + "Frame"
	typ := e.frame.FrameType()
	props, required, iface, err := g.structFields(t)
	if err != nil {
		return err
	}
	iface.name = name
	props["type"] = map[string]any{"const": typ}
	required = append([]string{"type"}, required...)
	def := map[string]any{"type": "object", "required": required, "properties": props}
	if iface.doc != "" {
		def["description"] = iface.doc
	}
	if e.envelope == published {
		def["$ref"] = "#/$defs/published"
	}
	if err := g.addDef(name, t, def); err != nil {
		return err
	}
	g.frameDefs = append(g.frameDefs, frameDef{entry: e, name: name, typ: typ, fields: iface})
	return nil
}

func (g *generator) addDef(name string, t reflect.Type, def map[string]any) error {
	if prev, ok := g.defTypes[name]; ok && prev != t {
		return fmt.Errorf("two types are named %s: %v and %v", name, prev, t)
	}
	g.defTypes[name], g.defs[name] = t, def
	return nil
}

// structFields describes a struct's JSON fields for both outputs.
func (g *generator) structFields(t reflect.Type) (map[string]any, []string, *tsInterface, error) {
	docs, err := g.typeDocs(t)
	if err != nil {
		return nil, nil, nil, err
	}
	props := map[string]any{}
	var required []string
	iface := &tsInterface{doc: docs.doc}
	foreign := t.PkgPath() != g.framesPkg
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omitempty := slices.Contains(strings.Split(opts, ","), "omitempty")
		var s map[string]any
		var ts string
		if o, ok := overrides[shortPkg(t.PkgPath())+"."+baseName(t)+"."+name]; ok {
			s, ts = copyMap(o.schema), o.ts
		} else if s, ts, err = g.valueSchema(f.Type, f.Tag, foreign, omitempty); err != nil {
			return nil, nil, nil, fmt.Errorf("%v.%s: %w", t, f.Name, err)
		}
		doc := docs.fields[f.Name]
		if doc != "" {
			s["description"] = doc
		}
		props[name] = s
		if !omitempty {
			required = append(required, name)
		}
		iface.fields = append(iface.fields, tsField{name: name, doc: doc, ts: ts, optional: omitempty})
	}
	return props, required, iface, nil
}

var (
	timeType = reflect.TypeFor[time.Time]()
	uuidType = reflect.TypeFor[uuid.UUID]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// valueSchema is the schema and TypeScript type of one value. A nil pointer, slice or map of
// another package's record marshals as null (its producers are not ours to constrain); the
// frames' own fields say with omitempty when they are absent instead.
func (g *generator) valueSchema(t reflect.Type, tag reflect.StructTag, foreign, omitempty bool) (map[string]any, string, error) {
	nullable := false
	if t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), !omitempty
	}
	var s map[string]any
	var ts string
	switch {
	case t == timeType:
		s, ts = map[string]any{"type": "string", "format": "date-time"}, "string"
	case t == uuidType:
		s, ts = map[string]any{"type": "string", "format": "uuid"}, "string"
	case t == rawType:
		s, ts = map[string]any{}, "unknown"
	default:
		switch t.Kind() {
		case reflect.String:
			s, ts = map[string]any{"type": "string"}, "string"
		case reflect.Bool:
			s, ts = map[string]any{"type": "boolean"}, "boolean"
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			s, ts = map[string]any{"type": "integer"}, "number"
		case reflect.Float32, reflect.Float64:
			s, ts = map[string]any{"type": "number"}, "number"
		case reflect.Slice:
			item, its, err := g.valueSchema(t.Elem(), "", foreign, false)
			if err != nil {
				return nil, "", err
			}
			s, ts = map[string]any{"type": "array", "items": item}, its+"[]"
			if strings.Contains(its, " ") {
				ts = "(" + its + ")[]"
			}
			nullable = nullable || foreign
		case reflect.Map:
			if t.Key().Kind() != reflect.String {
				return nil, "", fmt.Errorf("map keys must be strings, not %v", t.Key())
			}
			v, vts, err := g.valueSchema(t.Elem(), "", foreign, false)
			if err != nil {
				return nil, "", err
			}
			s, ts = map[string]any{"type": "object", "additionalProperties": v}, "Record<string, "+vts+">"
			nullable = nullable || foreign
		case reflect.Struct:
			name, err := g.record(t)
			if err != nil {
				return nil, "", err
			}
			s, ts = map[string]any{"$ref": "#/$defs/" + name}, name
		case reflect.Interface:
			s, ts = map[string]any{}, "unknown"
		default:
			return nil, "", fmt.Errorf("no JSON shape for %v", t)
		}
	}
	if err := constrain(s, &ts, t, tag); err != nil {
		return nil, "", err
	}
	if nullable {
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		} else {
			s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
		}
		ts += " | null"
	}
	return s, ts, nil
}

// constrain applies the generator's struct tags (package frames' doc says which).
func constrain(s map[string]any, ts *string, t reflect.Type, tag reflect.StructTag) error {
	if v := tag.Get("enum"); v != "" {
		values := strings.Split(v, ",")
		if t.Kind() == reflect.String {
			s["enum"], *ts = values, tsUnion(values)
		} else {
			nums := make([]int, len(values))
			for i, v := range values {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("enum of %v: %w", t, err)
				}
				nums[i] = n
			}
			s["enum"], *ts = nums, strings.Join(values, " | ")
		}
		delete(s, "type")
	}
	if v := tag.Get("format"); v != "" {
		s["format"] = v
	}
	for _, k := range []string{"minimum", "minLength", "maxLength"} {
		if v := tag.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s of %v: %w", k, t, err)
			}
			s[k] = n
		}
	}
	return nil
}

// record adds the $def of a struct a frame carries, once, and returns its name.
func (g *generator) record(t reflect.Type) (string, error) {
	name := baseName(t)
	if prev, ok := g.defTypes[name]; ok {
		if prev != t {
			return "", fmt.Errorf("two types are named %s: %v and %v", name, prev, t)
		}
		return name, nil
	}
	g.defTypes[name] = t // before the fields: a record may contain itself
	props, required, iface, err := g.structFields(t)
	if err != nil {
		return "", err
	}
	iface.name = name
	def := map[string]any{"type": "object", "required": required, "properties": props}
	if iface.doc != "" {
		def["description"] = iface.doc
	}
	g.defs[name], g.records[name] = def, iface
	return name, nil
}

func (g *generator) schema() ([]byte, error) {
	var types []string
	var rules []any
	for _, f := range g.frameDefs {
		if !slices.Contains(types, f.typ) {
			types = append(types, f.typ)
		}
		cond := map[string]any{"properties": map[string]any{"type": map[string]any{"const": f.typ}}, "required": []string{"type"}}
		if f.selectedBy != "" {
			cond["required"] = []string{"type", f.selectedBy}
		} else if others := g.selectors(f.typ); len(others) > 0 {
			cond["not"] = map[string]any{"required": others}
		}
		rules = append(rules, map[string]any{"if": cond, "then": map[string]any{"$ref": "#/$defs/" + f.name}})
	}
	defs := map[string]any{"Part": partSchema, "published": map[string]any{"required": []string{"seq", "epoch", "id", "ts"}}}
	for k, v := range g.defs {
		defs[k] = v
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://sapagent.dev/schemas/events.schema.json",
		"$comment":    "Generated from internal/events/frames by `go generate ./internal/events/frames`; do not edit.",
		"title":       "sapagent conversation event",
		"description": "One frame of GET /api/agents/:id/ws or /events, or of GET /api/workspaces/:id/ws (docs/events.md).",
		"type":        "object",
		"required":    []string{"type"},
		"properties": map[string]any{
			"type":  map[string]any{"enum": types},
			"seq":   map[string]any{"type": "integer", "minimum": 0},
			"epoch": map[string]any{"type": "string", "pattern": "^[0-9a-z]{1,32}$"},
			"id":    map[string]any{"type": "string"},
			"ts":    map[string]any{"type": "string", "format": "date-time"},
		},
		"$defs": defs,
		"allOf": rules,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// selectors are the fields that select the other frames of a shared type.
func (g *generator) selectors(typ string) []string {
	var out []string
	for _, f := range g.frameDefs {
		if f.typ == typ && f.selectedBy != "" {
			out = append(out, f.selectedBy)
		}
	}
	return out
}

func (g *generator) typescript() []byte {
	var b strings.Builder
	b.WriteString(`// Code generated by internal/events/frames/gen (go generate ./internal/events/frames); DO NOT EDIT.
// The frames of the event protocol (docs/events.md), from the Go types in internal/events/frames.

/** Where a frame the event bus carries sits on its topic, and who sent it. */
export interface Published {
  /** Strictly increasing within the epoch, never reused in it. */
  seq: number
  /** The numbering seq belongs to; a new one starts when Redis lost the topic's data. */
  epoch: string
  /** The producer's event ID. */
  id: string
  /** RFC 3339 UTC time of publishing. */
  ts: string
}
`)
	for _, f := range g.frameDefs {
		b.WriteString("\n")
		writeDoc(&b, "", f.fields.doc)
		switch f.envelope {
		case published:
			fmt.Fprintf(&b, "export interface %s extends Published {\n", f.name)
		case either:
			fmt.Fprintf(&b, "export interface %s extends Partial<Published> {\n", f.name)
		default:
			fmt.Fprintf(&b, "export interface %s {\n", f.name)
		}
		fmt.Fprintf(&b, "  type: '%s'\n", f.typ)
		writeFields(&b, f.fields.fields)
		b.WriteString("}\n")
	}
	for _, topic := range []string{"agent", "workspace"} {
		var names []string
		for _, f := range g.frameDefs {
			if slices.Contains(f.topics, topic) {
				names = append(names, f.name)
			}
		}
		fmt.Fprintf(&b, "\n/** Every frame of the %s stream. */\nexport type %sFrame =\n  | %s\n", topic, strings.ToUpper(topic[:1])+topic[1:], strings.Join(names, "\n  | "))
	}
	b.WriteString("\n/** Every frame of the protocol. */\nexport type Frame = AgentFrame | WorkspaceFrame\n\nexport type FrameType = Frame['type']\n")
	for _, name := range slices.Sorted(maps.Keys(g.records)) {
		r := g.records[name]
		b.WriteString("\n")
		writeDoc(&b, "", r.doc)
		fmt.Fprintf(&b, "export interface %s {\n", r.name)
		writeFields(&b, r.fields)
		b.WriteString("}\n")
	}
	b.WriteString("\n" + partTS)
	return []byte(b.String())
}

func writeFields(b *strings.Builder, fields []tsField) {
	for _, f := range fields {
		writeDoc(b, "  ", f.doc)
		opt := ""
		if f.optional {
			opt = "?"
		}
		fmt.Fprintf(b, "  %s%s: %s\n", f.name, opt, f.ts)
	}
}

func writeDoc(b *strings.Builder, indent, doc string) {
	if doc != "" {
		fmt.Fprintf(b, "%s/** %s */\n", indent, strings.ReplaceAll(doc, "*/", "*\\/"))
	}
}

func tsUnion(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "'" + v + "'"
	}
	return strings.Join(quoted, " | ")
}

// baseName is a type's name without its type arguments.
func baseName(t reflect.Type) string {
	name, _, _ := strings.Cut(t.Name(), "[")
	return name
}

func shortPkg(path string) string { return path[strings.LastIndex(path, "/")+1:] }

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// pkgDocs are the doc comments of one package's types and their fields.
type pkgDocs struct {
	types      map[string]typeDocs
	underlying map[string]string // type Thinking Stream: Thinking → Stream
	frameTypes []string          // types with a FrameType method, in source order
}

type typeDocs struct {
	doc    string
	fields map[string]string
}

func (g *generator) typeDocs(t reflect.Type) (typeDocs, error) {
	d, err := g.pkgDocs(t.PkgPath())
	if err != nil {
		return typeDocs{}, err
	}
	name := baseName(t)
	td := d.types[name]
	if len(td.fields) == 0 { // a type defined as another one has that one's fields
		if u, ok := d.underlying[name]; ok {
			td.fields = d.types[u].fields
		}
	}
	return td, nil
}

func (g *generator) pkgDocs(pkgPath string) (*pkgDocs, error) {
	if d, ok := g.docs[pkgPath]; ok {
		return d, nil
	}
	rel, ok := strings.CutPrefix(pkgPath, g.module+"/")
	if !ok {
		return nil, fmt.Errorf("package %s is not in module %s", pkgPath, g.module)
	}
	fset := token.NewFileSet()
	dir := filepath.Join(g.root, filepath.FromSlash(rel))
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	d := &pkgDocs{types: map[string]typeDocs{}, underlying: map[string]string{}}
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(decl.Specs) == 1 {
						doc = decl.Doc
					}
					td := typeDocs{doc: oneLine(doc.Text()), fields: map[string]string{}}
					switch typ := ts.Type.(type) {
					case *ast.StructType:
						for _, field := range typ.Fields.List {
							text := field.Doc.Text()
							if text == "" {
								text = field.Comment.Text()
							}
							for _, n := range field.Names {
								td.fields[n.Name] = oneLine(text)
							}
						}
					case *ast.Ident:
						d.underlying[ts.Name.Name] = typ.Name
					}
					d.types[ts.Name.Name] = td
				}
			case *ast.FuncDecl:
				if decl.Name.Name == "FrameType" && decl.Recv != nil && len(decl.Recv.List) == 1 {
					d.frameTypes = append(d.frameTypes, recvName(decl.Recv.List[0].Type))
				}
			}
		}
	}
	g.docs[pkgPath] = d
	return d, nil
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.StarExpr:
		return recvName(e.X)
	}
	return ""
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
