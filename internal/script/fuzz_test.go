package script

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		"print(1)",
		"while True:\n    pass",
		"r = sap_read_table(table=\"A\", row_count=2)\nresult = r[\"rows\"]",
		"result = [1, {\"a\": None}, (2.5, True)]",
		"def f(:",
		"sap_write(\"x\")",
		"load(\"x\", \"y\")",
		"def f(n):\n    return f(n)\nf(1)",
		"for i in range(100):\n    echo(i=i)",
		"print(\"x\" * 100000)",
		strings.Repeat("[", 200),
	} {
		f.Add(seed)
	}
	names := []string{"sap_read_table", "sap_write", "echo"}
	limits := Limits{MaxSteps: 100_000, Timeout: 2 * time.Second, MaxOutput: 4096, MaxCalls: 5}
	f.Fuzz(func(t *testing.T, code string) {
		refs, refErr := Referenced(code, names)
		fs := &fakeSAP{}
		start := time.Now()
		res, err := Run(context.Background(), code, testHelpers, fs.call, limits)
		if d := time.Since(start); d > limits.Timeout+3*time.Second {
			t.Fatalf("run took %s", d)
		}
		if len(res.Output) > limits.MaxOutput {
			t.Fatalf("output of %d bytes exceeds the limit", len(res.Output))
		}
		if len(res.Calls) > limits.MaxCalls {
			t.Fatalf("%d calls exceed the limit", len(res.Calls))
		}
		if refErr != nil && err == nil {
			t.Fatalf("Referenced failed (%v) but Run succeeded", refErr)
		}
		// Soundness of approval: every helper the script actually called was found statically.
		for _, c := range res.Calls {
			if !slices.Contains(refs, c.Helper) {
				t.Fatalf("helper %s called but Referenced returned %v", c.Helper, refs)
			}
		}
		if err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}
