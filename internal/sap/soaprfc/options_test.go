package soaprfc

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/sapagent/sapagent/internal/sap"
)

// literals returns the quoted literals of a WHERE text; ok is false if one is unterminated.
func literals(s string) ([]string, bool) {
	var out []string
	r := []rune(s)
	for i := 0; i < len(r); i++ {
		if r[i] != '\'' {
			continue
		}
		j := i + 1
		for ; j < len(r); j++ {
			if r[j] == '\'' {
				if j+1 < len(r) && r[j+1] == '\'' {
					j++
					continue
				}
				break
			}
		}
		if j >= len(r) {
			return out, false
		}
		out = append(out, string(r[i:j+1]))
		i = j
	}
	return out, true
}

func randomWhere(rng *rand.Rand) string {
	fields := []string{"MANDT", "KUNNR", "NAME1", "LAND1", "ERDAT", "ZZ_LONG_CUSTOMER_FIELD_NAME"}
	ops := []string{"=", "<>", "LIKE", ">=", "IN"}
	alphabet := []rune("abcXYZ 09%_-''äöü€ ")
	var conds []string
	for n := 1 + rng.Intn(12); n > 0; n-- {
		var lit strings.Builder
		for k := rng.Intn(40); k > 0; k-- {
			c := alphabet[rng.Intn(len(alphabet))]
			if c == '\'' {
				lit.WriteString("''") // an escaped quote inside the literal
				continue
			}
			lit.WriteRune(c)
		}
		sp := strings.Repeat(" ", 1+rng.Intn(2))
		conds = append(conds, fields[rng.Intn(len(fields))]+sp+ops[rng.Intn(len(ops))]+sp+"'"+lit.String()+"'")
	}
	joins := []string{" AND ", " OR ", "  AND  "}
	var b strings.Builder
	for i, c := range conds {
		if i > 0 {
			b.WriteString(joins[rng.Intn(len(joins))])
		}
		b.WriteString(c)
	}
	return b.String()
}

func TestSplitOptionsProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	for i := 0; i < 5000; i++ {
		where := randomWhere(rng)
		lines, err := SplitOptions(where)
		if err != nil {
			t.Fatalf("%q: %v", where, err)
		}
		if got := strings.Join(lines, ""); got != where {
			t.Fatalf("joined lines differ:\n%q\n%q", got, where)
		}
		whole, _ := literals(where)
		var parts []string
		for _, l := range lines {
			if n := len([]rune(l)); n > OptionLineLength {
				t.Fatalf("line of %d characters: %q", n, l)
			}
			lits, ok := literals(l)
			if !ok {
				t.Fatalf("literal broken across lines in %q (line %q)", where, l)
			}
			parts = append(parts, lits...)
		}
		if strings.Join(parts, "|") != strings.Join(whole, "|") {
			t.Fatalf("literals changed: %v vs %v", parts, whole)
		}
	}
}

func TestSplitOptionsEdges(t *testing.T) {
	if l, err := SplitOptions("  "); err != nil || l != nil {
		t.Errorf("blank: %v %v", l, err)
	}
	l, err := SplitOptions("NAME1 = 'O''Brien & Sons'")
	if err != nil || len(l) != 1 {
		t.Errorf("short: %v %v", l, err)
	}
	for _, bad := range []string{
		"NAME1 = 'unterminated",
		"NAME1 = '" + strings.Repeat("x", 80) + "'",
		"NAME1 = 'it''s",
	} {
		_, err := SplitOptions(bad)
		var e *Error
		if !errors.As(err, &e) || e.Code != sap.ErrInvalidWhereOptions {
			t.Errorf("%q: got %v, want OPTION_NOT_VALID", bad, err)
		}
	}
}

func TestAlphaInput(t *testing.T) {
	for in, want := range map[string]string{
		"4711":        "0000004711",
		" 42 ":        "0000000042",
		"0000004711":  "0000004711",
		"CUST-01":     "CUST-01",
		"12A":         "12A",
		"":            "",
		"12345678901": "12345678901",
	} {
		if got := AlphaInput(in, 10); got != want {
			t.Errorf("AlphaInput(%q) = %q, want %q", in, got, want)
		}
	}
}
