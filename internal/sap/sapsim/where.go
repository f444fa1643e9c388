package sapsim

import (
	"fmt"
	"regexp"
	"strings"
)

// cond is a parsed RFC_READ_TABLE WHERE clause (the OPTIONS lines joined with spaces).
type cond interface {
	eval(row map[string]string) bool
}

type and struct{ l, r cond }
type or struct{ l, r cond }
type not struct{ c cond }

type compare struct {
	field, op string
	values    []string // one for comparisons, several for IN, two for BETWEEN
	like      *regexp.Regexp
}

func (c and) eval(row map[string]string) bool { return c.l.eval(row) && c.r.eval(row) }
func (c or) eval(row map[string]string) bool  { return c.l.eval(row) || c.r.eval(row) }
func (c not) eval(row map[string]string) bool { return !c.c.eval(row) }

func (c compare) eval(row map[string]string) bool {
	v := row[c.field]
	switch c.op {
	case "=", "EQ":
		return v == c.values[0]
	case "<>", "NE":
		return v != c.values[0]
	case ">", "GT":
		return compareValues(v, c.values[0]) > 0
	case "<", "LT":
		return compareValues(v, c.values[0]) < 0
	case ">=", "GE":
		return compareValues(v, c.values[0]) >= 0
	case "<=", "LE":
		return compareValues(v, c.values[0]) <= 0
	case "LIKE":
		return c.like.MatchString(v)
	case "NOT LIKE":
		return !c.like.MatchString(v)
	case "IN":
		for _, x := range c.values {
			if v == x {
				return true
			}
		}
		return false
	case "NOT IN":
		for _, x := range c.values {
			if v == x {
				return false
			}
		}
		return true
	case "BETWEEN":
		return compareValues(v, c.values[0]) >= 0 && compareValues(v, c.values[1]) <= 0
	}
	return false
}

// compareValues compares numerically when both sides are numbers (amounts, quantities),
// otherwise as character strings (SAP keys and dates compare as characters).
func compareValues(a, b string) int {
	var fa, fb float64
	if _, err := fmt.Sscanf(a, "%g", &fa); err == nil && isNumber(a) && isNumber(b) {
		fmt.Sscanf(b, "%g", &fb)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	dot := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot:
			dot = true
		case c == '-' && i == 0:
		default:
			return false
		}
	}
	return true
}

// token is a lexical token of a WHERE clause.
type token struct {
	kind string // ident, string, op, lparen, rparen, comma, number
	text string
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' { // '' is an escaped quote
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string literal")
			}
			out = append(out, token{"string", b.String()})
			i = j + 1
		case c == '(':
			out = append(out, token{"lparen", "("})
			i++
		case c == ')':
			out = append(out, token{"rparen", ")"})
			i++
		case c == ',':
			out = append(out, token{"comma", ","})
			i++
		case c == '=':
			out = append(out, token{"op", "="})
			i++
		case c == '<' || c == '>':
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				out = append(out, token{"op", s[i : i+2]})
				i += 2
			} else {
				out = append(out, token{"op", string(c)})
				i++
			}
		case isIdentByte(c) || c == '-':
			j := i
			for j < len(s) && (isIdentByte(s[j]) || s[j] == '.' || (j == i && s[j] == '-')) {
				j++
			}
			word := s[i:j]
			if isNumber(word) {
				out = append(out, token{"number", word})
			} else {
				out = append(out, token{"ident", strings.ToUpper(word)})
			}
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return out, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '/' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}

type whereParser struct {
	toks   []token
	pos    int
	fields map[string]bool
}

// parseWhere parses the WHERE clause; fields are the table's fields.
func parseWhere(s string, fields map[string]bool) (cond, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := &whereParser{toks: toks, fields: fields}
	c, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos].text)
	}
	return c, nil
}

func (p *whereParser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *whereParser) keyword(w string) bool {
	if t := p.peek(); t.kind == "ident" && t.text == w {
		p.pos++
		return true
	}
	return false
}

func (p *whereParser) or() (cond, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = or{l, r}
	}
	return l, nil
}

func (p *whereParser) and() (cond, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = and{l, r}
	}
	return l, nil
}

func (p *whereParser) unary() (cond, error) {
	if p.keyword("NOT") {
		c, err := p.unary()
		if err != nil {
			return nil, err
		}
		return not{c}, nil
	}
	if p.peek().kind == "lparen" {
		p.pos++
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek().kind != "rparen" {
			return nil, fmt.Errorf("missing )")
		}
		p.pos++
		return c, nil
	}
	return p.comparison()
}

func (p *whereParser) value() (string, error) {
	t := p.peek()
	if t.kind == "string" || t.kind == "number" {
		p.pos++
		return t.text, nil
	}
	if t.kind == "" {
		return "", fmt.Errorf("a value is missing at the end")
	}
	return "", fmt.Errorf("expected a value in quotes, got %q", t.text)
}

func (p *whereParser) comparison() (cond, error) {
	t := p.peek()
	if t.kind != "ident" {
		if t.kind == "" {
			return nil, fmt.Errorf("the condition ends too early")
		}
		return nil, fmt.Errorf("expected a field name, got %q", t.text)
	}
	if !p.fields[t.text] {
		return nil, fmt.Errorf("unknown field %s", t.text)
	}
	p.pos++
	c := compare{field: t.text}
	op := p.peek()
	switch {
	case op.kind == "op":
		p.pos++
		c.op = op.text
	case op.kind == "ident" && (op.text == "EQ" || op.text == "NE" || op.text == "GT" || op.text == "LT" || op.text == "GE" || op.text == "LE" || op.text == "LIKE" || op.text == "IN" || op.text == "BETWEEN"):
		p.pos++
		c.op = op.text
	case op.kind == "ident" && op.text == "NOT":
		p.pos++
		switch {
		case p.keyword("LIKE"):
			c.op = "NOT LIKE"
		case p.keyword("IN"):
			c.op = "NOT IN"
		default:
			return nil, fmt.Errorf("expected LIKE or IN after NOT")
		}
	default:
		return nil, fmt.Errorf("expected an operator after %s", t.text)
	}
	switch c.op {
	case "IN", "NOT IN":
		if p.peek().kind != "lparen" {
			return nil, fmt.Errorf("IN needs a list in parentheses")
		}
		p.pos++
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			c.values = append(c.values, v)
			if p.peek().kind == "comma" {
				p.pos++
				continue
			}
			break
		}
		if p.peek().kind != "rparen" {
			return nil, fmt.Errorf("missing ) after the IN list")
		}
		p.pos++
	case "BETWEEN":
		lo, err := p.value()
		if err != nil {
			return nil, err
		}
		if !p.keyword("AND") {
			return nil, fmt.Errorf("BETWEEN needs AND")
		}
		hi, err := p.value()
		if err != nil {
			return nil, err
		}
		c.values = []string{lo, hi}
	default:
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		c.values = []string{v}
		if c.op == "LIKE" || c.op == "NOT LIKE" {
			c.like = likePattern(v)
		}
	}
	return c, nil
}

// likePattern turns an ABAP LIKE pattern (% any, _ one character) into a regexp.
func likePattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
