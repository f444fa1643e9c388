package abapref

import "strings"

// tokenizeCDS splits CDS DDL into words and single-byte punctuation, dropping
// `//` and `/* */` comments; string literals become tString tokens.
func tokenizeCDS(src string) []token {
	var toks []token
	line := 1
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			i += 2
			for i < n && !(src[i] == '*' && i+1 < n && src[i+1] == '/') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			i += 2
		case c == '\'':
			j := i + 1
			for j < n && src[j] != '\'' && src[j] != '\n' {
				j++
			}
			toks = append(toks, token{kind: tString, text: src[i+1 : j], line: line})
			if j < n && src[j] == '\'' {
				j++
			}
			i = j
		case isCDSWord(c):
			j := i
			for j < n && isCDSWord(src[j]) {
				j++
			}
			toks = append(toks, token{kind: tWord, text: strings.ToUpper(src[i:j]), line: line})
			i = j
		default:
			toks = append(toks, token{kind: tPunct, text: src[i : i+1], line: line})
			i++
		}
	}
	return toks
}

func isCDSWord(c byte) bool {
	return c == '_' || c == '/' || c == '$' || c == '#' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80
}

// CDS extracts the references of a CDS DDL source: the data sources of
// select from / join / projection on, association and composition targets,
// the view an extend view extends, the class of a table function, and the
// data elements typing parameters and elements (`p_curr : waers_curr`).
func CDS(src string) []Ref {
	toks := tokenizeCDS(src)
	var c collector
	self := map[string]bool{}
	for i := range toks {
		if word(toks, i) == "DEFINE" {
			j := i + 1
			for {
				switch word(toks, j) {
				case "ROOT", "VIEW", "ENTITY", "TABLE", "FUNCTION", "ABSTRACT", "CUSTOM", "HIERARCHY", "TRANSIENT", "EXTERNAL":
					j++
					continue
				}
				break
			}
			if w := word(toks, j); w != "" {
				self[w] = true
			}
		}
	}
	source := func(kind Kind, j int) {
		w := word(toks, j)
		if w == "" || self[w] || strings.HasPrefix(w, "$") {
			return
		}
		c.add(kind, sqlSourceType(w), w, toks[j].line)
	}
	// cdsTarget is a composition child or redirection target: always a CDS entity.
	cdsTarget := func(j int) {
		if w := word(toks, j); w != "" && !self[w] && !strings.HasPrefix(w, "$") {
			c.add(Association, "DDLS", w, toks[j].line)
		}
	}
	elementTypes(&c, toks)
	for i := 0; i < len(toks); i++ {
		switch word(toks, i) {
		case "FROM", "JOIN":
			j := i + 1
			for punct(toks, j, "(") {
				j++
			}
			if word(toks, i-1) == "CONDITIONS" {
				if word(toks, j) == "SUPER" {
					continue // DCL: inheriting conditions from super (the extended role)
				}
				if word(toks, j) == "ENTITY" {
					j++ // DCL: inheriting conditions from entity E
				}
			}
			source(Read, j)
		case "ON":
			// as projection on S; DCLS: grant select on S
			if word(toks, i-1) == "PROJECTION" || word(toks, i-1) == "SELECT" {
				source(Read, i+1)
			}
		case "ASSOCIATION", "COMPOSITION":
			// association [0..1] to [parent] T / association of many to one T /
			// composition [0..*] of T / composition of exact one to many T
			if word(toks, i-1) == "TO" && word(toks, i+1) == "CHILD" {
				continue // redirected to composition child: see REDIRECTED
			}
			j := i + 1
			for ; j < len(toks) && j < i+12; j++ {
				w := word(toks, j)
				if w == "TO" || (w == "OF" && word(toks, i) == "COMPOSITION") {
					break
				}
			}
			if j >= len(toks) || j >= i+12 {
				continue
			}
			j++
			for {
				switch word(toks, j) {
				case "PARENT", "EXACT", "ONE", "MANY", "TO":
					j++
					continue
				}
				break
			}
			if word(toks, i) == "COMPOSITION" {
				cdsTarget(j)
			} else {
				source(Association, j) // an association may point to a table: typed like a data source
			}
		case "REDIRECTED":
			// projections: redirected to [parent | composition child] T
			j := i + 1
			for {
				switch word(toks, j) {
				case "TO", "PARENT", "COMPOSITION", "CHILD":
					j++
					continue
				}
				break
			}
			if j > i+1 {
				cdsTarget(j)
			}
		case "EXTEND":
			j := i + 1
			for word(toks, j) == "VIEW" || word(toks, j) == "ENTITY" || word(toks, j) == "CUSTOM" || word(toks, j) == "ABSTRACT" {
				j++
			}
			if w := word(toks, j); w != "" && j > i+1 {
				c.add(Extend, "DDLS", w, toks[j].line)
			}
		case "CAST":
			castType(&c, toks, i)
		case "IMPLEMENTED":
			if word(toks, i+1) == "BY" && word(toks, i+2) == "METHOD" && word(toks, i+3) != "" {
				c.add(Call, classType(toks[i+3].text), toks[i+3].text, toks[i+3].line)
			}
		}
	}
	return c.refs
}

// castType records the data element of `cast( x as dtel [preserving type] )`;
// built-in types (abap.char( 10 )) are no reference.
func castType(c *collector, toks []token, i int) {
	if !punct(toks, i+1, "(") {
		return
	}
	depth, as := 0, -1
	for j := i + 1; j < len(toks); j++ {
		switch {
		case punct(toks, j, "("):
			depth++
		case punct(toks, j, ")"):
			depth--
		case depth == 1 && word(toks, j) == "AS":
			as = j
		}
		if depth == 0 {
			break
		}
	}
	if n := word(toks, as+1); as > 0 && n != "" && !punct(toks, as+2, ".") {
		c.add(TypeUse, "DTEL", n, toks[as+1].line)
	}
}

// elementTypes records the data elements of typed parameters and elements,
// `name : dtel` at parenthesis depth 0 outside annotations: a view's `with
// parameters`, the elements of custom and abstract entities and of a table
// function's `returns { }`. Built-in types (abap.dats, abap.curr( 16, 2 )),
// associations, redirections and a projection's `: localized` are no such
// reference; a parameter binding `( p : $parameters.p )` and a path filter
// `_Text[ 1: Language = … ]` sit inside brackets.
func elementTypes(c *collector, toks []token) {
	anno := annotations(toks)
	depth := 0
	for i := 0; i < len(toks); i++ {
		switch {
		case punct(toks, i, "(") || punct(toks, i, "["):
			depth++
		case punct(toks, i, ")") || punct(toks, i, "]"):
			depth--
		}
		if depth != 0 || anno[i] || word(toks, i) == "" || !punct(toks, i+1, ":") || anno[i+1] {
			continue
		}
		t := word(toks, i+2)
		switch {
		case t == "" || strings.HasPrefix(t, "$") || strings.HasPrefix(t, "#") || punct(toks, i+3, "."):
		case t == "ASSOCIATION" || t == "COMPOSITION" || t == "REDIRECTED" || t == "LOCALIZED":
		default:
			c.add(TypeUse, "DTEL", t, toks[i+2].line)
		}
	}
}

// annotations marks the tokens of annotations (`@A.b: value`, `@<A.b: [ … ]`),
// whose `name: value` pairs are no typed elements.
func annotations(toks []token) []bool {
	in := make([]bool, len(toks)+1)
	for i := 0; i < len(toks); i++ {
		if !punct(toks, i, "@") {
			continue
		}
		j := i + 1
		if punct(toks, j, "<") {
			j++
		}
		for word(toks, j) != "" { // the annotation's path: A.b.c
			j++
			if !punct(toks, j, ".") {
				break
			}
			j++
		}
		if punct(toks, j, ":") {
			j = annotationValue(toks, j+1)
		}
		for k := i; k < j && k < len(toks); k++ {
			in[k] = true
		}
		i = j - 1
	}
	return in
}

// annotationValue is the index after the value starting at j: a literal
// (`'x'`, `true`, `#ENUM`, `-1`, `0.8`) or a bracketed array or object.
func annotationValue(toks []token, j int) int {
	if punct(toks, j, "[") || punct(toks, j, "{") {
		depth := 0
		for ; j < len(toks); j++ {
			switch {
			case punct(toks, j, "[") || punct(toks, j, "{"):
				depth++
			case punct(toks, j, "]") || punct(toks, j, "}"):
				depth--
			}
			if depth == 0 {
				return j + 1
			}
		}
		return j
	}
	if punct(toks, j, "-") {
		j++
	}
	if j < len(toks) && toks[j].kind == tString {
		return j + 1
	}
	for word(toks, j) != "" {
		j++
		if !punct(toks, j, ".") || word(toks, j+1) == "" {
			break
		}
		j++
	}
	return j
}
