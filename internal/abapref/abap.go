package abapref

import (
	"strings"
)

// builtin are ABAP's predefined and generic types: never a DDIC reference.
// INT1, INT2 and INT4 are not among them: they are DDIC data elements.
var builtin = setOf("C", "N", "I", "P", "D", "T", "X", "F", "STRING", "XSTRING", "DECFLOAT16", "DECFLOAT34",
	"INT8", "B", "S", "UTCLONG", "ANY", "DATA", "SIMPLE", "CSEQUENCE", "CLIKE",
	"NUMERIC", "XSEQUENCE", "OBJECT", "TABLE", "INDEX", "STANDARD", "SORTED", "HASHED", "ANY TABLE")

// declStarts are the statements whose TYPE / LIKE clauses declare something.
var declStarts = setOf("DATA", "CLASS-DATA", "STATICS", "CONSTANTS", "TYPES", "PARAMETERS", "PARAMETER",
	"SELECT-OPTIONS", "RANGES", "FIELD-SYMBOLS", "METHODS", "CLASS-METHODS", "EVENTS", "CLASS-EVENTS",
	"FORM", "FUNCTION", "CREATE", "ASSIGN")

// constructors are the constructor operators whose type operand is a reference.
var constructors = map[string]Kind{"NEW": Instantiate, "CAST": TypeUse, "CONV": TypeUse, "VALUE": TypeUse,
	"REF": TypeUse, "CORRESPONDING": TypeUse, "EXACT": TypeUse, "REDUCE": TypeUse, "FILTER": TypeUse,
	"COND": TypeUse, "SWITCH": TypeUse}

// sqlStop are words that can follow FROM / JOIN but are not a table.
var sqlStop = setOf("SELECT", "TABLE", "AS", "INNER", "LEFT", "RIGHT", "OUTER", "CROSS", "JOIN", "WHERE")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

type abapState struct {
	collector
	types  map[string]bool   // own and local types, classes, interfaces, programs
	data   map[string]bool   // variables, parameters, field symbols
	tables map[string]bool   // TABLES work areas: database tables by name
	refTo  map[string]string // variable -> TYPE REF TO target, for GET BADI
	badis  map[string]int    // BAdI handle variables with the line of their use
	depth  int               // BEGIN OF nesting during the declaration pass
	// inClass is true between CLASS … DEFINITION / IMPLEMENTATION or INTERFACE
	// and their END: there LIKE names a data object, never the DDIC.
	inClass bool
	// fmInterface is true while reading the `*"` interface block of a function
	// module, whose LIKE names the DDIC.
	fmInterface bool
	function    bool     // the source has a FUNCTION statement: `*"` lines are its interface
	supers      []string // the classes named in INHERITING FROM
}

// ABAP extracts the references of an ABAP source (report, include, class
// pool, function group or module).
func ABAP(src string) []Ref {
	return abapIn(src, nil)
}

func abapIn(src string, classes Classes) []Ref {
	s := &abapState{types: map[string]bool{}, data: map[string]bool{}, tables: map[string]bool{},
		refTo: map[string]string{}, badis: map[string]int{}}
	sts := statements(dropAMDPBodies(tokenize(src)))
	s.declareInterfaceComments(src)
	for _, st := range sts {
		s.declare(st)
	}
	s.inherit(classes)
	for _, st := range sts {
		s.references(st)
	}
	s.interfaceCommentRefs(src)
	for v, line := range s.badis {
		if t, ok := s.refTo[v]; ok {
			s.add(BAdI, "BADI", t, line)
		}
	}
	// A BAdI handle's TYPE REF TO names the BAdI, not a class.
	out := s.refs[:0]
	for _, r := range s.refs {
		if r.Kind == TypeUse && r.Type == "CLAS" && s.seen[refKey{BAdI, "BADI", r.Name}] {
			continue
		}
		out = append(out, r)
	}
	sortByLine(out)
	return out
}

func sortByLine(refs []Ref) {
	// insertion sort: stable, and the lists are short
	for i := 1; i < len(refs); i++ {
		for j := i; j > 0 && refs[j].Line < refs[j-1].Line; j-- {
			refs[j], refs[j-1] = refs[j-1], refs[j]
		}
	}
}

// declareInterfaceComments reads the `*"` interface block SAP writes at the
// top of a function module, so its parameters count as variables.
func (s *abapState) declareInterfaceComments(src string) {
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "*\"") {
			toks := tokenize(l[2:])
			for i, t := range toks {
				if t.kind != tWord {
					continue
				}
				if i+1 < len(toks) && toks[i+1].kind == tWord && (toks[i+1].text == "TYPE" || toks[i+1].text == "LIKE" || toks[i+1].text == "STRUCTURE") {
					s.data[t.text] = true
				}
				if (t.text == "VALUE" || t.text == "REFERENCE") && i+2 < len(toks) && toks[i+1].text == "(" {
					s.data[toks[i+2].text] = true
				}
			}
		}
	}
}

// interfaceCommentRefs records the types of the `*"` interface block of a
// function module (`*"  VALUE(I_X) TYPE BUKRS`, `*"  T_X STRUCTURE BAPIRET2`).
func (s *abapState) interfaceCommentRefs(src string) {
	if !s.function {
		return // a `*"` comment in a report is just a comment
	}
	s.fmInterface = true
	defer func() { s.fmInterface = false }()
	for n, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(l, "*\"") {
			continue
		}
		toks := tokenize(l[2:])
		for i := range toks {
			toks[i].line = n + 1
		}
		s.typeClauses(toks, "FUNCTION")
	}
}

func word(st []token, i int) string {
	if i >= 0 && i < len(st) && st[i].kind == tWord {
		return st[i].text
	}
	return ""
}

func punct(st []token, i int, p string) bool {
	return i >= 0 && i < len(st) && st[i].kind == tPunct && st[i].text == p
}

func has(st []token, w string) bool {
	for _, t := range st {
		if t.kind == tWord && t.text == w {
			return true
		}
	}
	return false
}

// base is the object part of a typed name: VBAK-VBELN -> VBAK.
func base(name string) string {
	if i := strings.IndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

func (s *abapState) declare(st []token) {
	// inline declarations anywhere: DATA(x), @DATA(x), FINAL(x), FIELD-SYMBOL(<x>)
	for i, t := range st {
		if t.kind == tWord && punct(st, i+1, "(") && !st[i+1].space && word(st, i+2) != "" {
			switch t.text {
			case "DATA", "@DATA", "FINAL", "@FINAL", "FIELD-SYMBOL":
				s.data[st[i+2].text] = true
			}
		}
	}
	first := word(st, 0)
	name := word(st, 1)
	if punct(st, 1, "(") {
		return // inline declaration statement
	}
	switch first {
	case "TYPES", "DATA", "CLASS-DATA", "STATICS", "CONSTANTS":
		// components of BEGIN OF … END OF are not types or variables of their own
		switch {
		case name == "BEGIN" && word(st, 2) == "OF" && word(st, 3) == "ENUM":
			// BEGIN OF ENUM e [STRUCTURE s]: e a type, s a constant structure
			s.depth++
			s.types[word(st, 4)] = true
			if word(st, 5) == "STRUCTURE" {
				s.data[word(st, 6)] = true
			}
			return
		case name == "BEGIN" && word(st, 2) == "OF":
			s.depth++
			if s.depth > 1 {
				return
			}
			name = word(st, 3)
		case name == "END" && word(st, 2) == "OF":
			if s.depth > 0 {
				s.depth--
			}
			return
		case s.depth > 0:
			return
		}
	}
	switch first {
	case "REPORT", "PROGRAM", "FUNCTION-POOL", "FUNCTION", "TYPE-POOL", "CLASS-POOL", "INTERFACE-POOL":
		s.types[name] = true
		s.function = s.function || first == "FUNCTION"
	case "CLASS", "INTERFACE":
		if w := word(st, 2); w == "DEFINITION" && (has(st, "LOAD") || has(st, "DEFERRED") && has(st, "PUBLIC")) || w == "LOAD" {
			return // a reference to a global class, not a declaration
		}
		s.types[name] = true
		for i := range st {
			if word(st, i) == "INHERITING" && word(st, i+1) == "FROM" && word(st, i+2) != "" {
				s.supers = append(s.supers, st[i+2].text)
			}
		}
	case "TYPES":
		s.types[name] = true
	case "TABLES", "NODES":
		s.tables[name] = true
	case "DATA", "CLASS-DATA", "STATICS", "CONSTANTS", "PARAMETERS", "PARAMETER", "SELECT-OPTIONS",
		"RANGES", "FIELD-SYMBOLS":
		s.data[name] = true
	}
	if !declStarts[first] {
		return
	}
	for i, t := range st {
		if t.kind != tWord {
			continue
		}
		if t.text == "TYPE" && word(st, i+1) == "REF" && word(st, i+2) == "TO" && word(st, i+3) != "" && word(st, i-1) != "" {
			s.refTo[st[i-1].text] = st[i+3].text // for GET BADI and CREATE OBJECT without TYPE
		}
		// parameters: `iv_x TYPE t`, `VALUE(rv_x) TYPE t`
		if (t.text == "TYPE" || t.text == "LIKE" || t.text == "STRUCTURE") && i > 0 {
			if p := word(st, i-1); p != "" && first != "TYPES" {
				s.data[strings.TrimLeft(p, "!")] = true // !iv_x: the escaped name is iv_x
			} else if punct(st, i-1, ")") && word(st, i-2) != "" {
				s.data[st[i-2].text] = true
			}
		}
	}
	if first == "FORM" {
		// untyped FORM parameters: every plain word after USING / CHANGING / TABLES
		skipNext := false
		for i := 2; i < len(st); i++ {
			w := word(st, i)
			switch w {
			case "", "USING", "CHANGING", "TABLES", "RAISING", "VALUE", "OPTIONAL":
				continue
			case "TYPE", "LIKE", "STRUCTURE", "REF", "TO", "OF", "LINE", "STANDARD", "TABLE":
				skipNext = true
				continue
			}
			if skipNext {
				skipNext = false
				continue
			}
			s.data[w] = true
		}
	}
}

// isLocalType reports names the source declares itself.
func (s *abapState) isLocalType(name string) bool {
	return s.types[name] || builtin[name]
}

func (s *abapState) class(kind Kind, name string, line int) {
	name = strings.TrimLeft(name, "!@")
	if name == "" || name == "ME" || name == "SUPER" || s.isLocalType(name) || strings.ContainsAny(name, "<>-(") {
		return
	}
	s.add(kind, classType(name), name, line)
}

// intf records a name the syntax says is an interface (INTERFACES i, i~comp),
// whatever its prefix.
func (s *abapState) intf(kind Kind, name string, line int) {
	name = strings.TrimLeft(name, "!@")
	if name == "" || s.isLocalType(name) || strings.ContainsAny(name, "<>-(") {
		return
	}
	s.add(kind, "INTF", name, line)
}

func (s *abapState) ddicType(name string, line int) {
	name = strings.TrimLeft(name, "!@")
	if name == "" || s.isLocalType(base(name)) || strings.ContainsAny(name, "<>=~") {
		return
	}
	typ := "TYPE"
	if b := base(name); b == "SY" {
		typ, name = "TABL", "SYST" // sy-datum: the system fields are structure SYST
	} else if b != name {
		typ = "TABL" // x-y: a component of a table or structure, both TABL in TADIR
		name = b
	}
	s.add(TypeUse, typ, name, line)
}

func (s *abapState) references(st []token) {
	first := word(st, 0)
	switch first {
	case "CALL":
		switch word(st, 1) {
		case "FUNCTION":
			if len(st) > 2 && st[2].kind == tString {
				s.add(Call, "FUNC", strings.ToUpper(strings.TrimSpace(st[2].text)), st[2].line)
			}
		case "TRANSACTION":
			if len(st) > 2 && st[2].kind == tString {
				s.add(Call, "TRAN", strings.ToUpper(strings.TrimSpace(st[2].text)), st[2].line)
			}
		case "BADI":
			s.badiVar(st, 2)
		}
	case "METHOD":
		s.amdpUsing(st)
		s.interfaceMethod(st)
	case "METHODS", "CLASS-METHODS":
		s.interfaceMethod(st)
	case "GET":
		if word(st, 1) == "BADI" {
			s.badiVar(st, 2)
		}
	case "LEAVE":
		if word(st, 1) == "TO" && word(st, 2) == "TRANSACTION" && len(st) > 3 && st[3].kind == tString {
			s.add(Call, "TRAN", strings.ToUpper(strings.TrimSpace(st[3].text)), st[3].line)
		}
	case "SUBMIT":
		if w := word(st, 1); w != "" && !punct(st, 2, ")") {
			s.add(Call, "PROG", w, st[1].line)
		}
	case "PERFORM":
		for i := range st {
			if word(st, i) == "IN" && word(st, i+1) == "PROGRAM" && word(st, i+2) != "" {
				s.add(Call, "PROG", st[i+2].text, st[i+2].line)
			}
		}
		if punct(st, 2, "(") && !st[2].space && word(st, 3) != "" && punct(st, 4, ")") {
			s.add(Call, "PROG", st[3].text, st[3].line)
		}
	case "INCLUDE":
		switch w := word(st, 1); w {
		case "STRUCTURE":
			if n := word(st, 2); n != "" && !s.isLocalType(n) {
				s.add(TypeUse, "TABL", n, st[2].line) // structures are TABL in TADIR
			}
		case "TYPE":
			if n := word(st, 2); n != "" {
				s.ddicType(n, st[2].line)
			}
		case "":
		default:
			if !s.types[w] {
				s.add(Include, "PROG", w, st[1].line)
			}
		}
	case "TYPE-POOLS":
		if w := word(st, 1); w != "" {
			s.add(TypeUse, "TYPE", w, st[1].line)
		}
	case "TABLES", "NODES":
		if w := word(st, 1); w != "" && !strings.HasPrefix(w, "*") {
			s.add(TypeUse, "TABL", w, st[1].line)
		}
	case "INTERFACES":
		if w := word(st, 1); w != "" {
			s.intf(Implement, w, st[1].line)
		}
	case "ALIASES":
		if w := word(st, 3); word(st, 2) == "FOR" && strings.Contains(w, "~") {
			s.intf(TypeUse, w[:strings.IndexByte(w, '~')], st[3].line)
		}
	case "ENDCLASS", "ENDINTERFACE":
		s.inClass = false
	case "CLASS", "INTERFACE":
		if !has(st, "DEFERRED") && !has(st, "LOAD") {
			s.inClass = true
		}
		for i := 2; i < len(st); i++ {
			switch word(st, i) {
			case "INHERITING":
				if word(st, i+1) == "FROM" && word(st, i+2) != "" {
					s.class(Implement, st[i+2].text, st[i+2].line)
				}
			case "FRIENDS":
				for j := i + 1; word(st, j) != ""; j++ {
					if w := word(st, j); w != "GLOBAL" {
						s.class(TypeUse, w, st[j].line)
					}
				}
			case "LOAD":
				s.class(TypeUse, word(st, 1), st[1].line)
			case "DEFERRED":
				if has(st, "PUBLIC") {
					s.class(TypeUse, word(st, 1), st[1].line)
				}
			}
		}
	case "RAISE":
		for i := range st {
			if word(st, i) == "EXCEPTION" && word(st, i+1) == "TYPE" && word(st, i+2) != "" {
				s.class(TypeUse, st[i+2].text, st[i+2].line)
			}
		}
	case "CATCH":
		for i := 1; i < len(st); i++ {
			w := word(st, i)
			if w == "INTO" || w == "" {
				break
			}
			if w != "BEFORE" && w != "UNWIND" {
				s.class(TypeUse, w, st[i].line)
			}
		}
	case "CREATE":
		if word(st, 1) == "OBJECT" {
			typed := false
			for i := range st {
				if w := word(st, i); w == "EXPORTING" || w == "EXCEPTIONS" {
					break // parameters: `type = …` names no class
				}
				if word(st, i) == "TYPE" && word(st, i+1) != "" {
					s.class(Instantiate, st[i+1].text, st[i+1].line)
					typed = true
				}
			}
			if t, ok := s.refTo[word(st, 2)]; ok && !typed {
				s.class(Instantiate, t, st[2].line) // CREATE OBJECT lo: the class of lo's declaration
			}
		}
	case "ENHANCEMENT-POINT", "ENHANCEMENT-SECTION":
		for i := range st {
			if word(st, i) == "SPOTS" {
				for j := i + 1; word(st, j) != "" && word(st, j) != "STATIC" && word(st, j) != "INCLUDE"; j++ {
					s.add(Enhancement, "ENHS", st[j].text, st[j].line)
				}
			}
		}
	case "ENHANCEMENT":
		if w := word(st, 2); w != "" {
			s.add(Enhancement, "ENHO", w, st[2].line)
		}
	case "MESSAGE":
		s.message(st)
	case "AUTHORITY-CHECK":
		if word(st, 1) == "OBJECT" && len(st) > 2 && st[2].kind == tString {
			s.add(Authority, "SUSO", strings.ToUpper(strings.TrimSpace(st[2].text)), st[2].line)
		}
	case "REPORT", "PROGRAM", "FUNCTION-POOL":
		for i := range st {
			if word(st, i) == "MESSAGE-ID" && word(st, i+1) != "" {
				s.add(Message, "MSAG", st[i+1].text, st[i+1].line)
			}
		}
	case "READ":
		if word(st, 1) == "ENTITIES" && word(st, 2) == "OF" && word(st, 3) != "" {
			s.add(Read, "BDEF", st[3].text, st[3].line) // RAP EML
		}
	case "INSERT", "UPDATE", "MODIFY", "DELETE":
		k := 1
		if first == "MODIFY" && word(st, 1) == "AUGMENTING" {
			k = 2 // MODIFY AUGMENTING ENTITIES OF: a behaviour pool's augmentation
		}
		if first == "MODIFY" && word(st, k) == "ENTITIES" && word(st, k+1) == "OF" && word(st, k+2) != "" {
			s.add(Write, "BDEF", st[k+2].text, st[k+2].line)
		}
		s.write(st)
	case "EXPORT", "IMPORT":
		kind := Write
		if first == "IMPORT" {
			kind = Read
		}
		for i := range st {
			if word(st, i) == "DATABASE" && word(st, i+1) != "" && punct(st, i+2, "(") {
				s.add(kind, "TABL", st[i+1].text, st[i+1].line)
			}
		}
	}
	if declStarts[first] && first != "CREATE" || first == "CREATE" && word(st, 1) == "DATA" || first == "ASSIGN" {
		s.typeClauses(st, first)
	}
	s.sqlReads(st)
	s.generic(st)
}

// interfaceMethod records the interface of METHOD(S) intf~meth: an
// implementation, a redefinition or an alias of an interface method.
func (s *abapState) interfaceMethod(st []token) {
	if w := word(st, 1); strings.Contains(w, "~") {
		if i := w[:strings.IndexByte(w, '~')]; !s.seen[refKey{Implement, "INTF", i}] {
			s.intf(TypeUse, i, st[1].line)
		}
	}
}

// amdpUsing records the tables and views an AMDP method names in USING; its
// other methods (class=>method) the generic scan records.
func (s *abapState) amdpUsing(st []token) {
	if !has(st, "DATABASE") {
		return
	}
	for i := range st {
		if word(st, i) != "USING" {
			continue
		}
		for j := i + 1; word(st, j) != ""; j++ {
			if n := st[j].text; !strings.Contains(n, "=>") {
				s.add(Read, sqlSourceType(n), n, st[j].line)
			}
		}
	}
}

func (s *abapState) badiVar(st []token, i int) {
	w := word(st, i)
	if k := strings.Index(w, "->"); k >= 0 {
		w = w[:k]
	}
	if w != "" {
		if _, ok := s.badis[w]; !ok {
			s.badis[w] = st[i].line
		}
	}
}

func (s *abapState) message(st []token) {
	// MESSAGE e001(zsd) … / MESSAGE ID 'ZSD' TYPE 'E' NUMBER 001
	if w := word(st, 1); len(w) == 4 && strings.IndexByte("AEISWX", w[0]) >= 0 && punct(st, 2, "(") && !st[2].space && word(st, 3) != "" {
		s.add(Message, "MSAG", st[3].text, st[3].line)
	}
	if word(st, 1) == "ID" && len(st) > 2 && st[2].kind == tString {
		s.add(Message, "MSAG", strings.ToUpper(strings.TrimSpace(st[2].text)), st[2].line)
	}
}

// typeClauses reads TYPE / LIKE clauses of a declaration.
func (s *abapState) typeClauses(st []token, first string) {
	for i := 0; i < len(st); i++ {
		w := word(st, i)
		if w == "RAISING" {
			for j := i + 1; j < len(st); j++ {
				n := word(st, j)
				if n == "" || n == "IMPORTING" || n == "EXPORTING" || n == "CHANGING" || n == "RETURNING" || n == "EXCEPTIONS" || n == "USING" || n == "TABLES" {
					break
				}
				if n != "RESUMABLE" {
					s.class(TypeUse, n, st[j].line)
				}
			}
			continue
		}
		if w == "FOR" && word(st, i+1) == "EVENT" && word(st, i+3) == "OF" && word(st, i+4) != "" {
			s.class(TypeUse, st[i+4].text, st[i+4].line) // METHODS h FOR EVENT e OF c: the event's class
			i += 4
			continue
		}
		if prev := word(st, i-1); w == "KEY" && (prev == "WITH" || prev == "UNIQUE" || prev == "NON-UNIQUE" || prev == "SORTED" || prev == "HASHED") ||
			w == "COMPONENTS" && (word(st, i-2) == "KEY" || word(st, i-2) == "ALIAS") {
			// WITH UNIQUE KEY type name: key components, not types
			for word(st, i+1) != "" && word(st, i+1) != "WITH" {
				i++
			}
			continue
		}
		if w != "TYPE" && w != "LIKE" && w != "STRUCTURE" {
			continue
		}
		if first == "SELECT-OPTIONS" && w != "TYPE" {
			continue
		}
		if n := word(st, i+1); n == "TYPE" || n == "LIKE" {
			continue // a component or parameter named type or like: `type TYPE t`
		}
		if w == "STRUCTURE" && (has(st, "ENUM") || word(st, i-1) == "OF") {
			continue // BEGIN OF ENUM e STRUCTURE s: s is declared here; ASSIGN … OF STRUCTURE dobj
		}
		j, refTo, ok := s.typeOperand(st, i+1)
		if !ok {
			i = j
			continue
		}
		target := word(st, j)
		if target == "" || (j < len(st) && st[j].kind != tWord) {
			continue
		}
		switch {
		case refTo:
			b := target
			if k := strings.Index(b, "=>"); k > 0 {
				b = b[:k]
			}
			if b == "DATA" || b == "OBJECT" {
				break
			}
			if !s.data[base(b)] && !s.tables[base(b)] {
				if strings.ContainsRune(b, '-') {
					s.ddicType(b, st[j].line)
				} else {
					s.class(TypeUse, b, st[j].line)
				}
			}
		case strings.Contains(target, "=>"):
			// class=>type: the generic scan records the class
		case strings.Contains(target, "~"):
			s.intf(TypeUse, target[:strings.IndexByte(target, '~')], st[j].line)
		case w == "LIKE" && s.fmInterface:
			s.ddicType(target, st[j].line) // LIKE in a function module's interface names the DDIC
		case w == "LIKE" && (base(target) == "SY" || base(target) == "SYST"):
			s.ddicType(target, st[j].line) // LIKE sy-tabix: the system field of structure SYST
		case w == "LIKE":
			b := base(target)
			if !s.inClass && !s.data[b] && !s.tables[b] && !strings.HasPrefix(b, "<") && b != "SY" && b != "SYST" {
				s.ddicType(target, st[j].line)
			}
		case w == "STRUCTURE":
			// TABLES p STRUCTURE s / FIELD-SYMBOLS <f> STRUCTURE s: a flat structure, or a data object
			if b := base(target); !s.data[b] && !s.tables[b] && !s.isLocalType(b) && !strings.HasPrefix(b, "<") {
				s.add(TypeUse, "TABL", b, st[j].line)
			}
		default:
			s.ddicType(target, st[j].line)
		}
		i = j
	}
}

// rapKeywords are the words of a RAP derived type between FOR and the entity:
// TYPE TABLE FOR ACTION IMPORT e~a, TYPE RESPONSE FOR FAILED EARLY e.
var rapKeywords = setOf("CREATE", "UPDATE", "DELETE", "ACTION", "IMPORT", "RESULT", "READ", "LINK", "FAILED",
	"MAPPED", "REPORTED", "EARLY", "LATE", "CHANGE", "KEY", "OF", "PERMISSIONS", "INSTANCE", "GLOBAL", "FEATURES",
	"AUTHORIZATION", "LOCK", "DETERMINATION", "VALIDATION", "FUNCTION", "EVENT", "HIERARCHY", "FIELDS", "BY",
	"ASSOCIATION", "SAVE", "MODIFY", "REQUEST", "EVALUATE", "INFORMATION", "NUMBERING", "DRAFT")

// typeOperand skips the table and reference words after TYPE / LIKE and
// returns the index of the named type. ok is false for generic types (`TYPE
// any`, `TYPE STANDARD TABLE` without OF), whose next word is no type, and for
// RAP derived types, which it records itself as a type use of their entity.
func (s *abapState) typeOperand(st []token, j int) (int, bool, bool) {
	refTo := false
	for {
		n := word(st, j)
		switch n {
		case "STANDARD", "SORTED", "HASHED", "INDEX", "ANY":
			if word(st, j+1) == "TABLE" {
				j++
				continue
			}
			if n == "ANY" {
				return j, false, false
			}
		case "TABLE", "STRUCTURE", "RESPONSE", "REQUEST":
			if word(st, j+1) == "FOR" {
				s.rapEntity(st, j+2)
				return j + 1, false, false
			}
			if n == "TABLE" {
				if word(st, j+1) != "OF" {
					return j, false, false // TYPE [STANDARD] TABLE: generic
				}
				j += 2
				continue
			}
		case "RANGE", "LINE":
			if word(st, j+1) == "OF" {
				j += 2
				continue
			}
		case "REFERENCE":
			j++
			continue
		case "HANDLE":
			if word(st, j+1) != "" {
				return j + 1, false, false // CREATE DATA … TYPE HANDLE rtti: dynamic
			}
		case "REF":
			if word(st, j+1) == "TO" {
				refTo = true
				j += 2
				continue
			}
		}
		return j, refTo, true
	}
}

// rapEntity records the entity of a RAP derived type as a type use of the CDS entity.
func (s *abapState) rapEntity(st []token, j int) {
	for rapKeywords[word(st, j)] {
		j++
	}
	n := word(st, j)
	if k := strings.IndexAny(n, "~\\"); k >= 0 {
		n = n[:k]
	}
	if n != "" && !s.isLocalType(n) {
		s.add(TypeUse, "DDLS", n, st[j].line)
	}
}

// sqlReads records FROM / JOIN sources after the first SELECT of a statement,
// which covers subqueries, SELECT SINGLE, FOR ALL ENTRIES, OPEN CURSOR and
// INSERT … FROM ( SELECT … ).
func (s *abapState) sqlReads(st []token) {
	sel := -1
	for i, t := range st {
		if t.kind == tWord && t.text == "SELECT" {
			sel = i
			break
		}
	}
	if sel < 0 {
		return
	}
	for i := sel + 1; i < len(st); i++ {
		w := word(st, i)
		if w != "FROM" && w != "JOIN" {
			continue
		}
		j := i + 1
		for punct(st, j, "(") && word(st, j+1) != "" && st[j+1].space {
			j++ // FROM ( a AS x INNER JOIN … ): a parenthesised join
		}
		n := word(st, j)
		// FROM cross is the cross-reference table: CROSS JOIN never directly follows FROM
		if n == "" || sqlStop[n] && n != "CROSS" || strings.HasPrefix(n, "@") || strings.HasPrefix(n, "+") || strings.HasPrefix(n, ":") {
			continue
		}
		if punct(st, j-1, "(") && !st[j].space {
			continue // FROM (lv_table): dynamic
		}
		s.add(Read, sqlSourceType(n), n, st[j].line)
	}
}

// write records the database table an INSERT / UPDATE / MODIFY / DELETE
// changes, and leaves out the internal-table forms of the same statements.
func (s *abapState) write(st []token) {
	first := word(st, 0)
	idx := 1
	switch first {
	case "UPDATE":
	case "INSERT":
		switch word(st, 1) {
		case "INTO":
			if word(st, 2) == "TABLE" {
				return // INSERT INTO TABLE itab (header line)
			}
			idx = 2
		case "LINES", "INITIAL", "VALUE", "REPORT", "TEXTPOOL", "DYNPRO", "":
			return
		default:
			if has(st, "INTO") || has(st, "INDEX") || has(st, "ASSIGNING") || has(st, "REFERENCE") {
				return // INSERT wa INTO [TABLE] itab
			}
			if !has(st, "FROM") && !s.tables[word(st, 1)] {
				return
			}
		}
	case "MODIFY":
		switch word(st, 1) {
		case "SCREEN", "LINE", "CURRENT", "TABLE", "ENTITIES", "ENTITY", "AUGMENTING", "REPORT", "":
			return
		}
		if has(st, "INDEX") || has(st, "TRANSPORTING") || has(st, "ASSIGNING") || has(st, "USING") {
			return
		}
		if !has(st, "FROM") && !s.tables[word(st, 1)] {
			return
		}
	case "DELETE":
		switch word(st, 1) {
		case "FROM":
			switch word(st, 2) {
			case "MEMORY", "SHARED":
				return
			case "DATABASE":
				if word(st, 3) != "" && punct(st, 4, "(") {
					s.add(Write, "TABL", st[3].text, st[3].line)
				}
				return
			}
			idx = 2
		case "ADJACENT", "TABLE", "DATASET", "REPORT", "TEXTPOOL", "DYNPRO", "":
			return
		default:
			if has(st, "WHERE") || has(st, "INDEX") || has(st, "USING") {
				return // DELETE itab WHERE / INDEX
			}
			if !has(st, "FROM") && !s.tables[word(st, 1)] {
				return
			}
			for i := range st { // DELETE itab FROM n TO m
				if word(st, i) == "TO" {
					return
				}
			}
		}
	}
	n := word(st, idx)
	if n == "" || punct(st, idx+1, "[") || strings.ContainsAny(n, "<>-~=") || strings.HasPrefix(n, "@") {
		return
	}
	if punct(st, idx-1, "(") {
		return
	}
	if s.data[n] && !s.tables[n] {
		return // a variable: an internal table
	}
	s.add(Write, sqlSourceType(n), n, st[idx].line)
}

// generic finds class=>member and constructor operators in any statement.
func (s *abapState) generic(st []token) {
	callMethod := word(st, 0) == "CALL" && word(st, 1) == "METHOD"
	for i, t := range st {
		if t.kind != tWord {
			continue
		}
		if k := strings.Index(t.text, "=>"); k > 0 {
			b := strings.TrimLeft(t.text[:k], "@!")
			if strings.Contains(b, "->") || strings.HasPrefix(b, "(") {
				continue
			}
			kind := Attribute
			switch {
			case punct(st, i+1, "(") && !st[i+1].space, callMethod && i == 2:
				kind = Call
			case word(st, i-1) == "TYPE" || word(st, i-1) == "LIKE" || word(st, i-1) == "TO" || word(st, i-1) == "OF":
				kind = TypeUse
			}
			s.class(kind, b, t.line)
			if m := t.text[k+2:]; strings.Contains(m, "~") {
				s.intf(TypeUse, m[:strings.IndexByte(m, '~')], t.line) // cls=>intf~meth( )
			}
			continue
		}
		if k := strings.LastIndex(t.text, "->"); k > 0 {
			if m := t.text[k+2:]; strings.Contains(m, "~") {
				s.intf(TypeUse, m[:strings.IndexByte(m, '~')], t.line) // ref->intf~meth( )
			}
			continue
		}
		kind, ok := constructors[t.text]
		if !ok || word(st, i+1) == "" || !punct(st, i+2, "(") || st[i+2].space {
			continue
		}
		n := st[i+1].text
		if n == "#" || builtin[n] || s.isLocalType(n) {
			continue
		}
		switch t.text {
		case "NEW", "CAST":
			s.class(kind, n, st[i+1].line)
		default:
			s.ddicType(n, st[i+1].line)
		}
	}
}
