// Package sandbox runs execute_code scripts outside the worker process, in a pool of
// pre-warmed sandbox processes.
//
// A sandbox is the worker's own binary re-executed with an empty environment in an empty
// directory, in its own network namespace where the system allows it, with a hard memory
// limit (address space), a CPU-time limit, no core dumps, no files it can open or write, and a
// 64 MiB stack. It runs internal/script's interpreter and nothing else. Helper calls go back
// to the parent over the pipe, and the parent runs them: a sandbox holds no credentials and
// needs no network. So a script that crashes, exhausts memory or spins can only kill its own
// sandbox. The parent kills a sandbox at the script's wall-clock deadline, reports why it
// ended as the script's error, and starts a replacement in the background; a sandbox whose
// script ended normally serves the next one.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/script"
)

// Options configure a pool. Zero fields take the defaults.
type Options struct {
	// Size is the number of sandbox processes, kept started ahead of need; it is also the most
	// scripts running at once (more wait in the fair queue). Default 4.
	Size int
	// MemoryMB is how much memory a script may add to its sandbox. Default 256.
	MemoryMB int
	// MaxPerOrg and MaxPerUser bound the scripts of one organization and of one user running
	// at once (Owner); more wait in the fair queue. Defaults: DefaultMaxPerOrg and
	// DefaultMaxPerUser of Size; at most Size.
	MaxPerOrg  int
	MaxPerUser int
	// UID and GID are the user and group a sandbox switches to when the worker runs as root
	// (it also gives up every capability; see dropPrivileges). Defaults: nobody, 65534.
	UID, GID int
	Log      *slog.Logger
}

// Defaults of Options.
const (
	DefaultSize     = 4
	DefaultMemoryMB = 256
	DefaultUID      = 65534
	DefaultGID      = 65534
)

// DefaultMaxPerOrg leaves one sandbox of size for other organizations (when there is more
// than one): another tenant's script starts at once, not after a neighbour's whole batch.
func DefaultMaxPerOrg(size int) int { return max(1, size-1) }

// DefaultMaxPerUser lets one user hold half of the sandboxes, so a colleague's script does not
// wait for a batch either.
func DefaultMaxPerUser(size int) int { return max(1, size/2) }

// Pool runs scripts in sandbox processes. Its methods are safe for concurrent use.
type Pool struct {
	memory uint64 // bytes
	log    *slog.Logger
	exe    string
	dir    string // the sandboxes' working directory: empty

	slots chan *slot
	queue *fairQueue // admits at most Size scripts, fairly: each then takes a slot
	user  string     // "uid:gid" a sandbox started as root switches to

	mu        sync.Mutex
	closed    bool
	procs     map[*proc]struct{}
	isolation int  // index into isolations of the strongest that works here
	keepUser  bool // switching user failed once: sandboxes keep the worker's (without capabilities)
	conf      *Confinement
	starting  sync.WaitGroup
}

// slot is one of the pool's Size places; proc is nil until a sandbox is started for it.
type slot struct{ proc *proc }

// New creates a pool and starts its sandboxes in the background, so the first script does not
// wait for one.
func New(o Options) (*Pool, error) {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = DefaultMemoryMB
	}
	if o.MaxPerOrg <= 0 {
		o.MaxPerOrg = DefaultMaxPerOrg(o.Size)
	}
	if o.MaxPerUser <= 0 {
		o.MaxPerUser = DefaultMaxPerUser(o.Size)
	}
	if o.UID <= 0 {
		o.UID = DefaultUID
	}
	if o.GID <= 0 {
		o.GID = DefaultGID
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("script sandbox: cannot find the executable to start: %w", err)
	}
	dir, err := os.MkdirTemp("", "sapagent-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("script sandbox: %w", err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		return nil, fmt.Errorf("script sandbox: %w", err)
	}
	p := &Pool{memory: uint64(o.MemoryMB) << 20, log: o.Log, exe: exe, dir: dir,
		slots: make(chan *slot, o.Size), queue: newFairQueue(o.Size, o.MaxPerOrg, o.MaxPerUser), procs: map[*proc]struct{}{},
		user: fmt.Sprintf("%d:%d", o.UID, o.GID)}
	for range o.Size {
		p.refill(&slot{})
	}
	return p, nil
}

// MemoryMB is the memory limit of a sandbox.
func (p *Pool) MemoryMB() int { return int(p.memory >> 20) }

// Run runs a script of nobody in particular (Owner{}): see RunFor.
func (p *Pool) Run(ctx context.Context, code string, helpers []script.Helper, call script.Call, limits script.Limits) (script.Result, error) {
	return p.RunFor(ctx, Owner{}, code, helpers, call, limits)
}

// RunFor runs owner's script in a sandbox, like script.Run in this process: call runs here,
// once per helper call the script makes. The script first waits its turn in the fair queue
// (Owner). A script that kills its sandbox ends with an error saying why (with the helper
// calls made before), never with a crash of the caller.
func (p *Pool) RunFor(ctx context.Context, owner Owner, code string, helpers []script.Helper, call script.Call, limits script.Limits) (script.Result, error) {
	limits = limits.WithDefaults()
	if ctx.Err() != nil {
		return script.Result{}, fmt.Errorf("script not run: %v", context.Cause(ctx))
	}
	// A sandbox may call only the helpers the script names (what approval was asked for), even
	// if its interpreter were subverted. A script that does not parse fails in the sandbox.
	names := make([]string, len(helpers))
	for i, h := range helpers {
		names[i] = h.Name
	}
	refs, _ := script.Referenced(code, names)
	allowed := make(map[string]bool, len(refs))
	for _, name := range refs {
		allowed[name] = true
	}
	wctx, stopWait := queueContext(ctx, limits)
	release, err := p.queue.acquire(wctx, owner)
	stopWait()
	if err != nil {
		return script.Result{}, err
	}
	defer release()
	// Admitted scripts are at most Size: a slot is free, or its sandbox is being started.
	var s *slot
	select {
	case s = <-p.slots:
	case <-ctx.Done():
		return script.Result{}, fmt.Errorf("script not run: %v (waiting for a free sandbox)", context.Cause(ctx))
	}
	if s.proc == nil || !s.proc.alive() {
		pr, err := p.start()
		if err != nil {
			p.slots <- s
			return script.Result{}, fmt.Errorf("script not run: the script sandbox could not start: %v", err)
		}
		s.proc = pr
	}
	res, err, reusable := s.proc.run(ctx, code, helpers, allowed, call, limits)
	if reusable && s.proc.alive() && !s.proc.bloated() {
		p.slots <- s
	} else {
		if !reusable {
			p.log.Info("script sandbox replaced", "why", err)
		}
		p.retire(s.proc)
		s.proc = nil
		p.refill(s)
	}
	return res, err
}

// errBusy ends a wait in the queue that would leave the script no time to run before the
// caller's deadline (the tool activity's): a clear error then, not a timeout and a retry.
var errBusy = errors.New("the script sandboxes stayed busy with other scripts too long; run fewer scripts at once or try again")

// queueContext bounds the wait for a sandbox so that the script's whole time limit still fits
// before ctx's deadline.
func queueContext(ctx context.Context, limits script.Limits) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, dl.Add(-limits.Timeout-killGrace-time.Second), errBusy)
}

// Close stops every sandbox. Scripts still running end with an error.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	procs := p.procs
	p.procs = map[*proc]struct{}{}
	p.mu.Unlock()
	for pr := range procs {
		pr.stop()
	}
	p.starting.Wait()
	_ = os.RemoveAll(p.dir)
}

// refill starts a sandbox for s in the background and then offers s to scripts. If the start
// fails, s is offered empty and the next script starts one (and reports the failure).
func (p *Pool) refill(s *slot) {
	p.starting.Add(1)
	go func() {
		defer p.starting.Done()
		pr, err := p.start()
		if err != nil && !errors.Is(err, errClosed) {
			p.log.Warn("script sandbox did not start", "error", err)
		}
		s.proc = pr
		p.slots <- s
	}()
}

var errClosed = errors.New("the script sandbox pool is closed")

// start starts one sandbox with the strongest isolation that works here.
func (p *Pool) start() (*proc, error) {
	p.mu.Lock()
	level := p.isolation
	closed := p.closed
	keep := p.keepUser
	p.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	for {
		args := []string{"sandbox", p.user}
		if keep {
			args[1] = argKeep
		}
		pr, err := startProc(p.exe, p.dir, args, isolations[level].attr(), p.memory)
		if err == nil {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.closed {
				pr.stop()
				return nil, errClosed
			}
			p.procs[pr] = struct{}{}
			p.noteConfinement(pr.conf)
			return pr, nil
		}
		if errors.Is(err, errPrivileges) && !keep {
			// Scripts still run, as the worker's user without capabilities: say so once.
			p.mu.Lock()
			if !p.keepUser {
				p.keepUser = true
				p.log.Warn("script sandbox: cannot run as the unprivileged user; sandboxes keep the worker's user without capabilities", "user", p.user, "error", err)
			}
			keep = true
			p.mu.Unlock()
			continue
		}
		var se *startError
		if !errors.As(err, &se) || level == len(isolations)-1 {
			return nil, err
		}
		// The system refused this isolation (no privilege for namespaces): use the next one.
		p.mu.Lock()
		if p.isolation == level {
			p.isolation = level + 1
			p.log.Info("script sandbox: falling back to weaker isolation", "unavailable", isolations[level].name, "error", se.err, "using", isolations[level+1].name)
		}
		level = p.isolation
		p.mu.Unlock()
	}
}

// noteConfinement logs the first sandbox's confinement, and what it could not apply (warned
// once: a sandbox runs anyway). p.mu is held.
func (p *Pool) noteConfinement(c *Confinement) {
	if c == nil || p.conf != nil {
		return
	}
	p.conf = c
	st := c.Status
	p.log.Info("script sandbox confined", "uid", st["Uid"], "capabilities", st["CapEff"], "bounding", st["CapBnd"],
		"no_new_privs", st["NoNewPrivs"], "seccomp", st["Seccomp"], "socket", c.Socket)
	if len(c.Problems) > 0 {
		p.log.Warn("script sandbox: not every restriction applies here", "problems", strings.Join(c.Problems, "; "))
	}
}

// PeakRunning is the most scripts of one user (of one organization) that held a sandbox of this
// pool at once: the per-user limit (SANDBOX_MAX_PER_USER) as it held, for operators and tests.
func (p *Pool) PeakRunning(org, user string) int { return p.queue.peak(org, user) }

// Confinement is what the first sandbox reported of its privileges (nil before one started).
func (p *Pool) Confinement() *Confinement {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conf
}

// Isolation names how sandboxes are isolated on this system (after the first start).
func (p *Pool) Isolation() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return isolations[p.isolation].name
}

func (p *Pool) retire(pr *proc) {
	p.mu.Lock()
	delete(p.procs, pr)
	p.mu.Unlock()
	pr.stop()
}
