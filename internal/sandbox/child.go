package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"

	"github.com/sapagent/sapagent/internal/script"
)

// childEnv marks a process started by a pool as a sandbox. The pool re-executes the current
// binary with only this variable set; init below then serves scripts instead of returning to
// main, so every binary that links this package (the worker, test binaries) can be a sandbox.
const childEnv = "SAPAGENT_SANDBOX_CHILD"

// Exit codes a sandbox uses for the reasons it stops on its own.
const (
	exitCPU        = 3 // the CPU-time limit (SIGXCPU)
	exitSetup      = 4 // it could not confine itself
	exitPrivileges = 5 // it changed user but could not execute itself (the pool starts the next as it is)
)

// addressHeadroom is address space a script may map beyond twice the memory limit (Go's
// arenas, thread stacks, runtime metadata); see limitMemory.
const addressHeadroom = 64 << 20

// startCPU is the CPU time an idle sandbox may use until its first script sets the limit.
const startCPU = 10 * time.Second

// maxStack bounds each goroutine's stack in a sandbox (Go's default is 1 GiB): anything nested
// deeper than the interpreter's own checks dies quickly instead of eating the memory limit.
const maxStack = 64 << 20

func init() {
	if os.Getenv(childEnv) == "" {
		return
	}
	os.Exit(serve())
}

// serve is a sandbox's main: configure, confine, report ready, then run scripts until the
// parent closes stdin.
func serve() int {
	problems := dropPrivileges() // first: it may execute the binary again
	closeInherited()
	runtime.GOMAXPROCS(1) // a script is one goroutine; a busy sandbox holds at most one core
	debug.SetMaxStack(maxStack)
	in := bufio.NewReader(os.Stdin)
	out := newFrameWriter(os.Stdout)
	cfg, err := readFrame(in, 0)
	if err != nil || cfg.Type != msgConfig {
		fmt.Fprintln(os.Stderr, "sandbox: no configuration from the parent")
		return exitSetup
	}
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		fmt.Fprintln(os.Stderr, "sandbox: CPU time limit reached")
		os.Exit(exitCPU)
	}()

	warmUp()
	// The garbage collector works harder as the sandbox nears three quarters of its limit, so
	// a script's garbage does not count against it; scripts are stopped at half (live heap).
	debug.SetMemoryLimit(int64(goMemory() + cfg.MemoryBytes/4*3))
	conf, err := confine(problems)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox: cannot confine itself:", err)
		return exitSetup
	}
	limitCPU(startCPU)
	if err := out.write(message{Type: msgReady, Confinement: conf}); err != nil {
		return 0
	}

	c := &child{out: out, replies: make(chan message, 4), memory: cfg.MemoryBytes}
	runs := make(chan message)
	go c.read(in, runs)
	for m := range runs {
		c.run(m)
	}
	return 0
}

// warmUp runs a small script before the limits apply, so the runtime's lazy setup (timers,
// the poller, the interpreter's tables) happens while files may still be opened.
func warmUp() {
	_, _ = script.Run(context.Background(), "x = json.decode(json.encode({\"a\": [1, 2.5, \"b\" * 2]}))\nprint(x, math.floor(1.5))\nresult = x",
		nil, nil, script.Limits{Timeout: 10 * time.Second})
	runtime.GC()
}

// child is the state of a sandbox between frames.
type child struct {
	out     *frameWriter
	replies chan message
	memory  uint64
	helpers []script.Helper

	mu     sync.Mutex
	runID  int
	cancel context.CancelCauseFunc
}

// read dispatches the parent's frames; the parent closing stdin ends the sandbox.
func (c *child) read(in *bufio.Reader, runs chan<- message) {
	for {
		m, err := readFrame(in, 0)
		if err != nil {
			os.Exit(0)
		}
		switch m.Type {
		case msgRun:
			runs <- m
		case msgReply:
			select {
			case c.replies <- m:
			default: // nobody waits for it: a reply to an abandoned call
			}
		case msgCancel:
			c.mu.Lock()
			if c.runID == m.Run && c.cancel != nil {
				c.cancel(errors.New(m.Error))
			}
			c.mu.Unlock()
		}
	}
}

func (c *child) run(m message) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if !m.Deadline.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, m.Deadline)
		defer stop()
	}
	c.mu.Lock()
	c.runID, c.cancel = m.Run, cancel
	c.mu.Unlock()
	for len(c.replies) > 0 {
		<-c.replies
	}
	if !m.SameHelpers {
		c.helpers = make([]script.Helper, len(m.Helpers))
		for i, h := range m.Helpers {
			c.helpers[i] = script.Helper{Name: h.Name, Parameters: h.Parameters}
		}
	}
	limits := script.Limits{}
	if m.Limits != nil {
		limits = *m.Limits
	}
	limits = limits.WithDefaults()
	// Stop gracefully (with the output so far) well before the process's hard limit kills it:
	// the heap is sampled every few milliseconds, and a loop can allocate gigabytes a second.
	limits.MaxMemory = min(limits.MaxMemory, c.memory/2)
	limitCPU(limits.Timeout + killGrace + time.Second)
	if err := limitMemory(2*c.memory + addressHeadroom); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox: cannot limit memory:", err)
		os.Exit(exitSetup)
	}

	res, err := script.Run(ctx, m.Code, c.helpers, c.call(m.Run), limits)
	done := message{Type: msgDone, Run: m.Run, Output: res.Output}
	if err != nil {
		done.Error = err.Error()
	} else if res.Value != nil {
		if done.Value, err = json.Marshal(res.Value); err != nil {
			done.Error = "the value of `result` cannot be returned: " + err.Error()
		}
	}
	if goMemory() > 64<<20 {
		debug.FreeOSMemory() // a big script's heap goes back before the next script (and before the parent looks)
	}
	_ = c.out.write(done)
}

// call sends a helper call to the parent and waits for its reply.
func (c *child) call(runID int) script.Call {
	return func(ctx context.Context, n int, name string, args map[string]any) (any, error) {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		if err := c.out.write(message{Type: msgCall, Run: runID, N: n, Helper: name, Args: raw}); err != nil {
			return nil, err
		}
		for {
			select {
			case r := <-c.replies:
				if r.Run != runID || r.N != n {
					continue
				}
				if r.Error != "" {
					if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
						<-ctx.Done() // the helper failed because the deadline passed: say so
						return nil, ctx.Err()
					}
					return nil, errors.New(r.Error)
				}
				return decodeValue(r.Value)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}

// goMemory is the memory the Go runtime holds and has not returned to the system (heap,
// stacks, metadata).
func goMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}
