package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testHelpers = []Helper{
	{
		Name:              "sap_read_table",
		Description:       "Read rows of an SAP table.",
		ReturnDescription: `{"rows": [dict], "fields": [str], "table": str}`,
		Parameters: `{"type":"object","required":["table"],"properties":{
			"table":{"type":"string","description":"table name, e.g. KNA1"},
			"where":{"type":"string"},
			"row_count":{"type":"integer","default":10},
			"fields":{"type":"array","items":{"type":"string"}}}}`,
	},
	{
		Name:              "sap_write",
		Description:       "Write a value.",
		ReturnDescription: `{"ok": bool}`,
		Writes:            true,
		Parameters:        `{"type":"object","required":["value"],"properties":{"value":{"type":"string"},"mode":{"enum":["insert","update"]}}}`,
	},
	{
		Name:              "echo",
		Description:       "Returns its arguments.",
		ReturnDescription: `{"args": dict}`,
		Parameters:        `{"type":"object"}`, // no properties: any keyword is accepted
	},
}

// fakeSAP answers helper calls like a tiny SAP system and counts writes.
type fakeSAP struct {
	mu     sync.Mutex
	writes int
	block  bool // sap_read_table waits for its context to end
	result any  // echo() without arguments returns this when set
}

func (f *fakeSAP) call(ctx context.Context, _ int, helper string, args map[string]any) (any, error) {
	switch helper {
	case "sap_read_table":
		if f.block {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if args["table"] == "BKPF" {
			return nil, errors.New("SAP authorization failed: no authorization for table BKPF")
		}
		if args["table"] == "PANIC" {
			panic("boom")
		}
		n, _ := args["row_count"].(int64)
		n = min(max(n, 0), 50)
		rows := []any{}
		for i := range n {
			rows = append(rows, map[string]any{"KUNNR": fmt.Sprintf("%010d", 10000+i), "LAND1": []string{"DE", "FR"}[i%2], "SALES": json.Number("12.5")})
		}
		return map[string]any{"rows": rows, "fields": []any{"KUNNR", "LAND1", "SALES"}, "table": args["table"]}, nil
	case "sap_write":
		f.mu.Lock()
		f.writes++
		f.mu.Unlock()
		return map[string]any{"ok": true}, nil
	case "echo":
		if f.result != nil && len(args) == 0 {
			return f.result, nil
		}
		return map[string]any{"args": args}, nil
	}
	return nil, errors.New("unknown helper")
}

func TestHelpersWithKeywordArgumentsAndResults(t *testing.T) {
	f := &fakeSAP{}
	res, err := Run(context.Background(), `
r = sap_read_table(table="KNA1", row_count=4, where="LAND1 <> 'US'", fields=("KUNNR", "LAND1"))
by_country = {}
total = 0.0
for row in r["rows"]:
    by_country[row["LAND1"]] = by_country.get(row["LAND1"], 0) + 1
    total += row["SALES"]
print("rows:", len(r["rows"]), "fields:", r["fields"])
print(json.encode(by_country))
decoded = json.decode('{"a": [1, 2.5, null, true]}')
result = {"by_country": by_country, "first": r["rows"][0]["KUNNR"], "total": total,
          "decoded": decoded, "floor_pi": math.floor(math.pi), "uniq": sorted(set([3, 1, 3]))}
`, testHelpers, f.call, Limits{})
	require.NoError(t, err)
	assert.Equal(t, "rows: 4 fields: [\"KUNNR\", \"LAND1\", \"SALES\"]\n{\"DE\":2,\"FR\":2}\n", res.Output)
	assert.Equal(t, map[string]any{
		"by_country": map[string]any{"DE": int64(2), "FR": int64(2)},
		"first":      "0000010000",
		"total":      50.0,
		"decoded":    map[string]any{"a": []any{int64(1), 2.5, nil, true}},
		"floor_pi":   int64(3),
		"uniq":       []any{int64(1), int64(3)},
	}, res.Value)
	require.Len(t, res.Calls, 1)
	c := res.Calls[0]
	assert.Equal(t, "sap_read_table", c.Helper)
	assert.Equal(t, map[string]any{"table": "KNA1", "row_count": int64(4), "where": "LAND1 <> 'US'", "fields": []any{"KUNNR", "LAND1"}}, c.Args)
	assert.Empty(t, c.Err)
	assert.GreaterOrEqual(t, c.Duration, time.Duration(0))
}

func TestValueConversion(t *testing.T) {
	f := &fakeSAP{result: map[string]any{
		"z": int64(1), "a": 2.0, "m": 2.5, "big": json.Number("123456789012345678901234567890"),
		"num": json.Number("7"), "frac": json.Number("0.25"), "nested": []any{map[string]any{"b": nil, "a": false}},
		"typed": struct {
			N int    `json:"n"`
			S string `json:"s"`
		}{3, "x"},
	}}
	res, err := Run(context.Background(), `
r = echo()
print(list(r.keys()))
print(type(r["a"]), type(r["m"]), type(r["num"]), type(r["frac"]), r["big"] + 1)
print(list(r["nested"][0].keys()), r["typed"]["n"] * 2)
e = echo(t=(1, "x"), d={"k": [None, True, 1.5]}, s=set([2]), big=1 << 70)
result = e["args"]
`, testHelpers, f.call, Limits{})
	require.NoError(t, err)
	assert.Equal(t, `["a", "big", "frac", "m", "nested", "num", "typed", "z"]
int float int float 123456789012345678901234567891
["a", "b"] 6
`, res.Output)
	assert.Equal(t, map[string]any{
		"t": []any{int64(1), "x"}, "d": map[string]any{"k": []any{nil, true, 1.5}}, "s": []any{int64(2)},
		"big": json.Number("1180591620717411303424"),
	}, res.Value)
}

func TestNoResultMeansNilValue(t *testing.T) {
	res, err := Run(context.Background(), "x = 1\nprint(x)", testHelpers, nil, Limits{})
	require.NoError(t, err)
	assert.Nil(t, res.Value)
	assert.Equal(t, "1\n", res.Output)
	assert.Empty(t, res.Calls)
}

func TestHostileScriptsEndWithAClearErrorAndNoEffect(t *testing.T) {
	small := Limits{MaxSteps: 100_000}
	for _, tc := range []struct {
		name, code string
		limits     Limits
		want       []string
	}{
		{"infinite loop", "while True:\n    pass", small, []string{"script exceeded 100000 execution steps (infinite loop?)", "line"}},
		{"huge loop", "x = 0\nfor i in range(1000000000):\n    x += i\nsap_write(value=str(x))", small, []string{"exceeded 100000 execution steps", "at line"}},
		{"huge loop, default limits", "x = 0\nfor i in range(1000000000):\n    x += i\nsap_write(value=str(x))", Limits{}, []string{"exceeded 5000000 execution steps"}},
		{"megabytes of output", "for i in range(1000000):\n    print(\"x\" * 1000)\nsap_write(value=\"done\")", Limits{}, []string{"script output exceeded 65536 bytes", "at line 2"}},
		{"one huge print", "print(\"x\" * 10000000)", Limits{}, []string{"script output exceeded 65536 bytes"}},
		{"huge result", "result = [\"x\" * 1000] * 1000", Limits{}, []string{"`result` is larger than", "65536-byte output limit"}},
		{"exponential result", "a = [1]\nfor i in range(60):\n    a = [a, a]\nresult = a", Limits{}, []string{"`result`"}},
		{"direct recursion", "def f(n):\n    return f(n + 1)\nf(0)\nsap_write(value=\"x\")", Limits{}, []string{"recursion is not allowed", "function f called recursively", "at line 2, called from line 3"}},
		{"deep recursion", "def f(n):\n    if n == 0:\n        return 0\n    return 1 + f(n - 1)\nf(100000)", Limits{}, []string{"recursion is not allowed"}},
		{"mutual recursion", "def a(n):\n    return b(n)\ndef b(n):\n    return a(n)\na(1)", Limits{}, []string{"recursion is not allowed"}},
		{"load", "load(\"x\", \"y\")\nsap_write(value=\"x\")", Limits{}, []string{"load() is not available"}},
		{"open", "open(\"/etc/passwd\").read()", Limits{}, []string{"undefined: open", "line 1:1", "no files, network"}},
		{"import", "import os\nos.system(\"rm -rf /\")", Limits{}, []string{"syntax error at line 1:1", "there is no import"}},
		{"from import", "from os import system", Limits{}, []string{"syntax error at line 1:1", "there is no import"}},
		{"exec", "exec(\"sap_write(value='x')\")", Limits{}, []string{"undefined: exec"}},
		{"eval", "eval(\"1 + 1\")", Limits{}, []string{"undefined: eval"}},
		{"dunder import", "__import__(\"os\").system(\"id\")", Limits{}, []string{"undefined: __import__"}},
		{"os", "os.system(\"id\")", Limits{}, []string{"undefined: os"}},
		{"getattr on a module", "getattr(json, \"__dict__\")", Limits{}, []string{"script failed at line 1", "no .__dict__ field or method"}},
		{"syntax error", "x = 1\ndef (:", Limits{}, []string{"syntax error at line 2:6", "  2 | def (:"}},
		{"unterminated string", "x = \"abc", Limits{}, []string{"syntax error at line 1"}},
		{"try/except", "try:\n    x = 1\nexcept:\n    pass", Limits{}, []string{"syntax error at line 1:1", "no try/except"}},
		{"f-string", "x = 1\nprint(f\"{x}\")", Limits{}, []string{"syntax error at line 2", "f-strings are not supported"}},
		{"positional helper call", "sap_write(\"x\")", Limits{}, []string{"sap_write takes keyword arguments only", "sap_write(value=..., mode=...)", "at line 1"}},
		{"unknown keyword", "sap_read_table(table=\"A\", rows=1)\nsap_write(value=\"x\")", Limits{}, []string{`sap_read_table has no parameter "rows"; its parameters are: table, where, row_count, fields`}},
		{"duplicate keyword", "sap_write(value=\"a\", **{\"value\": \"b\"})", Limits{}, []string{"value given twice"}},
		{"too many calls", "for i in range(10):\n    sap_read_table(table=\"A\")\nsap_write(value=\"x\")", Limits{MaxCalls: 3}, []string{"script exceeded the limit of 3 helper calls", "at line 2"}},
		{"helper error", "sap_read_table(table=\"BKPF\")\nsap_write(value=\"x\")", Limits{}, []string{"script failed at line 1: helper sap_read_table failed: SAP authorization failed"}},
		{"helper panic", "sap_read_table(table=\"PANIC\")\nsap_write(value=\"x\")", Limits{}, []string{"helper sap_read_table failed: internal error: boom"}},
		{"busy loop timeout", "x = 0\nwhile True:\n    x += 1", Limits{Timeout: 50 * time.Millisecond, MaxSteps: 1 << 62}, []string{"script timed out after 50ms", "at line"}},
		{"non-string dict key", "sap_write(value={1: 2})", Limits{}, []string{"dict keys must be strings"}},
		{"nan argument", "sap_write(value=float(\"nan\"))", Limits{}, []string{"cannot be represented in JSON"}},
		{"function argument", "sap_write(value=len)", Limits{}, []string{"builtin_function_or_method cannot leave the script"}},
		{"huge argument", "sap_write(value=\"x\" * 2000000)", Limits{}, []string{"arguments are larger than 1048576 bytes"}},
		{"cyclic argument", "l = []\nl.append(l)\nsap_write(value=l)", Limits{}, []string{"nested more than 64 levels"}},
		{"function result", "result = lambda: 1", Limits{}, []string{"`result` cannot be returned", "function cannot leave the script"}},
		{"runtime error", "x = {}\nsap_write(value=x[\"missing\"])", Limits{}, []string{"script failed at line 2", "not in dict", "  2 | sap_write(value=x[\"missing\"])"}},
		{"string iteration", "for c in \"abc\":\n    pass", Limits{}, []string{"s.elems()"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSAP{}
			start := time.Now()
			res, err := Run(context.Background(), tc.code, testHelpers, f.call, tc.limits)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Zero(t, f.writes, "no write happened")
			assert.Nil(t, res.Value)
			assert.LessOrEqual(t, len(res.Output), DefaultMaxOutput)
			assert.Less(t, time.Since(start), 10*time.Second)
		})
	}
}

func TestMaxCallsStopsBeforeTheExtraCall(t *testing.T) {
	f := &fakeSAP{}
	res, err := Run(context.Background(), "for i in range(10):\n    sap_write(value=str(i))", testHelpers, f.call, Limits{MaxCalls: 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "limit of 3 helper calls")
	assert.Equal(t, 3, f.writes)
	assert.Len(t, res.Calls, 3)
}

func TestErrorsNameTheScriptLine(t *testing.T) {
	_, err := Run(context.Background(), "x = 1\ny = 0\nz = x / y\n", nil, nil, Limits{})
	require.Error(t, err)
	assert.Equal(t, "script failed at line 3: floating-point division by zero\n  3 | z = x / y", err.Error())

	_, err = Run(context.Background(), "def f(d):\n    return d[\"k\"]\n\nprint(f({}))\n", nil, nil, Limits{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script failed at line 2, called from line 4: key \"k\" not in dict")
	assert.Contains(t, err.Error(), "  2 |     return d[\"k\"]")
}

func TestContextCancellationStopsTheScript(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	_, err := Run(ctx, "while True:\n    pass", nil, nil, Limits{MaxSteps: 1 << 62})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script cancelled after")

	// Already cancelled: nothing runs.
	f := &fakeSAP{}
	res, err := Run(ctx, "sap_write(value=\"x\")", testHelpers, f.call, Limits{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script not run")
	assert.Zero(t, f.writes)
	assert.Empty(t, res.Calls)

	// The caller's deadline.
	dctx, dcancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
	defer dcancel()
	_, err = Run(dctx, "while True:\n    pass", nil, nil, Limits{MaxSteps: 1 << 62})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script timed out after")
}

func TestTimeoutWhileAHelperIsBlocked(t *testing.T) {
	f := &fakeSAP{block: true}
	start := time.Now()
	res, err := Run(context.Background(), "print(\"start\")\nsap_read_table(table=\"A\")\nsap_write(value=\"x\")", testHelpers, f.call, Limits{Timeout: 50 * time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script timed out after 50ms at line 2")
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, "start\n", res.Output)
	require.Len(t, res.Calls, 1)
	assert.Contains(t, res.Calls[0].Err, "deadline exceeded")
	assert.Zero(t, f.writes)
}

func TestOutputAndCallsSurviveAFailure(t *testing.T) {
	f := &fakeSAP{}
	res, err := Run(context.Background(), "print(\"before\")\nsap_read_table(table=\"KNA1\")\nsap_read_table(table=\"BKPF\")\nprint(\"after\")", testHelpers, f.call, Limits{})
	require.Error(t, err)
	assert.Equal(t, "script failed at line 3: helper sap_read_table failed: SAP authorization failed: no authorization for table BKPF\n"+
		"  3 | sap_read_table(table=\"BKPF\")", err.Error())
	assert.Equal(t, "before\n", res.Output)
	require.Len(t, res.Calls, 2)
	assert.Empty(t, res.Calls[0].Err)
	assert.Contains(t, res.Calls[1].Err, "no authorization")
}

func TestMemoryBombIsStopped(t *testing.T) {
	start := time.Now()
	_, err := Run(context.Background(), "l = []\nfor i in range(100000000):\n    l.append(\"x\" * 10000 + str(i))", nil, nil, Limits{MaxSteps: 1 << 62, Timeout: 20 * time.Second, MaxMemory: 64 << 20})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script used too much memory (more than 64 MiB)")
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestInvalidHelpers(t *testing.T) {
	for _, h := range []Helper{{Name: "sap-read"}, {Name: "def"}, {Name: "json"}, {Name: "len"}, {Name: ""}} {
		_, err := Run(context.Background(), "x = 1", []Helper{h}, nil, Limits{})
		assert.Error(t, err, h.Name)
	}
	_, err := Run(context.Background(), "x = 1", []Helper{{Name: "a"}, {Name: "a"}}, nil, Limits{})
	assert.ErrorContains(t, err, "defined twice")
}

func TestConcurrentRunsDoNotLeakGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := &fakeSAP{}
			code := fmt.Sprintf("r = sap_read_table(table=\"T%d\", row_count=%d)\nresult = len(r[\"rows\"])\nprint(r[\"table\"])", i, i)
			if i%4 == 3 {
				code = "while True:\n    pass"
			}
			res, err := Run(context.Background(), code, testHelpers, f.call, Limits{MaxSteps: 200_000})
			if i%4 == 3 {
				assert.ErrorContains(t, err, "execution steps")
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, int64(i), res.Value)
			assert.Equal(t, fmt.Sprintf("T%d\n", i), res.Output)
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
}

func TestReferencedFindsHelpersWithoutRunningThem(t *testing.T) {
	names := []string{"sap_read_table", "sap_write", "echo"}
	for _, tc := range []struct {
		code string
		want []string
	}{
		{`sap_read_table(table="A")`, []string{"sap_read_table"}},
		{"def f():\n    return sap_write(value=\"x\")", []string{"sap_write"}},
		{"w = sap_write\nr = sap_read_table\nw(value=\"x\")", []string{"sap_read_table", "sap_write"}},
		{"[sap_write(value=str(i)) for i in range(2)]", []string{"sap_write"}},
		{"{k: v for k, v in {\"a\": echo}.items()}", []string{"echo"}},
		{"g = lambda: sap_write\nif True:\n    x = [g]", []string{"sap_write"}},
		{"x = {\"k\": sap_read_table}\nx[\"k\"](table=\"A\")", []string{"sap_read_table"}},
		{"# sap_write(value=1)\nprint(\"sap_write\")\nprint('''sap_write''')", []string{}},
		{"x = 1", []string{}},
		{"sap_write_all = 1\nprint(sap_write_all)", []string{}},
		{"echo(); echo(); sap_read_table(table=\"A\")", []string{"echo", "sap_read_table"}},
	} {
		got, err := Referenced(tc.code, names)
		require.NoError(t, err, tc.code)
		assert.Equal(t, tc.want, got, tc.code)
	}

	_, err := Referenced("x = 1\ndef (", names)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "syntax error at line 2:6")

	// Deterministic.
	code := "a = sap_write\nb = echo\nc = sap_read_table\nd = sap_write"
	first, err := Referenced(code, names)
	require.NoError(t, err)
	for range 20 {
		again, err := Referenced(code, names)
		require.NoError(t, err)
		require.Equal(t, first, again)
	}
}

func TestNeedsApproval(t *testing.T) {
	for code, want := range map[string]bool{
		`r = sap_read_table(table="A")`:                  false,
		"print(\"sap_write\") # sap_write":               false,
		"f = sap_write":                                  true,
		"def g():\n    sap_write(value=\"x\")":           true,
		"[sap_write(value=x) for x in [\"a\"] if False]": true,
	} {
		got, err := NeedsApproval(code, testHelpers)
		require.NoError(t, err, code)
		assert.Equal(t, want, got, code)
	}
	_, err := NeedsApproval("sap_write(", testHelpers)
	assert.Error(t, err)
}

func TestDocumentation(t *testing.T) {
	doc := Documentation(testHelpers, Limits{})
	for _, want := range []string{
		`sap_read_table(table: str, where: str = None, row_count: int = 10, fields: list[str] = None) -> {"rows": [dict], "fields": [str], "table": str}`,
		"    Read rows of an SAP table.",
		"    table (required): table name, e.g. KNA1",
		`sap_write(value: str, mode: "insert" | "update" = None) -> {"ok": bool}`,
		"runs only after the user approves it",
		`echo(**kwargs) -> {"args": dict}`,
		"keyword arguments only",
		"no import or load()",
		"`result`",
		"print()",
		"5000000 execution steps, 1m0s wall-clock time, 65536 bytes of printed output plus result, 200 helper calls",
	} {
		assert.Contains(t, doc, want)
	}
	assert.Equal(t, 1, strings.Count(doc, "runs only after the user approves it"))

	long := Helper{Name: "sap_describe", ReturnDescription: "A dict describing the table:\n" + strings.Repeat("fields and their types, ", 10), Parameters: `{"type":"object","properties":{"table":{"type":["string","null"]}},"additionalProperties":false}`}
	doc = Documentation([]Helper{long}, Limits{})
	assert.Contains(t, doc, "sap_describe(table: str | None = None)\n")
	assert.Contains(t, doc, "    Returns A dict describing the table: fields and their types,")
	assert.Contains(t, Documentation(nil, Limits{MaxSteps: 10, Timeout: time.Second, MaxOutput: 100, MaxCalls: 2}), "10 execution steps, 1s wall-clock time, 100 bytes")
}
