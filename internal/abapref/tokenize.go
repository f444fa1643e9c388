package abapref

import "strings"

type tokKind uint8

const (
	tWord   tokKind = iota // identifiers, keywords, operators; upper-cased
	tString                // '…' or `…` literal; text is the raw content
	tPunct                 // . , : ( ) [ ]
)

type token struct {
	kind  tokKind
	text  string
	line  int
	space bool // whitespace or a line start before the token: `meth(` vs `meth (`
}

// isDelim reports the bytes that end an ABAP word.
func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '.', ',', ':', '(', ')', '[', ']', '\'', '"', '`', '|', '{', '}':
		return true
	}
	return false
}

// tokenize splits ABAP source into words, literals and punctuation. Comments
// (`*` in column 1, `"` to the end of the line) and the literal text of string
// templates are dropped; the embedded expressions of templates (`{ … }`) are
// tokenized as code because they can call methods.
func tokenize(src string) []token {
	toks := make([]token, 0, len(src)/5)
	line := 1
	space := true
	// tmpl holds, per open string template, the brace depth of its embedded
	// expression; inText is true while scanning a template's literal text.
	var tmpl []int
	inText := false
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		if inText {
			switch c {
			case '\\':
				if i+1 < n && src[i+1] == '\n' {
					line++
				}
				i += 2
			case '|':
				tmpl = tmpl[:len(tmpl)-1]
				inText = false
				space = false
				i++
			case '{':
				inText = false
				space = true
				i++
			case '\n':
				line++
				i++
			default:
				i++
			}
			continue
		}
		switch c {
		case '\n':
			line++
			i++
			space = true
			continue
		case ' ', '\t', '\r':
			i++
			space = true
			continue
		case '*':
			if (i == 0 || src[i-1] == '\n') && len(tmpl) == 0 {
				for i < n && src[i] != '\n' {
					i++
				}
				continue
			}
		case '"':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case '\'', '`':
			j := i + 1
			for j < n && src[j] != '\n' {
				if src[j] == c {
					if j+1 < n && src[j+1] == c { // doubled quote escapes itself
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, token{kind: tString, text: src[i+1 : j], line: line, space: space})
			if j < n && src[j] == c {
				j++
			}
			i = j
			space = false
			continue
		case '|':
			tmpl = append(tmpl, 0)
			inText = true
			i++
			continue
		case '{', '}':
			if len(tmpl) > 0 {
				top := len(tmpl) - 1
				if c == '{' {
					tmpl[top]++
				} else if tmpl[top] == 0 {
					inText = true
				} else {
					tmpl[top]--
				}
			}
			i++
			space = true
			continue
		case '.', ',', ':', '(', ')', '[', ']':
			toks = append(toks, token{kind: tPunct, text: src[i : i+1], line: line, space: space})
			i++
			space = false
			continue
		}
		j := i
		for j < n && !isDelim(src[j]) {
			j++
		}
		if j-i > 2 && src[i] == '#' && src[i+1] == '#' {
			i = j // a pragma (##NEEDED) is no code; dropped, it cannot hide the statement after it
			continue
		}
		toks = append(toks, token{kind: tWord, text: strings.ToUpper(src[i:j]), line: line, space: space})
		i = j
		space = false
	}
	return toks
}

// dropAMDPBodies removes the SQLScript of AMDP methods (`METHOD m BY DATABASE
// PROCEDURE … USING t.` up to ENDMETHOD): it is no ABAP, and its `FROM dummy`
// or `:var` are no references. The METHOD statement itself, with its USING
// list, stays.
func dropAMDPBodies(toks []token) []token {
	out := toks[:0:0]
	start := true // at a statement start
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		out = append(out, t)
		if !(start && t.kind == tWord && t.text == "METHOD") {
			start = t.kind == tPunct && t.text == "."
			continue
		}
		start = false
		amdp := false
		for i+1 < len(toks) {
			i++
			out = append(out, toks[i])
			if toks[i].kind == tPunct && toks[i].text == "." {
				break
			}
			if toks[i].kind == tWord && toks[i].text == "DATABASE" && toks[i-1].kind == tWord && toks[i-1].text == "BY" {
				amdp = true
			}
		}
		start = true
		if !amdp {
			continue
		}
		for i+1 < len(toks) && !(toks[i+1].kind == tWord && toks[i+1].text == "ENDMETHOD") {
			i++
		}
	}
	return out
}

// statements splits tokens at periods and expands chained statements
// (`DATA: a TYPE x, b TYPE y.` becomes `DATA a TYPE x` and `DATA b TYPE y`).
func statements(toks []token) [][]token {
	var out [][]token
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !(toks[i].kind == tPunct && toks[i].text == ".") {
			continue
		}
		if i > start {
			out = appendChain(out, toks[start:i])
		}
		start = i + 1
	}
	return out
}

func appendChain(out [][]token, st []token) [][]token {
	colon := -1
	for i, t := range st {
		if t.kind == tPunct && t.text == ":" {
			colon = i
			break
		}
	}
	if colon < 0 {
		return append(out, st)
	}
	prefix := st[:colon:colon]
	rest := st[colon+1:]
	depth, from := 0, 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) {
			t := rest[i]
			if t.kind != tPunct {
				continue
			}
			switch t.text {
			case "(", "[":
				depth++
				continue
			case ")", "]":
				if depth > 0 {
					depth--
				}
				continue
			case ",":
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		part := make([]token, 0, len(prefix)+i-from)
		part = append(part, prefix...)
		// A later colon in a chain is ignored, as ABAP does.
		for _, t := range rest[from:i] {
			if !(t.kind == tPunct && t.text == ":") {
				part = append(part, t)
			}
		}
		if len(part) > 0 {
			out = append(out, part)
		}
		from = i + 1
	}
	return out
}
