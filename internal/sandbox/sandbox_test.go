//go:build linux

package sandbox

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/script"
)

var testHelpers = []script.Helper{
	{Name: "echo", Parameters: `{"type":"object"}`},
	{Name: "sap_read_table", Parameters: `{"type":"object","required":["table"],"properties":{"table":{"type":"string"},"row_count":{"type":"integer"}}}`},
	{Name: "block", Parameters: `{"type":"object"}`},
}

// parentHelpers answers helper calls in the test process, as the worker does.
type parentHelpers struct {
	mu    sync.Mutex
	calls []string
	ns    []int
}

func (h *parentHelpers) call(ctx context.Context, n int, helper string, args map[string]any) (any, error) {
	h.mu.Lock()
	h.calls = append(h.calls, helper)
	h.ns = append(h.ns, n)
	h.mu.Unlock()
	switch helper {
	case "echo":
		return map[string]any{"args": args, "pid": os.Getpid()}, nil
	case "sap_read_table":
		if args["table"] == "BKPF" {
			return nil, errors.New("SAP authorization failed: no authorization for table BKPF")
		}
		n, _ := args["row_count"].(int64)
		rows := []any{}
		for i := range n {
			rows = append(rows, map[string]any{"KUNNR": fmt.Sprintf("%010d", i), "SALES": 12.5})
		}
		return map[string]any{"rows": rows, "table": args["table"]}, nil
	case "block":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, errors.New("unknown helper")
}

// raceEnabled is set in race builds (race_test.go).
var raceEnabled bool

func newPool(t *testing.T, o Options) *Pool {
	t.Helper()
	p, err := New(o)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// pids lists the pool's live sandbox processes.
func (p *Pool) pids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for pr := range p.procs {
		out = append(out, pr.cmd.Process.Pid)
	}
	return out
}

// waitPids waits until the pool has n sandboxes started.
func waitPids(t *testing.T, p *Pool, n int) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(p.pids()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	pids := p.pids()
	require.Len(t, pids, n)
	return pids
}

func TestScriptsRunInAnotherProcessAndHelpersInTheParent(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	pids := waitPids(t, p, 1)
	require.NotEqual(t, os.Getpid(), pids[0])
	h := &parentHelpers{}
	res, err := p.Run(context.Background(), `
r = sap_read_table(table="KNA1", row_count=3)
e = echo(n=1, f=2.5, big=1 << 70, s="x", l=[None, True], d={"k": "v"})
e2 = echo()
print(len(r["rows"]), r["rows"][0]["KUNNR"], r["rows"][0]["SALES"])
result = {"args": e["args"], "helper_pid": e["pid"]}
`, testHelpers, h.call, script.Limits{})
	require.NoError(t, err)
	assert.Equal(t, "3 0000000000 12.5\n", res.Output)
	assert.Equal(t, map[string]any{
		"args":       map[string]any{"n": int64(1), "f": 2.5, "big": stdjson.Number("1180591620717411303424"), "s": "x", "l": []any{nil, true}, "d": map[string]any{"k": "v"}},
		"helper_pid": int64(os.Getpid()), // the helper ran here, in the parent
	}, res.Value)
	assert.Equal(t, []string{"sap_read_table", "echo", "echo"}, h.calls)
	assert.Equal(t, []int{0, 1, 2}, h.ns, "each helper call gets its ordinal")
	require.Len(t, res.Calls, 3)
	assert.Equal(t, "sap_read_table", res.Calls[0].Helper)
	assert.Equal(t, map[string]any{"table": "KNA1", "row_count": int64(3)}, res.Calls[0].Args)

	// A helper's error is the script's, with its line; the sandbox serves the next script.
	res, err = p.Run(context.Background(), "print(\"before\")\nsap_read_table(table=\"BKPF\")", testHelpers, h.call, script.Limits{})
	require.Error(t, err)
	assert.Equal(t, "script failed at line 2: helper sap_read_table failed: SAP authorization failed: no authorization for table BKPF\n  2 | sap_read_table(table=\"BKPF\")", err.Error())
	assert.Equal(t, "before\n", res.Output)
	require.Len(t, res.Calls, 1)
	assert.Contains(t, res.Calls[0].Err, "no authorization")
	assert.Equal(t, pids, p.pids(), "the same sandbox served both scripts")
}

// The sandbox's process has nothing of the worker's: no environment, an empty working
// directory, its own network namespace, and hard limits.
func TestASandboxIsConfined(t *testing.T) {
	t.Setenv("SAPAGENT_TEST_SECRET", "s3cret")
	p := newPool(t, Options{Size: 1, MemoryMB: 128})
	pid := strconv.Itoa(waitPids(t, p, 1)[0])
	_, err := p.Run(context.Background(), "print(1)", nil, nil, script.Limits{})
	require.NoError(t, err)

	env, err := os.ReadFile("/proc/" + pid + "/environ")
	require.NoError(t, err)
	assert.Equal(t, childEnv+"=1\x00", string(env))
	cwd, err := os.Readlink("/proc/" + pid + "/cwd")
	require.NoError(t, err)
	entries, err := os.ReadDir(cwd)
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Equal(t, p.dir, cwd)

	mine, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	theirs, err := os.Readlink("/proc/" + pid + "/ns/net")
	require.NoError(t, err)
	if p.Isolation() == "no namespace" {
		t.Log("namespaces are not available here; the sandbox shares the network namespace")
	} else {
		assert.NotEqual(t, mine, theirs, "the sandbox has its own network namespace")
	}

	limits, err := os.ReadFile("/proc/" + pid + "/limits")
	require.NoError(t, err)
	lim := map[string][]string{}
	for _, line := range strings.Split(string(limits), "\n")[1:] {
		if len(line) > 26 {
			lim[strings.TrimSpace(line[:26])] = strings.Fields(line[26:])
		}
	}
	assert.Equal(t, "0", lim["Max core file size"][0])
	assert.Equal(t, "0", lim["Max file size"][0])
	nofile, _ := strconv.Atoi(lim["Max open files"][0])
	assert.Less(t, nofile, 16, "no descriptors left to open files or sockets")
	as, _ := strconv.ParseUint(lim["Max address space"][0], 10, 64)
	f, err := os.Open("/proc/" + pid + "/statm")
	require.NoError(t, err)
	defer f.Close()
	size, err := statmPages(f, 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, as, size+2*128<<20+addressHeadroom)
	assert.NotEqual(t, "unlimited", lim["Max cpu time"][0])
}

func TestHostileScriptsEndWithAClearErrorAndTheNextScriptRuns(t *testing.T) {
	p := newPool(t, Options{Size: 1, MemoryMB: 128})
	h := &parentHelpers{}
	for _, tc := range []struct {
		name, code string
		limits     script.Limits
		want       []string
		crashes    bool // the sandbox dies and is replaced; otherwise it serves the next script
		memory     bool // skipped under the race detector
	}{
		// The attacks of security issue 11: stopped by the interpreter's own checks.
		{"deep json.decode", `x = json.decode("[" * 2000000 + "]" * 2000000)`, script.Limits{}, []string{"nested more than 1000 levels"}, false, false},
		{"deep json.encode", "x = []\nfor i in range(100000):\n    x = [x]\ny = json.encode(x)", script.Limits{}, []string{"nested more than 1000 levels"}, false, false},
		{"4 GiB list in one step", "x = [0] * (1 << 28)", script.Limits{}, []string{"a list of 268435456 elements"}, false, false},
		{"s + s + s + s", "s = \"x\" * (1 << 26)\nt = s + s + s + s", script.Limits{}, []string{"a string of 128 MiB"}, false, true},
		{"big int product", "x = 7\nfor i in range(40):\n    x = x * x", script.Limits{}, []string{"1048576-bit limit"}, false, false},
		// Memory growing step by step: the in-sandbox budget stops it with its output.
		{"memory, step by step", "print(\"start\")\nl = []\nfor i in range(100000):\n    l.append(\"x\" * (1 << 20) + str(i))", script.Limits{}, []string{"script used too much memory (more than 64 MiB)", "at line 4"}, false, true},
		// What the interpreter cannot see: the sandbox's own limits.
		{"memory in one step", `x = ",".join(["x" * (1 << 20)] * 2000)`, script.Limits{}, []string{"the script exceeded the sandbox's memory limit (128 MiB) and was stopped"}, true, true},
		{"a huge operation past the time limit", `x = int("7" * 3000000)`, script.Limits{Timeout: time.Second}, []string{"the script ran longer than its 1s time limit and was stopped"}, true, false},
		{"deep nesting", "x = ()\nfor i in range(500000):\n    x = (x,)\nprint(str(x)[:10])", script.Limits{MaxSteps: 50_000_000}, []string{"and was stopped"}, true, true},
		// The interpreter's limits still hold inside the sandbox.
		{"infinite loop", "while True:\n    pass", script.Limits{}, []string{"script exceeded 5000000 execution steps"}, false, false},
		{"busy loop timeout", "x = 0\nwhile True:\n    x += 1", script.Limits{Timeout: 200 * time.Millisecond, MaxSteps: 1 << 62}, []string{"script timed out after 200ms", "at line"}, false, false},
		{"flood of helper calls", "for i in range(100000):\n    echo(i=i)", script.Limits{}, []string{"script exceeded the limit of 200 helper calls"}, false, false},
		{"huge output", "for i in range(1000000):\n    print(\"x\" * 1000)", script.Limits{}, []string{"script output exceeded 65536 bytes"}, false, false},
		{"huge result", "result = [\"x\" * 1000] * 1000", script.Limits{}, []string{"`result` is larger than"}, false, false},
		{"recursion", "def f(n):\n    return f(n + 1)\nf(0)", script.Limits{}, []string{"recursion is not allowed"}, false, false},
		{"load", "load(\"os\", \"system\")", script.Limits{}, []string{"load() is not available"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.memory && raceEnabled {
				t.Skip("memory limits are skewed by the race detector")
			}
			before := waitPids(t, p, 1)
			start := time.Now()
			_, err := p.Run(context.Background(), tc.code, testHelpers, h.call, tc.limits)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Less(t, time.Since(start), 20*time.Second)

			res, err := p.Run(context.Background(), "r = echo(x=1)\nresult = r[\"args\"][\"x\"] + 1", testHelpers, h.call, script.Limits{})
			require.NoError(t, err, "the next script runs")
			assert.Equal(t, int64(2), res.Value)
			after := waitPids(t, p, 1)
			if tc.crashes {
				assert.NotEqual(t, before, after, "the sandbox was replaced")
			} else {
				assert.Equal(t, before, after, "the sandbox served the next script")
			}
		})
	}
}

func TestAKilledSandboxIsExplainedAndReplaced(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	pid := waitPids(t, p, 1)[0]
	h := &parentHelpers{}
	// The sandbox dies while the parent runs one of its helper calls.
	call := func(ctx context.Context, n int, helper string, args map[string]any) (any, error) {
		if helper == "echo" {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			time.Sleep(50 * time.Millisecond)
		}
		return h.call(ctx, n, helper, args)
	}
	res, err := p.Run(context.Background(), "print(1)\necho()\nprint(2)", testHelpers, call, script.Limits{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the script sandbox ended unexpectedly (signal: killed) and was replaced")
	require.Len(t, res.Calls, 1, "the calls made before are reported")

	res, err = p.Run(context.Background(), "result = 40 + 2", nil, nil, script.Limits{})
	require.NoError(t, err)
	assert.Equal(t, int64(42), res.Value)
	pid2 := waitPids(t, p, 1)[0]
	assert.NotEqual(t, pid, pid2)

	// A helper still running when its sandbox dies is cancelled: nobody waits for its answer.
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = syscall.Kill(pid2, syscall.SIGKILL)
	}()
	start := time.Now()
	res, err = p.Run(context.Background(), "block()", testHelpers, h.call, script.Limits{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ended unexpectedly")
	assert.Less(t, time.Since(start), 5*time.Second, "not the script's 60 s limit")
	require.Len(t, res.Calls, 1)
	assert.Contains(t, res.Calls[0].Err, "context canceled")
}

// A sandbox that calls a helper its script does not name (as only a subverted interpreter
// could) is killed before the helper runs.
func TestASandboxCallsOnlyTheHelpersTheScriptNames(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	waitPids(t, p, 1)
	s := <-p.slots
	defer func() { p.slots <- s }()
	h := &parentHelpers{}
	_, err, reusable := s.proc.run(context.Background(), "echo()", testHelpers, map[string]bool{"sap_read_table": true}, h.call, script.Limits{}.WithDefaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the script sandbox misbehaved and was stopped")
	assert.False(t, reusable)
	assert.Empty(t, h.calls, "the helper did not run")
}

// A sandbox past its CPU-time limit (the kernel's SIGXCPU) exits, and the script says why.
func TestTheCPULimitEndsASandbox(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	pid := waitPids(t, p, 1)[0]
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(pid, syscall.SIGXCPU)
	}()
	_, err := p.Run(context.Background(), "while True:\n    pass", nil, nil, script.Limits{MaxSteps: 1 << 62})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the script used more CPU time than the sandbox allows and was stopped")
	res, err := p.Run(context.Background(), "result = 1", nil, nil, script.Limits{})
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Value)
}

func TestCancellationAndTheCallersDeadline(t *testing.T) {
	p := newPool(t, Options{Size: 1})
	h := &parentHelpers{}
	pid := waitPids(t, p, 1)

	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel(errors.New("the user pressed stop")) }()
	_, err := p.Run(ctx, "while True:\n    pass", nil, nil, script.Limits{MaxSteps: 1 << 62})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "script cancelled after")
	assert.Contains(t, err.Error(), "the user pressed stop")

	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	res, err := p.Run(dctx, "print(\"start\")\nblock()", testHelpers, h.call, script.Limits{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(the caller's deadline) at line 2")
	assert.Equal(t, "start\n", res.Output)
	assert.Equal(t, pid, waitPids(t, p, 1), "a stopped script leaves its sandbox usable")

	_, err = p.Run(ctx, "print(1)", nil, nil, script.Limits{})
	assert.ErrorContains(t, err, "script not run")
}

func TestScriptsRunConcurrentlyUpToThePoolSize(t *testing.T) {
	p := newPool(t, Options{Size: 2})
	h := &parentHelpers{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := fmt.Sprintf("r = sap_read_table(table=\"T%d\", row_count=%d)\nresult = len(r[\"rows\"])", i, i)
			hostile, want := `x = ",".join(["x" * (1 << 20)] * 2000)`, "memory limit"
			if raceEnabled {
				hostile, want = "while True:\n    pass", "execution steps"
			}
			if i%4 == 3 {
				code = hostile
			}
			res, err := p.Run(context.Background(), code, testHelpers, h.call, script.Limits{})
			if i%4 == 3 {
				assert.ErrorContains(t, err, want)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, int64(i), res.Value)
		}()
	}
	wg.Wait()
	waitPids(t, p, 2)
}

func TestCloseStopsTheSandboxes(t *testing.T) {
	p, err := New(Options{Size: 2})
	require.NoError(t, err)
	pids := waitPids(t, p, 2)
	p.Close()
	for _, pid := range pids {
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		assert.Error(t, syscall.Kill(pid, 0), "sandbox %d ended", pid)
	}
	_, err = os.Stat(p.dir)
	assert.True(t, os.IsNotExist(err))
}
