package script

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// explain turns an error from Starlark into one the model can act on: what went wrong, the
// script line (with its text) and, for common Python habits Starlark lacks, what to do instead.
func (r *run) explain(err error) error {
	var se syntax.Error
	if errors.As(err, &se) {
		return syntaxError(se, r.lines)
	}
	var rl resolve.ErrorList
	if errors.As(err, &rl) {
		return resolveError(rl, r.lines)
	}

	var frames []syntax.Position // positions in the script, innermost first
	msg := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg = ee.Msg
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			if pos := ee.CallStack[i].Pos; pos.Filename() == filename && pos.Line > 0 {
				frames = append(frames, pos)
			}
		}
	}
	at, src := location(frames, r.lines)

	if reason := r.stopped(); reason != nil {
		var se *stopError
		if errors.As(reason, &se) {
			return errors.New(se.message(at) + src)
		}
		return fmt.Errorf("%v%s%s", reason, at, src)
	}
	if strings.Contains(msg, "called recursively") {
		return fmt.Errorf("recursion is not allowed in scripts (%s)%s; rewrite it as a loop%s", msg, at, src)
	}
	if strings.Contains(msg, "too many steps") { // defensive: OnMaxSteps normally records the reason
		return fmt.Errorf("script exceeded %d execution steps (infinite loop?)%s%s", r.limits.MaxSteps, at, src)
	}
	return fmt.Errorf("script failed%s: %s%s%s", at, msg, runtimeHint(msg), src)
}

// location renders " at line N[, called from line M]" and the quoted text of line N.
func location(frames []syntax.Position, lines []string) (at, src string) {
	if len(frames) == 0 {
		return "", ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, " at line %d", frames[0].Line)
	last := frames[0].Line
	for _, f := range frames[1:] {
		if f.Line != last { // a failed call into a function repeats the caller's line
			fmt.Fprintf(&b, ", called from line %d", f.Line)
		}
		last = f.Line
	}
	return b.String(), sourceLine(int(frames[0].Line), lines)
}

// sourceLine quotes line n of the script ("\n  n | text"), shortened if long.
func sourceLine(n int, lines []string) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	text := strings.TrimRight(lines[n-1], " \t\r")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	if r := []rune(text); len(r) > 160 {
		text = string(r[:160]) + "…"
	}
	return fmt.Sprintf("\n  %d | %s", n, text)
}

func syntaxError(se syntax.Error, lines []string) error {
	line := ""
	if int(se.Pos.Line) >= 1 && int(se.Pos.Line) <= len(lines) {
		line = lines[se.Pos.Line-1]
	}
	return fmt.Errorf("syntax error at line %d:%d: %s%s%s", se.Pos.Line, se.Pos.Col, se.Msg, syntaxHint(se.Msg, line), sourceLine(int(se.Pos.Line), lines))
}

func resolveError(errs resolve.ErrorList, lines []string) error {
	var b strings.Builder
	for i, e := range errs {
		if i == 5 {
			fmt.Fprintf(&b, "\n(and %d more)", len(errs)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "error at line %d:%d: %s%s%s", e.Pos.Line, e.Pos.Col, e.Msg, resolveHint(e.Msg), sourceLine(int(e.Pos.Line), lines))
	}
	return errors.New("script rejected before running: " + b.String())
}

var fstringRE = regexp.MustCompile(`(^|[^A-Za-z0-9_])[fF]["']`)

func syntaxHint(msg, line string) string {
	switch {
	case strings.Contains(msg, "got import") || strings.Contains(msg, "got from"):
		return " (there is no import: the helpers, json and math are already available)"
	case strings.Contains(msg, "got try") || strings.Contains(msg, "got except") || strings.Contains(msg, "got raise"):
		return " (Starlark has no exceptions: no try/except/raise; a failing helper stops the script, so check values with if instead)"
	case strings.Contains(msg, "got class"):
		return " (Starlark has no classes; use dicts and functions)"
	case strings.Contains(msg, "got with"), strings.Contains(msg, "got yield"), strings.Contains(msg, "got global"),
		strings.Contains(msg, "got nonlocal"), strings.Contains(msg, "got async"), strings.Contains(msg, "got await"),
		strings.Contains(msg, "got del"), strings.Contains(msg, "got assert"):
		return " (this Python statement does not exist in Starlark)"
	case fstringRE.MatchString(line):
		return ` (f-strings are not supported; use "%s" % value or "{}".format(value))`
	}
	return ""
}

var sandboxedNames = map[string]bool{
	"open": true, "exec": true, "eval": true, "compile": true, "__import__": true, "input": true,
	"globals": true, "locals": true, "vars": true, "os": true, "sys": true, "subprocess": true,
	"time": true, "random": true, "datetime": true, "requests": true, "socket": true, "re": true,
	"__builtins__": true, "breakpoint": true, "exit": true, "quit": true, "help": true,
}

func resolveHint(msg string) string {
	name, ok := strings.CutPrefix(msg, "undefined: ")
	switch {
	case ok && sandboxedNames[name]:
		return " (the sandbox has no files, network, clock, imports or dynamic code; only the helpers, json, math and the Starlark built-ins exist)"
	case ok:
		return " (only the helpers, json, math, the Starlark built-ins and names the script defines exist)"
	case strings.Contains(msg, "called recursively"):
		return " (recursion is not allowed; use a loop)"
	}
	return ""
}

func runtimeHint(msg string) string {
	switch {
	case strings.Contains(msg, "string value is not iterable") || strings.Contains(msg, "got string, want iterable"):
		return " (iterate over a string's characters with s.elems())"
	case strings.Contains(msg, "key") && strings.Contains(msg, "not in dict"):
		return " (use d.get(key) or `if key in d` to handle missing keys)"
	}
	return ""
}
