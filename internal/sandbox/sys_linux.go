package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// isolations are the ways a sandbox is started, strongest first: its own network namespace
// (no interfaces but a down loopback; needs root or CAP_SYS_ADMIN), the same inside a new user
// namespace (unprivileged, where the kernel allows it), and neither (the interpreter has no
// network functions; the limits below still apply).
var isolations = []struct {
	name string
	attr func() *syscall.SysProcAttr
}{
	{"network namespace", func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWNET}
	}},
	{"user and network namespace", func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}}
	}},
	{"no namespace", func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }},
}

// executable is what a pool re-executes: the running binary itself, even if the file on disk
// has been replaced by a deploy since the worker started.
func executable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// confine applies the sandbox's fixed limits to itself: no core dumps (they would hold
// customer data), no files written, no new privileges, and no descriptors left to open files
// or sockets with. A process-count limit (RLIMIT_NPROC) is left out: it counts every process of
// the user and is not enforced for root; scripts cannot start processes anyway. The memory
// and CPU limits are set per script (limitMemory, limitCPU).
func confine(problems []string) (*Confinement, error) {
	set := func(name string, res int, v uint64) error {
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, 38 /* PR_SET_NO_NEW_PRIVS */, 1, 0, 0, 0, 0); errno != 0 {
		return nil, fmt.Errorf("no_new_privs: %w", errno)
	}
	// The syscall filter applies to every thread (and sets no_new_privs on each).
	if err := seccompFilter(); err != nil {
		problems = append(problems, err.Error())
	}
	// Before the descriptor limit, which alone would make a socket fail.
	conf := &Confinement{Socket: probeSocket(), Status: ownStatus(), Problems: problems}
	if err := set("RLIMIT_CORE", syscall.RLIMIT_CORE, 0); err != nil {
		return nil, err
	}
	if err := set("RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, 0); err != nil {
		return nil, err
	}
	var err error
	if statm, err = os.Open("/proc/self/statm"); err != nil { // kept open: nothing can be opened later
		return nil, err
	}
	return conf, set("RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, uint64(openFiles()))
}

// statm is the sandbox's own /proc/self/statm, opened before the descriptor limit.
var statm *os.File

// limitMemory caps the sandbox's address space at its current size plus room for a script.
// Go maps address space in 64 MiB arenas and keeps what it mapped, so this is a backstop
// (it stops a single huge allocation at once); the parent's watch on resident memory enforces
// the limit itself. Only the soft limit moves, so it can be set again for every script.
func limitMemory(room uint64) error {
	size, err := statmPages(statm, 0)
	if err != nil {
		return err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return err
	}
	lim.Cur = min(size+room, lim.Max)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
}

// closeInherited closes the descriptors the worker inherited from whatever started it (exec
// passes those on); the Go runtime's own (its poller, cgroup files) stay open.
func closeInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") {
			continue // the listing's own descriptor (closed by now), or the runtime's
		}
		_ = syscall.Close(fd)
	}
}

// openFiles is one more than the highest open descriptor, so nothing new can be opened.
func openFiles() int {
	highest := 2
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 16
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= highest {
			continue
		}
		// The directory's own descriptor is listed but closed by now.
		if _, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); errno == 0 {
			highest = fd
		}
	}
	return highest + 1
}

// limitCPU lets the sandbox use d more CPU time from now; past it the kernel sends SIGXCPU.
// Only the soft limit moves (raising it needs no privilege), so it can be set again for every
// script; the parent's wall-clock kill is the hard stop.
func limitCPU(d time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CPU, &lim); err != nil {
		return
	}
	lim.Cur = min(uint64((used+d)/time.Second)+1, lim.Max)
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}

// rss is the resident memory of process pid in bytes (0 if unknown).
func rss(pid int) uint64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	defer f.Close()
	v, _ := statmPages(f, 1)
	return v
}

// statmPages reads field i of a statm file (0: size, 1: resident) in bytes.
func statmPages(f *os.File, i int) (uint64, error) {
	var buf [128]byte
	n, err := f.ReadAt(buf[:], 0)
	if n == 0 {
		return 0, err
	}
	fields := strings.Fields(string(buf[:n]))
	if len(fields) <= i {
		return 0, fmt.Errorf("statm: %q", buf[:n])
	}
	pages, err := strconv.ParseUint(fields[i], 10, 64)
	return pages * uint64(os.Getpagesize()), err
}
