package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sapagent/sapagent/internal/script"
)

const (
	// killGrace is how long after the script's own time limit (which the sandbox enforces
	// itself, with a precise error and the output so far) the parent kills the process.
	killGrace = time.Second
	// startTimeout bounds a sandbox's start until it reports ready.
	startTimeout = 30 * time.Second
	// memoryPoll is how often the parent samples a busy sandbox's resident memory.
	memoryPoll = 10 * time.Millisecond
	// maxStderr is how much of a sandbox's stderr is kept to tell why it died.
	maxStderr = 8 << 10
)

// Why the parent killed a sandbox.
const (
	killTimeout   = "timeout"
	killMemory    = "memory"
	killCancelled = "cancelled"
	killProtocol  = "protocol"
	killStopped   = "stopped"
)

// proc is one sandbox process.
type proc struct {
	cmd     *exec.Cmd
	in      *frameWriter
	stdin   io.Closer
	frames  chan message  // from the sandbox; closed when its stdout ends
	exited  chan struct{} // closed once the process has been waited for
	stderr  *headBuffer
	memory  uint64
	baseRSS uint64
	conf    *Confinement // as the sandbox reported it when ready

	// Touched only by the goroutine running a script on it.
	runs    int
	helpers []script.Helper // as last sent

	mu         sync.Mutex
	killReason string
	waitErr    error
}

// startError is a failure to create the process (as opposed to a process that failed).
type startError struct{ err error }

func (e *startError) Error() string { return "start: " + e.err.Error() }

// errPrivileges: the sandbox changed user and then could not execute itself (exitPrivileges).
var errPrivileges = errors.New("the sandbox could not execute itself as the unprivileged user")

func startProc(exe, dir string, args []string, attr *syscall.SysProcAttr, memory uint64) (*proc, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = []string{childEnv + "=1"}
	cmd.Dir = dir
	cmd.SysProcAttr = attr
	pr := &proc{cmd: cmd, frames: make(chan message, 1), exited: make(chan struct{}), stderr: &headBuffer{max: maxStderr}, memory: memory}
	cmd.Stderr = pr.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &startError{err}
	}
	pr.stdin, pr.in = stdin, newFrameWriter(stdin)
	go pr.read(bufio.NewReader(stdout))

	if err := pr.in.write(message{Type: msgConfig, MemoryBytes: memory}); err != nil {
		pr.stop()
		return nil, fmt.Errorf("configure: %w", err)
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case m, ok := <-pr.frames:
		if ok && m.Type == msgReady {
			pr.baseRSS = rss(cmd.Process.Pid)
			pr.conf = m.Confinement
			return pr, nil
		}
		pr.kill(killProtocol)
		<-pr.exited
		if exitCode(pr.waitErr) == exitPrivileges {
			return nil, fmt.Errorf("%w: %s", errPrivileges, pr.exitText())
		}
		return nil, fmt.Errorf("the sandbox did not start: %s", pr.exitText())
	case <-timer.C:
		pr.kill(killProtocol)
		return nil, fmt.Errorf("the sandbox did not report ready within %s", startTimeout)
	}
}

// read forwards the sandbox's frames until its stdout ends, then reaps the process.
func (pr *proc) read(r *bufio.Reader) {
	for {
		m, err := readFrame(r, maxChildFrame)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				pr.kill(killProtocol)
			}
			break
		}
		pr.frames <- m
	}
	close(pr.frames)
	err := pr.cmd.Wait()
	pr.mu.Lock()
	pr.waitErr = err
	pr.mu.Unlock()
	close(pr.exited)
}

// kill stops the process with SIGKILL, remembering the first reason.
func (pr *proc) kill(reason string) {
	pr.mu.Lock()
	if pr.killReason == "" {
		pr.killReason = reason
	}
	pr.mu.Unlock()
	_ = pr.cmd.Process.Kill()
}

// stop ends the process (the pool no longer needs it); the reader goroutine reaps it.
func (pr *proc) stop() {
	pr.kill(killStopped)
	_ = pr.stdin.Close()
}

func (pr *proc) alive() bool {
	select {
	case <-pr.exited:
		return false
	default:
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.killReason == ""
}

// bloated reports a sandbox that kept much of its memory after a script: a fresh one is
// cheaper than holding it.
func (pr *proc) bloated() bool {
	r := rss(pr.cmd.Process.Pid)
	return r > pr.baseRSS && r-pr.baseRSS > pr.memory/2
}

// run runs one script. reusable is false when the sandbox must not serve another script.
func (pr *proc) run(ctx context.Context, code string, helpers []script.Helper, allowed map[string]bool, call script.Call, limits script.Limits) (res script.Result, err error, reusable bool) {
	pr.runs++
	id := pr.runs
	m := message{Type: msgRun, Run: id, Code: code, Limits: &limits}
	if sameHelpers(pr.helpers, helpers) {
		m.SameHelpers = true
	} else {
		m.Helpers = make([]helper, len(helpers))
		for i, h := range helpers {
			m.Helpers[i] = helper{Name: h.Name, Parameters: h.Parameters}
		}
		pr.helpers = append([]script.Helper(nil), helpers...)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limits.Timeout {
		m.Deadline = dl
	}
	// The sandbox stops waiting for a helper at the script's deadline and reports; the helper
	// gets a little longer, so its error never arrives before the sandbox's own timeout. The
	// process is killed killGrace after the deadline.
	helperCtx, cancel := context.WithTimeout(ctx, limits.Timeout+killGrace/2)
	defer cancel()
	go func() { // a helper still running when the sandbox dies has nobody to answer
		select {
		case <-pr.exited:
			cancel()
		case <-helperCtx.Done():
		}
	}()
	deadline := time.AfterFunc(limits.Timeout+killGrace, func() { pr.kill(killTimeout) })
	defer func() { deadline.Stop() }()
	stopWatch := pr.watchMemory()
	defer stopWatch()

	_ = pr.in.write(m) // if the sandbox died, its frames end at once
	done := ctx.Done()
	for {
		select {
		case f, ok := <-pr.frames:
			if !ok {
				return res, pr.crashError(ctx, limits), false
			}
			if f.Run != id {
				pr.kill(killProtocol)
				continue
			}
			switch f.Type {
			case msgCall:
				if f.N != len(res.Calls) || len(res.Calls) >= limits.MaxCalls || !allowed[f.Helper] {
					pr.kill(killProtocol) // the interpreter counts calls and knows no other helpers: it is broken
					continue
				}
				reply, rec := runHelper(helperCtx, call, f)
				res.Calls = append(res.Calls, rec)
				reply.Run = id
				_ = pr.in.write(reply) // if the sandbox died, its frames end next
			case msgDone:
				res.Output = f.Output
				if f.Error != "" {
					return res, errors.New(f.Error), true
				}
				if res.Value, err = decodeValue(f.Value); err != nil {
					return res, fmt.Errorf("the value of `result` cannot be returned: %v", err), false
				}
				return res, nil, true
			default:
				pr.kill(killProtocol)
			}
		case <-done:
			// The sandbox stops the script and reports; if it does not, it is killed. It knows
			// the caller's deadline already (and says so when it passes).
			done = nil
			if m.Deadline.IsZero() || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				_ = pr.in.write(message{Type: msgCancel, Run: id, Error: fmt.Sprint(context.Cause(ctx))})
			}
			if deadline.Stop() {
				deadline = time.AfterFunc(killGrace, func() { pr.kill(killCancelled) })
			}
		}
	}
}

// runHelper runs one helper call for the sandbox.
func runHelper(ctx context.Context, call script.Call, f message) (reply message, rec script.CallRecord) {
	reply = message{Type: msgReply, N: f.N}
	rec = script.CallRecord{Helper: f.Helper}
	start := time.Now()
	out, err := func() (out any, err error) {
		defer func() {
			if p := recover(); p != nil {
				out, err = nil, fmt.Errorf("internal error: %v", p)
			}
		}()
		args, err := decodeValue(f.Args)
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		rec.Args, _ = args.(map[string]any)
		if call == nil {
			return nil, errors.New("helpers are not available in this run")
		}
		return call(ctx, f.N, f.Helper, rec.Args)
	}()
	if err == nil {
		reply.Value, err = json.Marshal(out)
	}
	rec.Duration = time.Since(start)
	if err != nil {
		rec.Err, reply.Error = err.Error(), err.Error()
	}
	return reply, rec
}

// watchMemory kills the sandbox when its resident memory grows past the limit (the address
// space limit normally stops it first; this also covers systems where that is unavailable).
func (pr *proc) watchMemory() (stop func()) {
	if pr.baseRSS == 0 {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-pr.exited:
				return
			case <-t.C:
				if r := rss(pr.cmd.Process.Pid); r > pr.baseRSS+pr.memory {
					pr.kill(killMemory)
					return
				}
			}
		}
	}()
	return func() { close(quit) }
}

// crashError explains, for the model that wrote the script, why its sandbox ended.
func (pr *proc) crashError(ctx context.Context, limits script.Limits) error {
	select {
	case <-pr.exited:
	case <-time.After(5 * time.Second):
	}
	pr.mu.Lock()
	reason, waitErr := pr.killReason, pr.waitErr
	pr.mu.Unlock()
	stderr := pr.stderr.String()
	mib := pr.memory >> 20
	switch {
	case reason == killTimeout:
		return fmt.Errorf("the script ran longer than its %s time limit and was stopped (a single operation on a huge value can take that long); its output is lost", limits.Timeout)
	case reason == killMemory || strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "failed to create new OS thread"):
		return fmt.Errorf("the script exceeded the sandbox's memory limit (%d MiB) and was stopped; work on smaller pieces of data (its output is lost)", mib)
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds"):
		return errors.New("the script built values nested too deeply for the sandbox (stack overflow) and was stopped; keep data structures flat (its output is lost)")
	case exitCode(waitErr) == exitCPU || strings.Contains(stderr, "CPU time limit"):
		return errors.New("the script used more CPU time than the sandbox allows and was stopped (its output is lost)")
	case reason == killCancelled || ctx.Err() != nil:
		return fmt.Errorf("script cancelled: %v", context.Cause(ctx))
	case reason == killProtocol:
		return errors.New("the script sandbox misbehaved and was stopped; try a simpler script")
	case reason == killStopped:
		return errors.New("the script sandbox was shut down while the script ran")
	}
	return fmt.Errorf("the script sandbox ended unexpectedly (%s) and was replaced; try a simpler script", pr.exitText())
}

// exitText describes how the process ended, for errors and logs (no script data: the first
// line of its stderr is the Go runtime's own message).
func (pr *proc) exitText() string {
	pr.mu.Lock()
	err := pr.waitErr
	pr.mu.Unlock()
	text := "still running"
	if err != nil {
		text = err.Error()
	} else {
		select {
		case <-pr.exited:
			text = "exit status 0"
		default:
		}
	}
	if first, _, _ := strings.Cut(strings.TrimSpace(pr.stderr.String()), "\n"); first != "" && strings.HasPrefix(first, "sandbox:") {
		text += ": " + first
	}
	return text
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// sameHelpers reports whether a sandbox already has these helpers (the registry hands out
// the same strings each time, so the comparison is cheap).
func sameHelpers(a, b []script.Helper) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Parameters != b[i].Parameters {
			return false
		}
	}
	return true
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.b)
}
