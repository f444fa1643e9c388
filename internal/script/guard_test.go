package script

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The attacks of security issue 11: each used to take gigabytes, seconds of CPU or the whole
// Go stack in one step. Now each stops at once with an error naming the line.
func TestOneStepCannotExhaustMemoryStackOrCPU(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		want       []string
	}{
		{"deep json.decode", `x = json.decode("[" * 2000000 + "]" * 2000000)`, []string{"script failed at line 1", "json.decode: the JSON is nested more than 1000 levels deep"}},
		{"deep json.indent", `x = json.indent("{\"a\":" * 5000 + "1" + "}" * 5000)`, []string{"json.indent: the JSON is nested more than 1000"}},
		{"deep json.encode", "x = []\nfor i in range(700000):\n    x = [x]\ny = json.encode(x)", []string{"at line 4", "json.encode: the value is nested more than 1000 levels deep"}},
		{"self-containing json.encode_indent", "x = []\nx.append(x)\ny = json.encode_indent(x)", []string{"json.encode_indent: the value is nested more than 1000 levels deep (or contains itself)"}},
		{"exponential json.encode", "a = [1]\nfor i in range(60):\n    a = [a, a]\ny = json.encode(a)", []string{"json.encode: the value has more than 16777216 elements"}},
		{"list repeat", "x = [0] * (1 << 28)", []string{"script failed at line 1", "a list of 268435456 elements, more than the sandbox's limit of 4194304"}},
		{"repeat, count first", "x = (1 << 28) * [0]", []string{"a list of 268435456 elements"}},
		{"tuple repeat", "x = (0, 1) * (1 << 27)", []string{"a list of 268435456 elements"}},
		{"string repeat", `s = "x" * (1 << 29)`, []string{"a string of 512 MiB, more than the sandbox's 64 MiB limit"}},
		{"string concatenation", "s = \"x\" * (1 << 25)\nt = s + s + s + s", []string{"at line 2", "a string of 96 MiB"}},
		{"string +=", "s = \"x\" * (1 << 20)\nfor i in range(100):\n    s += s", []string{"at line 3", "a string of 128 MiB"}},
		{"list += itself", "l = [0] * 1000\nfor i in range(100):\n    l += l", []string{"at line 3", "a list of 8192000 elements"}},
		{"list += range", "l = []\nl += range(1 << 30)", []string{"a list of 1073741824 elements"}},
		{"dict item +=", "d = {\"k\": \"x\" * (1 << 20)}\nfor i in range(100):\n    d[\"k\"] += d[\"k\"]", []string{"at line 3", "a string of 128 MiB"}},
		{"*=", "l = [0]\nfor i in range(100):\n    l *= 2", []string{"at line 3", "a list of 8388608 elements"}},
		{"big int product", "x = 3\nfor i in range(40):\n    x = x * x", []string{"at line 3", "more than the sandbox's 1048576-bit limit"}},
		{"big int *=", "x = 3\nfor i in range(40):\n    x *= x", []string{"at line 3", "1048576-bit limit"}},
		{"inside a function", "def f(s):\n    return s * (1 << 30)\nf(\"ab\")", []string{"at line 2, called from line 3", "a string of 2048 MiB"}},
		{"inside a comprehension", "x = [\"y\" * (1 << 30) for i in range(2)]", []string{"at line 1", "a string of 1024 MiB"}},
		{"in a default value", "def f(a = [0] * (1 << 30)):\n    return a", []string{"at line 1", "1073741824 elements"}},
		{"lambda", "f = lambda n: [n] * n\nf(1 << 25)", []string{"at line 1, called from line 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Run(context.Background(), tc.code, nil, nil, Limits{MaxSteps: 100_000_000, MaxMemory: 512 << 20})
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// The guards keep what + and * mean: in-place list +=, one evaluation of an index target,
// the library's own errors and their lines.
func TestGuardedOperatorsKeepStarlarkSemantics(t *testing.T) {
	res, err := Run(context.Background(), `
l = [1]
alias = l
l += [2]
l += (3,)
l += l
s = "ab"
s += "c"
s *= 2
t = (1,) * 3 + (2,)
n = 2 * 3 + 1 if False else 7 * 6
keys = []
def key():
    keys.append(1)
    return "a"
d = {"a": "x", "n": 1}
d[key()] += "y"
d["n"] += 4
d["n"] *= 2
m = [[1], [2]]
m[len(keys)] += [3]
big = 1 << 500
result = {"l": l, "alias": alias, "s": s, "t": t, "n": n, "keys": len(keys), "d": d, "m": m,
          "big": big * big > 0, "neg": -3 * 4, "float": 1.5 * 2, "rep": 3 * "ab", "empty": [] * 5}
`, nil, nil, Limits{})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"l": []any{int64(1), int64(2), int64(3), int64(1), int64(2), int64(3)}, "alias": []any{int64(1), int64(2), int64(3), int64(1), int64(2), int64(3)},
		"s": "abcabc", "t": []any{int64(1), int64(1), int64(1), int64(2)}, "n": int64(42), "keys": int64(1),
		"d": map[string]any{"a": "xy", "n": int64(10)}, "m": []any{[]any{int64(1)}, []any{int64(2), int64(3)}},
		"big": true, "neg": int64(-12), "float": 3.0, "rep": "ababab", "empty": []any{},
	}, res.Value)

	for code, want := range map[string]string{
		"x = 1\ny = \"a\" + x":                            "script failed at line 2: unknown binary op: string + int\n  2 | y = \"a\" + x",
		"x = {}\nx += 1":                                  "script failed at line 2: unknown binary op: dict + int",
		"d = {}\nd[\"k\"] += 1":                           "script failed at line 2: key \"k\" not in dict",
		"l = [1]\nfor x in l:\n    l += [2]":              "script failed at line 3: cannot apply += to list during iteration",
		"x = \"ab\" * (1 << 40)":                          "script failed at line 1: repeat count 1099511627776 too large",
		"a + b = 1":                                       "script rejected before running",
		"x = undefined_name * 2":                          "undefined: undefined_name",
		"def f():\n    total += 1\n    return total\nf()": "local variable total referenced before assignment",
	} {
		_, err := Run(context.Background(), code, nil, nil, Limits{})
		require.Error(t, err, code)
		assert.Contains(t, err.Error(), want, code)
	}
}

func TestHelpersGetTheOrdinalOfTheirCall(t *testing.T) {
	var got []int
	call := func(_ context.Context, n int, helper string, args map[string]any) (any, error) {
		got = append(got, n)
		return map[string]any{"n": n}, nil
	}
	res, err := Run(context.Background(), "result = [echo(i=i)[\"n\"] for i in range(4)]", testHelpers, call, Limits{})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, got)
	assert.Equal(t, []any{int64(0), int64(1), int64(2), int64(3)}, res.Value)
}
