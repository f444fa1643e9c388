package sapsim

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/sap"
)

// LoadABAPGit adds a customer's custom code from an abapGit folder (its src/ directory or the
// repository root), keeping what real repositories hold:
//
//   - programs (*.prog.abap), interfaces (*.intf.abap), classes (*.clas.abap with their local
//     parts locals_def, locals_imp, macros and testclasses, which are appended to the class
//     source after the global part, as SAP keeps them in the class pool);
//   - function groups (*.fugr.xml: the function modules' interfaces; *.fugr.<fm>.abap: one
//     function module each; the group's other includes become the FUGR object's source);
//   - DDIC: domains (*.doma.xml), data elements (*.dtel.xml), tables (*.tabl.xml, TABCLASS
//     TRANSP: readable with read_table), structures (TABCLASS INTTAB: objects, and the source of
//     .INCLUDE lines) and append structures (TABCLASS APPEND: their fields join the table).
//     Fields typed by a data element get type and length from it and its domain;
//   - CDS and RAP: views (*.ddls.asddls), metadata extensions (*.ddlx.asddlxs), access controls
//     (*.dcls.asdcls), behavior definitions (*.bdef.asbdef) and service definitions
//     (*.srvd.srvdsrv);
//   - enhancements: BAdI and hook implementations (*.enho.xml), classic BAdI implementations
//     (*.sxci.xml) and customer-exit projects (*.cmod.xml).
//
// Descriptions come from the object's XML (DDTEXT, DESCRIPT, SHORTTEXT, …). Loaded objects
// are searchable, have source and where-used, and appear in the index phases with their
// references; a change-log entry is written for each.
func (s *System) LoadABAPGit(dir string) error {
	_, err := s.LoadABAPGitReport(dir)
	return err
}

// LoadABAPGitReport is LoadABAPGit returning the load's summary (also kept for the
// abapgit_load endpoint). It never stops at a bad object: standard DDIC it does not know
// becomes an unresolved placeholder, a file it cannot parse is skipped, each with its reason.
// It fails only when the folder cannot be read or holds no abapGit object at all.
func (s *System) LoadABAPGitReport(dir string) (*LoadReport, error) {
	s.init()
	src := dir
	if st, err := os.Stat(filepath.Join(dir, "src")); err == nil && st.IsDir() {
		src = filepath.Join(dir, "src")
	}
	rep := newLoadReport(dir)
	files := map[string]*gitObject{} // TYPE/NAME
	var order []string
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if path == src {
				return err
			}
			rep.skip("FILE", filepath.Base(path), path, "unreadable: "+err.Error())
			return nil
		}
		if d.IsDir() {
			return nil
		}
		parts := strings.Split(strings.ToLower(d.Name()), ".")
		if len(parts) < 3 || parts[0] == "" {
			return nil // README.md, .abapgit.xml, .gitignore: not objects
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			rep.skip(strings.ToUpper(parts[1]), strings.ToUpper(parts[0]), path, "unreadable: "+err.Error())
			return nil
		}
		pkg := folderPackage(filepath.Base(filepath.Dir(path)))
		typ, name := strings.ToUpper(parts[1]), objectName(parts[0])
		if typ == "DEVC" { // package.devc.xml describes the folder's package
			name = pkg
		}
		key := typ + "/" + name
		g := files[key]
		if g == nil {
			g = &gitObject{typ: typ, name: name, pkg: pkg, file: path, parts: map[string]string{}}
			files[key] = g
			order = append(order, key)
		}
		g.parts[strings.Join(parts[2:], ".")] = string(raw)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("abapGit folder %s: %w", dir, err)
	}
	sort.Strings(order)
	l := &gitLoad{s: s, rep: rep, domains: map[string]dataElement{}, dtels: map[string]dataElement{}, structs: map[string]resolvedFields{}, tabls: map[string]*tablXML{}}
	// DDIC first: data elements need their domains, tables their data elements and structures.
	for _, key := range order {
		if g := files[key]; g.typ == "DOMA" {
			l.domain(g)
		}
	}
	for _, key := range order {
		if g := files[key]; g.typ == "DTEL" {
			l.dataElement(g)
		}
	}
	for _, key := range order {
		g := files[key]
		if x, ok := g.parts["xml"]; ok && g.typ == "TABL" {
			tx, err := parseTablXML(x)
			if err != nil {
				rep.skip(g.typ, g.name, g.file, err.Error())
				continue
			}
			l.tabls[g.name] = tx
		}
	}
	for _, key := range order {
		g := files[key]
		switch g.typ {
		case "DOMA", "DTEL":
		case "TABL":
			if _, ok := l.tabls[g.name]; ok {
				l.table(g)
			}
		case "PROG", "INTF", "DDLS", "DDLX", "DCLS", "BDEF", "SRVD":
			l.source(g)
		case "CLAS":
			l.class(g)
		case "FUGR":
			l.functionGroup(g)
		case "ENHO":
			l.enhancement(g)
		case "SXCI":
			l.classicBAdI(g)
		case "CMOD":
			l.exitProject(g)
		default:
			l.catalogObject(g)
		}
	}
	if len(l.objs) == 0 {
		return rep, fmt.Errorf("no abapGit objects found in %s", dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.catalog()
	for name, de := range l.dtels {
		s.dtels[name] = de
	}
	for _, t := range l.tables {
		s.tables[t.schema.Table] = t
	}
	for _, a := range l.appends {
		if t, ok := s.tables[a.table]; ok {
			for _, f := range a.fields {
				if _, dup := t.fieldIdx[f.Name]; !dup {
					t.fieldIdx[f.Name] = len(t.schema.Fields)
					t.schema.Fields = append(t.schema.Fields, f)
				}
			}
		}
	}
	for _, o := range l.objs {
		s.objects[o.Type+"/"+o.Name] = o
		s.addCustomName(o.Name)
		if o.Type == "FUNC" {
			s.funcs[o.Name] = &function{iface: sapFunctionInterface(o), run: customFunction(o.Name)}
		}
		o.Seq = s.logChange(o.Type, o.Name, "created", "ABAPGIT")
	}
	// A subclass uses its superclass's types unqualified: with the loaded classes known,
	// those are no DDIC references.
	classes := gitClasses(l.objs)
	for _, o := range l.objs {
		s.prepare(o)
		if len(classes) > 0 && (o.Type == "CLAS" || o.Type == "PROG" || o.Type == "FUNC") && abapref.IndexFold(o.Source, "INHERITING") >= 0 {
			o.refs = extractRefsIn(o, classes)
			o.relCount = len(s.relationships(o))
		}
	}
	s.rebuildKeys()
	for _, o := range l.objs {
		s.discover(before, o)
	}
	rep.Namespaces = append([]string(nil), s.customNS...)
	s.gitReport = rep
	return rep, nil
}

// objectName is the object a file name stands for: abapGit writes a namespace's slashes as #
// (#dmo#travel), ABAP file formats as parentheses ((dmo)travel).
func objectName(file string) string {
	name := strings.ReplaceAll(file, "#", "/")
	if strings.HasPrefix(name, "(") {
		if i := strings.IndexByte(name, ')'); i > 1 {
			name = "/" + name[1:i] + "/" + name[i+1:]
		}
	}
	return strings.ToUpper(name)
}

// folderPackage is the package an abapGit folder stands for: its name with # for /
// ("#dmo0#flight" is /DMO0/FLIGHT), a local $ package when it is not a namespaced name.
func folderPackage(dir string) string {
	p := strings.ToUpper(strings.ReplaceAll(dir, "#", "/"))
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "$") {
		return p
	}
	return "$" + p
}

// gitObject is one object's files: part is what follows "<name>.<type>." ("abap", "xml",
// "locals_imp.abap", "z_credit_check.abap", "asddls", …).
type gitObject struct {
	typ, name, pkg string
	file           string // one of its files, for the load summary
	parts          map[string]string
}

// gitLoad is one LoadABAPGit run: what it read so far.
type gitLoad struct {
	s       *System
	rep     *LoadReport
	domains map[string]dataElement
	dtels   map[string]dataElement
	structs map[string]resolvedFields
	tabls   map[string]*tablXML
	tables  []*table
	appends []appendStructure
	objs    []*object
}

type appendStructure struct {
	table  string
	fields []sap.Field
}

func (l *gitLoad) add(g *gitObject, o *object) {
	if o.Package == "" {
		o.Package = g.pkg
	}
	if o.CreatedBy == "" {
		o.CreatedBy = "ABAPGIT"
	}
	if o.ChangedAt == "" {
		o.ChangedAt = "2026-01-01"
	}
	if o.Description == "" {
		o.Description = xmlDescription(g.parts["xml"])
	}
	if o.Description == "" {
		o.Description = firstComment(o.Source, o.Name)
	}
	l.objs = append(l.objs, o)
	l.rep.loaded(o.Type)
}

// xmlValues collects the text of every element of an abapGit XML file by tag name, in order.
func xmlValues(text string) map[string][]string {
	out := map[string][]string{}
	xmlTexts(text, func(path []string, v string) {
		tag := path[len(path)-1]
		out[tag] = append(out[tag], v)
	})
	return out
}

// xmlTexts walks an XML file and hands each non-blank text to fn with the element names from
// the root down to the text's element; it stops quietly at the first malformed token.
func xmlTexts(text string, fn func(path []string, value string)) {
	dec := xml.NewDecoder(strings.NewReader(text))
	var stack []string
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if v := strings.TrimSpace(string(t)); v != "" && len(stack) > 0 {
				fn(stack, v)
			}
		}
	}
}

func first(vals map[string][]string, tags ...string) string {
	for _, t := range tags {
		if v := vals[t]; len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// xmlDescription is an object's short text in its abapGit XML.
func xmlDescription(text string) string {
	if text == "" {
		return ""
	}
	return first(xmlValues(text), "DDTEXT", "DESCRIPT", "SHORTTEXT", "DESCRIPTION", "AREAT", "TEXT", "MODTEXT")
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimLeft(strings.TrimSpace(s), "0"))
	return n
}

func (l *gitLoad) domain(g *gitObject) {
	text, ok := g.parts["xml"]
	if !ok {
		l.rep.skip(g.typ, g.name, g.file, "no .doma.xml file")
		return
	}
	if err := wellFormed(text); err != nil {
		l.rep.skip(g.typ, g.name, g.file, err.Error())
		return
	}
	v := xmlValues(text)
	typ := strings.ToUpper(first(v, "DATATYPE"))
	if typ == "" {
		l.rep.skip(g.typ, g.name, g.file, "the domain has no DATATYPE")
		return
	}
	l.domains[g.name] = dataElement{domain: g.name, typ: typ, length: atoi(first(v, "LENG")), decimals: atoi(first(v, "DECIMALS")),
		text: first(v, "DDTEXT"), check: strings.ToUpper(first(v, "ENTITYTAB"))}
	l.add(g, &object{Type: "DOMA", Name: g.name})
}

func (l *gitLoad) dataElement(g *gitObject) {
	text, ok := g.parts["xml"]
	if !ok {
		l.rep.skip(g.typ, g.name, g.file, "no .dtel.xml file")
		return
	}
	if err := wellFormed(text); err != nil {
		l.rep.skip(g.typ, g.name, g.file, err.Error())
		return
	}
	v := xmlValues(text)
	de := dataElement{text: first(v, "DDTEXT")}
	own := dataElement{typ: strings.ToUpper(first(v, "DATATYPE")), length: atoi(first(v, "LENG")), decimals: atoi(first(v, "DECIMALS"))}
	if dom := strings.ToUpper(first(v, "DOMNAME")); dom != "" {
		d, ok := l.domains[dom]
		if !ok {
			d, ok = l.s.lookupDataElement(dom) // a standard domain, or one named like its data element
		}
		if !ok { // a placeholder typed as the XML says (abapGit keeps the domain's type in DD04V)
			d = own
			l.rep.unresolved(g.typ, g.name, "DOMA "+dom, "standard domain "+dom+" is unknown to the simulator; typed from the data element's own DATATYPE/LENG")
		}
		de.domain, de.typ, de.length, de.decimals, de.check = dom, d.typ, d.length, d.decimals, d.check
	} else {
		de.domain, de.typ, de.length, de.decimals = "", own.typ, own.length, own.decimals
	}
	if de.typ == "" {
		de.typ = "CHAR"
	}
	l.dtels[g.name] = de
	l.add(g, &object{Type: "DTEL", Name: g.name})
}

// lookupDataElement finds a data element among those loaded before and the standard ones.
func (s *System) lookupDataElement(name string) (dataElement, bool) {
	s.mu.RLock()
	de, ok := s.dtels[name]
	s.mu.RUnlock()
	if ok {
		return de, true
	}
	return standardDataElement(name)
}

// wellFormed reports why an XML file cannot be read.
func wellFormed(text string) error {
	dec := xml.NewDecoder(strings.NewReader(text))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("malformed XML: %v", err)
		}
	}
}

// abapGit's table serialisation (the parts read here).
type tablXML struct {
	DD02V struct {
		Tabname  string `xml:"TABNAME"`
		DDText   string `xml:"DDTEXT"`
		Contflag string `xml:"CONTFLAG"`
		TabClass string `xml:"TABCLASS"`
		SQLTab   string `xml:"SQLTAB"`
	} `xml:"values>DD02V"`
	Fields []struct {
		Fieldname  string `xml:"FIELDNAME"`
		Keyflag    string `xml:"KEYFLAG"`
		Rollname   string `xml:"ROLLNAME"`
		Datatype   string `xml:"DATATYPE"`
		Leng       string `xml:"LENG"`
		Decimals   string `xml:"DECIMALS"`
		DDText     string `xml:"DDTEXT"`
		Checktable string `xml:"CHECKTABLE"`
		Precfield  string `xml:"PRECFIELD"`
		Comptype   string `xml:"COMPTYPE"` // E data element, S structure, L table type, R reference
	} `xml:"values>DD03P_TABLE>DD03P"`
}

// isElementary says whether a component is typed by a data element of fixed length, the only
// kind whose type the simulator must look up: a nested structure, table type, reference or
// string carries its type in the field itself.
func isElementary(comptype, datatype string) bool {
	switch strings.ToUpper(comptype) {
	case "S", "L", "R":
		return false
	}
	switch datatype {
	case "STRU", "TTYP", "REF", "STRG", "RSTR":
		return false
	}
	return true
}

func parseTablXML(text string) (*tablXML, error) {
	var x struct {
		Values tablXML `xml:"abap"`
	}
	if err := xml.Unmarshal([]byte(text), &x); err != nil {
		return nil, fmt.Errorf("not an abapGit table: %w", err)
	}
	if x.Values.DD02V.Tabname == "" || len(x.Values.Fields) == 0 {
		return nil, fmt.Errorf("the table has no name or no fields")
	}
	return &x.Values, nil
}

// resolvedFields is a table's or structure's field list and the references it could not
// resolve (as "TYPE NAME" with a reason).
type resolvedFields struct {
	fields     []sap.Field
	unresolved [][2]string
}

// fields resolves a table's or structure's field list: types from data elements and domains,
// .INCLUDE lines expanded from the structure they name. What it cannot resolve is left out
// (an include) or typed from the field's own DATATYPE (a data element) and listed.
func (l *gitLoad) fields(name string, depth int) resolvedFields {
	if f, ok := l.structs[name]; ok {
		return f
	}
	tx := l.tabls[name]
	var out resolvedFields
	for _, fx := range tx.Fields {
		fieldName := strings.ToUpper(fx.Fieldname)
		if strings.HasPrefix(fieldName, ".INCLU") {
			inc := strings.ToUpper(fx.Precfield)
			incFields, why := l.include(inc, depth)
			if why != "" {
				out.unresolved = append(out.unresolved, [2]string{"TABL " + inc, why})
			}
			out.unresolved = append(out.unresolved, incFields.unresolved...)
			for _, f := range incFields.fields {
				f.Key = fx.Keyflag == "X" // a key include makes its fields keys
				out.fields = append(out.fields, f)
			}
			continue
		}
		if strings.HasPrefix(fieldName, ".") { // .APPEND lines: the append structure adds its own fields
			continue
		}
		typ, length, dec := strings.ToUpper(fx.Datatype), atoi(fx.Leng), atoi(fx.Decimals)
		dtel, domain, text, check := strings.ToUpper(fx.Rollname), strings.ToUpper(fx.Rollname), fx.DDText, strings.ToUpper(fx.Checktable)
		de, ok := l.dtels[dtel]
		if !ok && dtel != "" {
			de, ok = l.s.lookupDataElement(dtel)
			if !ok && (typ == "" || length == 0) && isElementary(fx.Comptype, typ) {
				out.unresolved = append(out.unresolved, [2]string{"DTEL " + dtel, "data element " + dtel + " of field " + fieldName +
					" is unknown to the simulator; the field is typed from its own DATATYPE/LENG"})
			}
		}
		if ok {
			if length == 0 || typ == "" {
				typ, length, dec = de.typ, de.length, de.decimals
			}
			if de.domain != "" {
				domain = de.domain
			}
			if text == "" {
				text = de.text
			}
			if check == "" && de.check != name {
				check = de.check
			}
		}
		if typ == "" {
			typ = "CHAR"
		}
		out.fields = append(out.fields, sap.Field{Name: fieldName, Key: fx.Keyflag == "X", DataElement: dtel, Domain: domain, Type: typ, Length: length,
			Decimals: dec, Description: text, CheckTable: check})
	}
	l.structs[name] = out
	return out
}

// include is the field list an .INCLUDE line names: a structure of the repository, a table of
// the system or a standard structure; why says why it is missing.
func (l *gitLoad) include(name string, depth int) (resolvedFields, string) {
	if _, ok := l.tabls[name]; ok {
		if depth > 10 {
			return resolvedFields{}, "structure " + name + " includes itself"
		}
		return l.fields(name, depth+1), ""
	}
	if f, ok := stdStructures[name]; ok {
		return resolvedFields{fields: append([]sap.Field(nil), f...)}, ""
	}
	l.s.mu.RLock()
	t, ok := l.s.tables[name]
	l.s.mu.RUnlock()
	if ok {
		return resolvedFields{fields: append([]sap.Field(nil), t.schema.Fields...)}, ""
	}
	return resolvedFields{}, "included structure " + name + " is neither in the repository nor known to the simulator; its fields are left out"
}

func (l *gitLoad) table(g *gitObject) {
	tx := l.tabls[g.name]
	res := l.fields(g.name, 0)
	fields := append([]sap.Field(nil), res.fields...)
	for _, u := range res.unresolved {
		l.rep.unresolved(g.typ, g.name, u[0], u[1])
	}
	o := &object{Type: "TABL", Name: g.name, Description: tx.DD02V.DDText}
	switch strings.ToUpper(tx.DD02V.TabClass) {
	case "INTTAB": // a structure: a repository object, not a database table
	case "APPEND":
		target := strings.ToUpper(tx.DD02V.SQLTab)
		for i := range fields {
			fields[i].Appended = true
		}
		l.appends = append(l.appends, appendStructure{table: target, fields: fields})
		o.Kind, o.Implements = "append", target
	default:
		t := buildTable(tableSpec{name: g.name, text: tx.DD02V.DDText, delivery: tx.DD02V.Contflag}, l.s.info.SystemType, true)
		for _, f := range fields {
			if _, dup := t.fieldIdx[f.Name]; dup {
				continue
			}
			t.fieldIdx[f.Name] = len(t.schema.Fields)
			t.schema.Fields = append(t.schema.Fields, f)
			if f.Key && f.Type != "CLNT" {
				t.keys = append(t.keys, f.Name)
			}
		}
		l.tables = append(l.tables, t)
	}
	l.add(g, o)
}

func (l *gitLoad) source(g *gitObject) {
	var text string
	for _, part := range []string{"abap", "asddls", "asddlxs", "asdcls", "asbdef", "srvdsrv"} {
		if t, ok := g.parts[part]; ok {
			text = t
			break
		}
	}
	if text == "" {
		if _, ok := g.parts["xml"]; ok { // e.g. a service definition serialised without its source
			l.catalogObject(g)
			return
		}
		l.rep.skip(g.typ, g.name, g.file, "no source file")
		return
	}
	l.add(g, &object{Type: g.typ, Name: g.name, Source: text})
}

// classParts are a class pool's includes in SAP's order (CCDEF, CCIMP, CCMAC, CCAU).
var classParts = []string{"locals_def.abap", "locals_imp.abap", "macros.abap", "testclasses.abap"}

func (l *gitLoad) class(g *gitObject) {
	main, ok := g.parts["abap"]
	if !ok {
		l.rep.skip(g.typ, g.name, g.file, "no .clas.abap file")
		return
	}
	var b strings.Builder
	b.WriteString(main)
	for _, p := range classParts {
		if t, ok := g.parts[p]; ok {
			if !strings.HasSuffix(b.String(), "\n") {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "*\"* %s\n%s", strings.TrimSuffix(p, ".abap"), t)
		}
	}
	l.add(g, &object{Type: "CLAS", Name: g.name, Source: b.String()})
}

// abapGit's function group serialisation (the parts read here).
type fugrXML struct {
	Functions []struct {
		Name     string     `xml:"FUNCNAME"`
		Remote   string     `xml:"REMOTE_CALL"`
		Text     string     `xml:"SHORT_TEXT"`
		Import   []fugrParm `xml:"IMPORT>RSIMP"`
		Export   []fugrParm `xml:"EXPORT>RSEXP"`
		Changing []fugrParm `xml:"CHANGING>RSCHA"`
		Tables   []fugrParm `xml:"TABLES>RSTBL"`
		Except   []string   `xml:"EXCEPTION>RSEXC>EXCEPTION"`
		Docs     []struct {
			Parameter string `xml:"PARAMETER"`
			Text      string `xml:"STEXT"`
		} `xml:"DOCUMENTATION>RSFDO"`
	} `xml:"abap>values>FUNCTIONS>item"`
}

type fugrParm struct {
	Name     string `xml:"PARAMETER"`
	Typ      string `xml:"TYP"`
	DBField  string `xml:"DBFIELD"`
	DBStruct string `xml:"DBSTRUCT"`
	Optional string `xml:"OPTIONAL"`
	Default  string `xml:"DEFAULT"`
}

// functionGroup loads a function group and its function modules. The modules are those its
// XML lists (<FUNCTIONS><item><FUNCNAME>), each in the include file abapGit names after it;
// without the XML, an include whose first statement is FUNCTION (after comments, ABAP Doc,
// blank lines and pragmas) is one.
func (l *gitLoad) functionGroup(g *gitObject) {
	var x fugrXML
	if t, ok := g.parts["xml"]; ok {
		if err := xml.Unmarshal([]byte(t), &x); err != nil {
			l.rep.unresolved(g.typ, g.name, "XML", "malformed XML: "+err.Error()+"; the group loads from its includes, without function module interfaces")
			x = fugrXML{}
		}
	}
	ifaces := map[string]int{}
	for i, f := range x.Functions {
		ifaces[strings.ToUpper(f.Name)] = i
	}
	var typeRefs map[string][]abapref.Ref // the types each module's XML interface names
	if t, ok := g.parts["xml"]; ok && len(x.Functions) > 0 {
		typeRefs, _ = abapref.FunctionInterfaces(t) // the XML parsed above: no error
	}
	found := map[string]bool{}
	var includes []string
	for _, part := range sortedNames(g.parts) {
		if !strings.HasSuffix(part, ".abap") {
			continue
		}
		text := g.parts[part]
		fm := strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(part, ".abap"), "#", "/"))
		if _, listed := ifaces[fm]; !listed {
			fm = functionStatement(text)
		}
		if fm == "" {
			includes = append(includes, fmt.Sprintf("*\"* %s\n%s", strings.ToUpper(strings.TrimSuffix(part, ".abap")), text))
			continue
		}
		found[fm] = true
		l.functionModule(g, x, ifaces, fm, text, typeRefs[fm])
	}
	for _, f := range x.Functions { // listed without a source file: the interface still counts
		if fm := strings.ToUpper(f.Name); fm != "" && !found[fm] {
			l.functionModule(g, x, ifaces, fm, "", typeRefs[fm])
			l.rep.unresolved("FUNC", fm, "source", "the function group's XML lists it but no include file holds its source")
		}
	}
	l.add(g, &object{Type: "FUGR", Name: g.name, Source: strings.Join(includes, "\n")}) // the group exists whatever files it has
}

// functionModule adds a module; typeRefs are the types its XML interface names, references of
// the module even where its source's `*"` block leaves the parameter out.
func (l *gitLoad) functionModule(g *gitObject, x fugrXML, ifaces map[string]int, fm, text string, typeRefs []abapref.Ref) {
	o := &object{Type: "FUNC", Name: fm, Group: g.name, Description: "Function module of " + g.name, Source: text, extraRefs: typeRefs}
	if i, ok := ifaces[fm]; ok {
		f := x.Functions[i]
		if f.Text != "" {
			o.Description = f.Text
		}
		docs := map[string]string{}
		for _, d := range f.Docs {
			docs[strings.ToUpper(d.Parameter)] = d.Text
		}
		for _, set := range []struct {
			kind  string
			parms []fugrParm
		}{{"import", f.Import}, {"export", f.Export}, {"changing", f.Changing}, {"tables", f.Tables}} {
			for _, p := range set.parms {
				typ := firstNonEmpty(p.Typ, p.DBField, p.DBStruct)
				o.Params = append(o.Params, sap.Parameter{Name: strings.ToUpper(p.Name), Kind: set.kind, Type: strings.ToUpper(typ),
					Optional: p.Optional == "X" || set.kind == "export", Default: p.Default, Description: docs[strings.ToUpper(p.Name)]})
			}
		}
		o.Exceptions = f.Except
	}
	l.add(g, o)
}

// functionStatement is the function module a source defines: the name after FUNCTION when
// that is its first statement, past comments, ABAP Doc, blank lines and pragmas; "" otherwise.
func functionStatement(src string) string {
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		for strings.HasPrefix(t, "##") { // pragmas before the statement
			end := strings.IndexAny(t, " \t")
			if end < 0 {
				t = ""
				break
			}
			t = strings.TrimSpace(t[end:])
		}
		if t == "" || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "\"") {
			continue
		}
		f := strings.Fields(t)
		if len(f) < 2 || !strings.EqualFold(f[0], "FUNCTION") {
			return ""
		}
		name := strings.ToUpper(strings.TrimRight(f[1], "."))
		if i := strings.Index(name, "\""); i >= 0 {
			name = name[:i]
		}
		return name
	}
	return ""
}

// abapGit's enhancement implementation serialisation (the parts read here).
type enhoXML struct {
	Tool      string `xml:"abap>values>TOOL"`
	ShortText string `xml:"abap>values>SHORTTEXT"`
	Badis     []struct {
		BAdI  string `xml:"BADI_NAME"`
		Class string `xml:"IMPL_CLASS"`
	} `xml:"abap>values>BADI_DATA>ENH_BADI_DATA"`
	Program string `xml:"abap>values>ORIGINAL_OBJECT>ORG_MAIN_NAME"`
	Hooks   []struct {
		FullName string   `xml:"FULL_NAME"`
		Source   []string `xml:"SOURCE>item"`
	} `xml:"abap>values>ENHANCEMENTS>ENH_HOOK_IMPL"`
}

func (l *gitLoad) enhancement(g *gitObject) {
	var x enhoXML
	if err := xml.Unmarshal([]byte(g.parts["xml"]), &x); err != nil {
		l.rep.skip(g.typ, g.name, g.file, "malformed XML: "+err.Error())
		return
	}
	o := &object{Type: "ENHO", Name: g.name, Description: x.ShortText}
	switch x.Tool {
	case "BADI_IMPL":
		o.Kind = "badi"
		for _, b := range x.Badis {
			if o.Implements == "" {
				o.Implements = strings.ToUpper(b.BAdI)
			}
			if b.Class != "" {
				o.extraRefs = append(o.extraRefs, abapref.Ref{Kind: abapref.Implement, Type: "CLAS", Name: strings.ToUpper(b.Class)})
			}
		}
	case "HOOK_IMPL":
		o.Kind, o.Implements = "enhancement", strings.ToUpper(x.Program)
		var b strings.Builder
		for _, h := range x.Hooks {
			fmt.Fprintf(&b, "ENHANCEMENT 1 %s. \" %s\n", strings.ToLower(g.name), h.FullName)
			for _, line := range h.Source {
				b.WriteString(line + "\n")
			}
			b.WriteString("ENDENHANCEMENT.\n")
		}
		for _, part := range sortedNames(g.parts) { // newer abapGit keeps hook source in .enho.<id>.abap files
			if strings.HasSuffix(part, ".abap") {
				b.WriteString(g.parts[part])
			}
		}
		o.Source = b.String()
	default:
		o.Kind = "enhancement"
	}
	l.add(g, o)
}

func (l *gitLoad) classicBAdI(g *gitObject) {
	if err := wellFormed(g.parts["xml"]); err != nil {
		l.rep.skip(g.typ, g.name, g.file, err.Error())
		return
	}
	v := xmlValues(g.parts["xml"])
	o := &object{Type: "SXCI", Name: g.name, Description: first(v, "TEXT"), Kind: "badi", Implements: strings.ToUpper(first(v, "EXIT_NAME"))}
	if c := first(v, "IMP_CLASS"); c != "" {
		o.extraRefs = append(o.extraRefs, abapref.Ref{Kind: abapref.Implement, Type: "CLAS", Name: strings.ToUpper(c)})
	}
	l.add(g, o)
}

func (l *gitLoad) exitProject(g *gitObject) {
	if err := wellFormed(g.parts["xml"]); err != nil {
		l.rep.skip(g.typ, g.name, g.file, err.Error())
		return
	}
	v := xmlValues(g.parts["xml"])
	o := &object{Type: "CMOD", Name: g.name, Description: first(v, "MODTEXT"), Kind: "user_exit"}
	for _, m := range v["MEMBER"] {
		if o.Implements == "" {
			o.Implements = strings.ToUpper(m)
		}
		o.extraRefs = append(o.extraRefs, abapref.Ref{Kind: abapref.Enhancement, Type: "SMOD", Name: strings.ToUpper(m)})
	}
	l.add(g, o)
}

// firstComment is the first comment line of a source, used as its description.
func firstComment(src, fallback string) string {
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "*") || strings.HasPrefix(t, "\"") {
			t = strings.TrimSpace(strings.Trim(t, "*\"-& "))
			if t != "" {
				return t
			}
		}
	}
	return fallback
}

func sapFunctionInterface(o *object) sap.FunctionInterface {
	return sap.FunctionInterface{Function: o.Name, Group: o.Group, Description: o.Description, RemoteEnabled: true, Parameters: o.Params, Exceptions: o.Exceptions}
}

// RAP sources abapref does not read: behavior definitions, service definitions and metadata
// extensions. Their references are few and fixed by the syntax.
var (
	bdefRefs = []struct {
		re   *regexp.Regexp
		kind abapref.Kind
		typ  string
	}{
		{regexp.MustCompile(`(?i)\bimplementation\s+in\s+class\s+([\w/]+)`), abapref.Implement, "CLAS"},
		{regexp.MustCompile(`(?i)\bdefine\s+behavior\s+for\s+([\w/]+)`), abapref.Kind("define"), "DDLS"},
		{regexp.MustCompile(`(?i)\bpersistent\s+table\s+([\w/]+)`), abapref.Write, "TABL"},
		{regexp.MustCompile(`(?i)\bdraft\s+table\s+([\w/]+)`), abapref.Write, "TABL"},
	}
	srvdExpose   = regexp.MustCompile(`(?i)\bexpose\s+([\w/]+)`)
	ddlxAnnotate = regexp.MustCompile(`(?i)\bannotate\s+(?:view|entity)\s+([\w/]+)`)
	rapComment   = regexp.MustCompile(`//[^\n]*|/\*[\s\S]*?\*/`)
)

// extractRefs is what a source uses: abapref for ABAP and CDS, the RAP rules above for the
// rest, plus references an object's XML names (an enhancement's implementing class).
func extractRefs(o *object) []abapref.Ref {
	return extractRefsIn(o, nil)
}

// extractRefsIn is extractRefs for ABAP whose classes may inherit from the global classes given.
func extractRefsIn(o *object, classes abapref.Classes) []abapref.Ref {
	var refs []abapref.Ref
	switch o.Type {
	case "BDEF", "SRVD", "DDLX":
		src := rapComment.ReplaceAllStringFunc(o.Source, func(c string) string { return strings.Repeat("\n", strings.Count(c, "\n")) })
		seen := map[string]bool{}
		add := func(kind abapref.Kind, typ, name string, at int) {
			name = strings.ToUpper(name)
			if kind == "" || seen[string(kind)+typ+name] {
				return
			}
			seen[string(kind)+typ+name] = true
			refs = append(refs, abapref.Ref{Kind: kind, Type: typ, Name: name, Line: strings.Count(src[:at], "\n") + 1})
		}
		switch o.Type {
		case "BDEF":
			for _, r := range bdefRefs {
				for _, m := range r.re.FindAllStringSubmatchIndex(src, -1) {
					if len(m) >= 4 && m[2] >= 0 {
						add(r.kind, r.typ, src[m[2]:m[3]], m[2])
					}
				}
			}
		case "SRVD":
			for _, m := range srvdExpose.FindAllStringSubmatchIndex(src, -1) {
				add(abapref.Kind("expose"), "DDLS", src[m[2]:m[3]], m[2])
			}
		case "DDLX":
			for _, m := range ddlxAnnotate.FindAllStringSubmatchIndex(src, -1) {
				add(abapref.Kind("annotate"), "DDLS", src[m[2]:m[3]], m[2])
			}
		}
	default:
		if o.Source != "" && classes != nil && o.Type != "DDLS" && o.Type != "DDLX" && o.Type != "DCLS" {
			refs = abapref.ABAPIn(o.Source, classes)
		} else if o.Source != "" {
			refs = abapref.Extract(o.Type, o.Source)
		}
	}
	inSource := make(map[string]bool, len(refs))
	for _, r := range refs {
		inSource[string(r.Kind)+" "+r.Name] = true
	}
	for _, r := range o.extraRefs { // the source's use, with its line, wins over the XML's
		if !inSource[string(r.Kind)+" "+r.Name] {
			refs = append(refs, r)
		}
	}
	return refs
}

// gitClasses are the global classes among loaded objects with the types they pass on.
func gitClasses(objs []*object) abapref.Classes {
	out := abapref.Classes{}
	for _, o := range objs {
		if o.Type == "CLAS" {
			if name, c, ok := abapref.GlobalClass(o.Source); ok && (len(c.Types) > 0 || c.Super != "") {
				out[name] = c
			}
		}
	}
	return out
}
