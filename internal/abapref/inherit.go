package abapref

import "strings"

// ClassTypes is what a subclass inherits from a global class without naming
// it: the types of its public and protected sections, and its superclass,
// which passes on its own.
type ClassTypes struct {
	Super string
	Types []string
}

// Classes maps global class names to what they pass on to subclasses.
type Classes map[string]ClassTypes

// GlobalClass reads the definition of the global class in a class pool: its
// name, superclass and the types a subclass may use unqualified. ok is false
// for a source without a global class definition.
func GlobalClass(src string) (name string, c ClassTypes, ok bool) {
	inDef, visible, depth := false, false, 0
	if i := IndexFold(src, "ENDCLASS"); i >= 0 {
		src = src[:i+len("ENDCLASS")] // the definition comes first: its implementation is not read
	}
	for _, st := range statements(tokenize(src)) {
		first := word(st, 0)
		switch {
		case !inDef && first == "CLASS" && word(st, 2) == "DEFINITION" && has(st, "PUBLIC") && !has(st, "DEFERRED") && !has(st, "LOAD"):
			inDef, ok, name = true, true, word(st, 1)
			for i := range st {
				if word(st, i) == "INHERITING" && word(st, i+1) == "FROM" {
					c.Super = word(st, i+2)
				}
			}
		case !inDef:
		case first == "ENDCLASS":
			return name, c, ok
		case first == "PUBLIC" || first == "PROTECTED":
			visible = true
		case first == "PRIVATE":
			visible = false
		case visible && first == "TYPES":
			n := word(st, 1)
			switch {
			case n == "BEGIN" && word(st, 2) == "OF" && word(st, 3) == "ENUM":
				depth++
				c.Types = append(c.Types, word(st, 4))
			case n == "BEGIN" && word(st, 2) == "OF":
				depth++
				if depth == 1 {
					c.Types = append(c.Types, word(st, 3))
				}
			case n == "END" && word(st, 2) == "OF":
				if depth > 0 {
					depth--
				}
			case depth == 0 && n != "":
				c.Types = append(c.Types, n)
			}
		}
	}
	return name, c, ok
}

// ABAPIn is ABAP for a source whose classes may inherit from the global
// classes given: a type a superclass declares is not a DDIC reference.
func ABAPIn(src string, classes Classes) []Ref {
	return abapIn(src, classes)
}

// inherit declares the types the superclasses pass on (up to 20 levels: a
// cycle in broken code must not loop).
func (s *abapState) inherit(classes Classes) {
	for _, super := range s.supers {
		for i := 0; i < 20 && super != ""; i++ {
			c, ok := classes[strings.ToUpper(super)]
			if !ok {
				break
			}
			for _, t := range c.Types {
				s.types[t] = true
			}
			super = c.Super
		}
	}
}

// IndexFold is the index of the first occurrence of the ASCII word w (upper case) in s in any
// case, -1 if there is none: a cheap test before tokenizing a whole source.
func IndexFold(s, w string) int {
	for i := 0; i+len(w) <= len(s); i++ {
		if c := s[i]; c == w[0] || c == w[0]+'a'-'A' {
			if strings.EqualFold(s[i:i+len(w)], w) {
				return i
			}
		}
	}
	return -1
}
