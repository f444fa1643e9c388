// Package script is the interpreter behind the agent's execute_code tool: a Python-dialect
// script (Starlark) whose only capabilities are "helpers", the agent's tools exposed as
// functions. Workers run it inside sandbox processes (internal/sandbox), not in their own.
//
// A script cannot import or load anything and has no file, network, clock or randomness; the
// only predeclared names besides the Starlark built-ins are the helpers and the json and math
// modules. Execution steps, wall-clock time, output and helper calls are bounded (Limits), and
// every failure comes back as an error written for the model that wrote the script, with the
// script line it happened on.
package script

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Helper is one of the agent's tools exposed to scripts as a function.
type Helper struct {
	Name              string // e.g. "sap_read_table" (a valid Starlark identifier)
	Description       string
	Parameters        string // JSON schema of the keyword arguments object (type object, properties, required)
	ReturnDescription string // shape of the returned dict, e.g. `{"rows": [dict], "fields": [str]}`
	Writes            bool   // changes data: scripts referencing it need approval
}

// Call runs one helper with its keyword arguments (JSON-like values: string, json.Number or
// float64/int64, bool, nil, []any, map[string]any) and returns a JSON-like value. n is the
// ordinal of the call within the run (0, 1, 2, …), from which a caller can derive a per-call
// idempotency key.
type Call func(ctx context.Context, n int, helper string, args map[string]any) (any, error)

// Limits bound one run. Zero (or negative) fields take the defaults.
type Limits struct {
	MaxSteps  uint64        // Starlark execution steps (default 5_000_000)
	Timeout   time.Duration // wall clock (default 60s)
	MaxOutput int           // bytes of printed output + result (default 64 KiB)
	MaxCalls  int           // helper calls per run (default 200)
	// MaxMemory bounds how much the Go heap may grow while the script runs (default 1 GiB).
	// Starlark has no allocation accounting, so the run samples the heap of the whole process:
	// meaningful where one script runs per process, as in the sandbox pool.
	MaxMemory uint64
}

// Defaults of Limits.
const (
	DefaultMaxSteps  = 5_000_000
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 64 << 10
	DefaultMaxCalls  = 200
	DefaultMaxMemory = 1 << 30
)

// WithDefaults fills the zero fields with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxSteps == 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	return l
}

// CallRecord is one helper call made by a run.
type CallRecord struct {
	Helper   string
	Args     map[string]any
	Duration time.Duration
	Err      string // the helper's error, if it failed
}

// Result is what a run produced. On error it still holds the output printed and the calls made
// before the failure.
type Result struct {
	Output string       // everything print()ed
	Value  any          // JSON-like value of the global `result` if the script assigned one, else nil
	Calls  []CallRecord // in call order
}

// fileOptions is the dialect: while loops, top-level control flow, sets and global reassignment
// are allowed (scripts are small programs); recursion is not (Recursion: false), so runaway
// recursion fails at once with a clear error instead of exhausting the stack.
var fileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
}

// filename names the script in Starlark positions.
const filename = "script"

const (
	// maxArgBytes bounds the (JSON-encoded) size of one helper call's arguments.
	maxArgBytes = 1 << 20
	// memoryPoll is how often a run samples the Go heap (a loop can allocate a few MiB per
	// millisecond).
	memoryPoll = 2 * time.Millisecond
)

// errOwnTimeout is the cause of the run's own deadline (as opposed to the caller's).
var errOwnTimeout = errors.New("script timeout")

// predeclaredModules are the only names besides helpers and Starlark built-ins (and the
// guards, which scripts cannot name).
var predeclaredModules = starlark.StringDict{
	"json": jsonModule,
	"math": starmath.Module,
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keywords are Starlark's keywords and reserved words (not usable as helper names).
var keywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`and break continue def elif else for if in lambda load not or pass
		return while as assert async await class del except finally from global import is nonlocal
		raise try with yield`) {
		keywords[k] = true
	}
}

// run is the state of one execution.
type run struct {
	ctx    context.Context
	call   Call
	limits Limits
	start  time.Time
	lines  []string // the script's lines, for error messages
	thread *starlark.Thread

	// Touched only by the goroutine executing the script.
	out   strings.Builder
	calls []CallRecord

	mu     sync.Mutex
	reason error // why the sandbox stopped the script (first one wins)
}

// Run executes the script. The returned Result holds the output and calls made so far even when
// err != nil. Run never panics, returns once the script has stopped (no goroutine outlives it)
// and may be called concurrently.
func Run(ctx context.Context, code string, helpers []Helper, call Call, limits Limits) (res Result, err error) {
	limits = limits.WithDefaults()
	r := &run{call: call, limits: limits, start: time.Now(), lines: strings.Split(code, "\n")}
	defer func() {
		if p := recover(); p != nil {
			res = r.result()
			err = fmt.Errorf("the sandbox failed while running the script (internal error: %v); try a simpler script", p)
		}
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("script not run: %v", context.Cause(ctx))
	}
	predeclared, err := r.predeclared(helpers)
	if err != nil {
		return Result{}, err
	}

	ctx, cancel := context.WithTimeoutCause(ctx, limits.Timeout, errOwnTimeout)
	defer cancel()
	r.ctx = ctx

	thread := &starlark.Thread{Name: "execute_code"}
	r.thread = thread
	thread.SetMaxExecutionSteps(limits.MaxSteps)
	thread.OnMaxSteps = func(*starlark.Thread) {
		r.halt(fmt.Errorf("script exceeded %d execution steps (infinite loop?)", limits.MaxSteps))
	}
	thread.Print = r.print
	thread.Load = func(_ *starlark.Thread, module string) (starlark.StringDict, error) {
		return nil, errors.New("load() is not available in this sandbox: everything a script may use (the helpers, json, math) is already predeclared")
	}

	done := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Add(1)
	go func() {
		defer watcher.Done()
		r.watch(done)
	}()
	defer func() {
		close(done)
		watcher.Wait()
	}()

	globals, execErr := r.exec(code, predeclared)
	res = r.result()
	if execErr != nil {
		return res, r.explain(execErr)
	}
	if v, ok := globals["result"]; ok {
		budget := limits.MaxOutput - r.out.Len()
		val, err := toGo(v, &budget)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return res, fmt.Errorf("the value assigned to `result` is larger than the %d bytes left of the %d-byte output limit; assign a summary (counts, totals, the first rows) instead", max(limits.MaxOutput-r.out.Len(), 0), limits.MaxOutput)
			}
			return res, fmt.Errorf("the value assigned to `result` cannot be returned: %v", err)
		}
		res.Value = val
	}
	return res, nil
}

// exec parses the script, routes its + and * through the size guards, and runs it.
func (r *run) exec(code string, predeclared starlark.StringDict) (starlark.StringDict, error) {
	f, err := fileOptions.Parse(filename, code, 0)
	if err != nil {
		return nil, err
	}
	g := &guard{}
	f.Stmts = g.stmts(f.Stmts)
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	globals, err := prog.Init(r.thread, predeclared)
	globals.Freeze()
	return globals, err
}

// predeclared builds the script's environment: the modules plus one builtin per helper.
func (r *run) predeclared(helpers []Helper) (starlark.StringDict, error) {
	env := make(starlark.StringDict, len(predeclaredModules)+len(guards)+len(helpers))
	for name, v := range predeclaredModules {
		env[name] = v
	}
	for name, v := range guards {
		env[name] = v
	}
	for _, h := range helpers {
		switch {
		case !identRE.MatchString(h.Name) || keywords[h.Name]:
			return nil, fmt.Errorf("helper name %q is not a valid identifier", h.Name)
		case env.Has(h.Name) || starlark.Universe.Has(h.Name):
			return nil, fmt.Errorf("helper name %q is defined twice or collides with a predeclared name", h.Name)
		}
		env[h.Name] = r.builtin(h)
	}
	return env, nil
}

func (r *run) result() Result {
	return Result{Output: r.out.String(), Calls: r.calls}
}

// halt records why the sandbox stops the script and cancels its thread. It is safe from any
// goroutine; the first reason wins and is returned.
func (r *run) halt(reason error) error {
	r.mu.Lock()
	if r.reason == nil {
		r.reason = reason
	}
	reason = r.reason
	r.mu.Unlock()
	r.thread.Cancel(reason.Error())
	return reason
}

func (r *run) stopped() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// watch stops the script when the context ends or the heap grows past MaxMemory, until done.
func (r *run) watch(done <-chan struct{}) {
	base := heapBytes()
	tick := time.NewTicker(memoryPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-r.ctx.Done():
			r.halt(r.ctxReason())
			return
		case <-tick.C:
			if h := heapBytes(); h > base && h-base > r.limits.MaxMemory {
				r.halt(stop(fmt.Sprintf("script used too much memory (more than %d MiB)", r.limits.MaxMemory>>20), "work on smaller pieces of data"))
				return
			}
		}
	}
}

// stopError is why the sandbox stopped a script: what happened, then what to do about it (the
// script line goes between the two).
type stopError struct{ what, advice string }

func (e *stopError) Error() string { return e.message("") }

func (e *stopError) message(at string) string {
	if e.advice == "" {
		return e.what + at
	}
	return e.what + at + "; " + e.advice
}

func stop(what, advice string) error { return &stopError{what, advice} }

// ctxReason explains why r.ctx ended.
func (r *run) ctxReason() error {
	elapsed := time.Since(r.start).Round(time.Millisecond)
	switch {
	case errors.Is(context.Cause(r.ctx), errOwnTimeout):
		return fmt.Errorf("script timed out after %s", r.limits.Timeout)
	case errors.Is(r.ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("script timed out after %s (the caller's deadline)", elapsed)
	default:
		return fmt.Errorf("script cancelled after %s: %v", elapsed, context.Cause(r.ctx))
	}
}

// print implements print(): output is captured up to the output limit.
func (r *run) print(_ *starlark.Thread, msg string) {
	if r.stopped() != nil {
		return
	}
	if r.out.Len()+len(msg)+1 > r.limits.MaxOutput {
		r.halt(stop(fmt.Sprintf("script output exceeded %d bytes", r.limits.MaxOutput), "print less (summaries, counts, the first rows)"))
		return
	}
	r.out.WriteString(msg)
	r.out.WriteByte('\n')
}

// builtin exposes one helper: keyword arguments only, converted to JSON-like values and back.
func (r *run) builtin(h Helper) *starlark.Builtin {
	params, strict := paramNames(h.Parameters)
	return starlark.NewBuiltin(h.Name, func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			return nil, fmt.Errorf("%s takes keyword arguments only (got %d positional); call it as %s", h.Name, len(args), callExample(h.Name, params))
		}
		if len(r.calls) >= r.limits.MaxCalls {
			return nil, r.halt(stop(fmt.Sprintf("script exceeded the limit of %d helper calls", r.limits.MaxCalls), "fetch more per call or split the work into several scripts"))
		}
		in := make(map[string]any, len(kwargs))
		budget := maxArgBytes
		for _, kv := range kwargs {
			name, _ := starlark.AsString(kv[0])
			if strict && !slices.Contains(params, name) {
				if len(params) == 0 {
					return nil, fmt.Errorf("%s takes no arguments (got %s=)", h.Name, name)
				}
				return nil, fmt.Errorf("%s has no parameter %q; its parameters are: %s", h.Name, name, strings.Join(params, ", "))
			}
			if _, dup := in[name]; dup {
				return nil, fmt.Errorf("%s: argument %s given twice", h.Name, name)
			}
			v, err := toGo(kv[1], &budget)
			if errors.Is(err, errTooLarge) {
				return nil, fmt.Errorf("%s: the arguments are larger than %d bytes; pass less data per call", h.Name, maxArgBytes)
			} else if err != nil {
				return nil, fmt.Errorf("%s: argument %s: %v", h.Name, name, err)
			}
			in[name] = v
		}
		if r.ctx.Err() != nil {
			return nil, r.halt(r.ctxReason())
		}
		if r.call == nil {
			return nil, fmt.Errorf("helper %s failed: helpers are not available in this run", h.Name)
		}
		start := time.Now()
		out, err := r.invoke(len(r.calls), h.Name, in)
		rec := CallRecord{Helper: h.Name, Args: in, Duration: time.Since(start)}
		if err != nil {
			rec.Err = err.Error()
		}
		r.calls = append(r.calls, rec)
		if err != nil {
			if r.ctx.Err() != nil {
				return nil, r.halt(r.ctxReason())
			}
			return nil, fmt.Errorf("helper %s failed: %v", h.Name, err)
		}
		v, err := toStarlark(out, 0)
		if err != nil {
			return nil, fmt.Errorf("helper %s returned a value the script cannot use: %v", h.Name, err)
		}
		return v, nil
	})
}

// invoke calls the helper, turning a panic in its implementation into an error.
func (r *run) invoke(n int, name string, args map[string]any) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	return r.call(r.ctx, n, name, args)
}

func callExample(name string, params []string) string {
	args := make([]string, len(params))
	for i, p := range params {
		args[i] = p + "=..."
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}
