package soaprfc

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sapagent/sapagent/internal/sap"
)

// OptionLineLength is the width of RFC_READ_TABLE's OPTIONS-TEXT (RFC_DB_OPT, CHAR 72).
const OptionLineLength = 72

// SplitOptions cuts a WHERE condition into OPTIONS lines of at most 72 characters. Cuts fall
// only on a blank outside a quoted literal (” inside a literal is an escaped quote), and every
// cut keeps the blank at the start of the next line, so the lines joined without separator are
// the input: ABAP's dynamic WHERE treats a line end as a token boundary, never a literal's
// continuation. A literal or word longer than 72 characters, or an unterminated literal, is an
// OPTION_NOT_VALID error.
func SplitOptions(where string) ([]string, error) {
	if !utf8.ValidString(where) {
		return nil, optionErr("WHERE condition is not valid UTF-8")
	}
	r := []rune(where)
	if strings.TrimSpace(where) == "" {
		return nil, nil
	}
	// cut[i]: a line may end before rune i (a blank outside a literal).
	cut := make([]bool, len(r)+1)
	inLit := false
	for i := 0; i < len(r); i++ {
		switch {
		case r[i] == '\'' && inLit && i+1 < len(r) && r[i+1] == '\'':
			i++ // escaped quote inside a literal
		case r[i] == '\'':
			inLit = !inLit
		case !inLit && (r[i] == ' ' || r[i] == '\t'):
			cut[i] = true
		}
	}
	if inLit {
		return nil, optionErr("WHERE condition has an unterminated literal")
	}
	var lines []string
	start := 0
	for len(r)-start > OptionLineLength {
		end := -1
		for p := start + OptionLineLength; p > start; p-- {
			if cut[p] {
				end = p
				break
			}
		}
		if end < 0 {
			return nil, optionErr(fmt.Sprintf("WHERE condition has a literal or word longer than %d characters near %q", OptionLineLength, string(r[start:min(len(r), start+20)])))
		}
		lines = append(lines, string(r[start:end]))
		start = end
	}
	return append(lines, string(r[start:])), nil
}

func optionErr(msg string) *Error {
	return newErr(sap.ErrInvalidWhereOptions, 422, "OPTION_NOT_VALID", msg)
}

// QuoteLiteral writes s as an ABAP character literal (” escapes a quote).
func QuoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// AlphaInput applies the ALPHA conversion exit's input direction: a purely numeric value is
// right-aligned with leading zeros to length; anything else stays as typed (left-aligned).
func AlphaInput(v string, length int) string {
	t := strings.TrimSpace(v)
	if t == "" || length <= 0 {
		return t
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return t
		}
	}
	if len(t) >= length {
		return t
	}
	return strings.Repeat("0", length-len(t)) + t
}
