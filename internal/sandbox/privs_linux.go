package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A sandbox started as root gives its privileges away before it serves anything, in two steps,
// because Linux keeps capabilities, their bounding set and no_new_privs per thread and the Go
// runtime has started several threads by then:
//
//  1. on the main thread (package initialisation runs there): empty the capability bounding
//     and ambient sets, switch to the unprivileged user and group (SANDBOX_UID, SANDBOX_GID;
//     default nobody, 65534), set no_new_privs, and execute the binary again from an open
//     descriptor (its directory may be closed to that user);
//  2. the new image's threads all descend from that thread, so none holds a capability or can
//     gain one. Its confine then applies a seccomp filter to every thread (seccompFilter).
//
// What could not be applied is reported to the pool, which logs it once; the sandbox goes on.
const (
	argConfined = "confined" // argv[2] of step 2; then each problem of step 1
	argKeep     = "keep"     // argv[2]: do not change user (the pool's fallback)
)

// dropPrivileges is step 1; it returns (having changed nothing) when there is nothing to drop
// or this is step 2 already, and the problems step 1 found.
func dropPrivileges() (problems []string) {
	args := os.Args
	if len(args) >= 3 && args[2] == argConfined {
		return args[3:]
	}
	if os.Getuid() != 0 && os.Geteuid() != 0 {
		return nil // nothing to give away
	}
	if len(args) >= 3 && args[2] == argKeep {
		return []string{"runs as root: changing user failed before (see the worker's log)"}
	}
	uid, gid := parseIDs(args)
	runtime.LockOSThread() // already so during initialisation; this thread is the one executed again
	exe, err := unix.Open("/proc/self/exe", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return []string{"runs as root: cannot open its own executable: " + err.Error()}
	}
	var st unix.Stat_t
	switchUser := true
	if err := unix.Fstat(exe, &st); err != nil || !executableBy(st, uid, gid) {
		switchUser = false
		problems = append(problems, fmt.Sprintf("runs as root without capabilities: the binary is not executable by uid %d", uid))
	}
	for c := 0; c <= 63; c++ {
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0); e == unix.EINVAL {
			break // past the last capability this kernel knows
		} else if e != 0 {
			problems = append(problems, "capability bounding set: "+e.Error())
			break
		}
	}
	_, _, _ = unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	changed := false
	if switchUser {
		// Raw calls change this thread only: the others end with the exec below.
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			problems = append(problems, "setgroups: "+e.Error())
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
			problems = append(problems, fmt.Sprintf("setresgid %d: %v", gid, e))
		} else {
			changed = true
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
			problems = append(problems, fmt.Sprintf("setresuid %d: %v", uid, e))
		} else {
			changed = true
		}
	}
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
		problems = append(problems, "no_new_privs: "+e.Error())
	}
	err = execveat(exe, append([]string{args[0], "sandbox", argConfined}, problems...), os.Environ())
	// Still here: the exec failed.
	if changed {
		// Only this thread changed user: the process must not go on half-privileged.
		fmt.Fprintln(os.Stderr, "sandbox: cannot execute itself after dropping privileges:", err)
		os.Exit(exitPrivileges)
	}
	return append(problems, "cannot execute itself to drop privileges: "+err.Error())
}

// parseIDs reads "uid:gid" from argv[2] (nobody's without).
func parseIDs(args []string) (uid, gid int) {
	uid, gid = DefaultUID, DefaultGID
	if len(args) < 3 {
		return uid, gid
	}
	u, g, ok := strings.Cut(args[2], ":")
	if !ok {
		return uid, gid
	}
	if n, err := strconv.Atoi(u); err == nil && n >= 0 {
		uid = n
	}
	if n, err := strconv.Atoi(g); err == nil && n >= 0 {
		gid = n
	}
	return uid, gid
}

// executableBy reports whether uid:gid may execute the file (as the kernel would check it).
func executableBy(st unix.Stat_t, uid, gid int) bool {
	switch {
	case int(st.Uid) == uid:
		return st.Mode&0o100 != 0
	case int(st.Gid) == gid:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}

func execveat(fd int, argv, envv []string) error {
	path, err := syscall.BytePtrFromString("")
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(envv)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(path)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return e
}

// seccompFilter denies a sandbox the system calls a script never needs and an attacker who
// subverted the interpreter would want — sockets, ptrace, mounts, namespaces, executing
// programs, kernel modules, keys, BPF, io_uring — with EPERM, on every thread (TSYNC). Calls
// from another architecture's ABI are denied too. The Go runtime needs none of them (clone3 gets
// ENOSYS, so a C library falls back to clone; clone itself may not make namespaces).
func seccompFilter() error {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok || len(deniedSyscalls) == 0 {
		return fmt.Errorf("no syscall filter for %s", runtime.GOARCH)
	}
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		stmt(ld, 4), // seccomp_data.arch
		jump(jeq, arch, 1, 0),
		stmt(ret, eperm),
		stmt(ld, 0),                 // seccomp_data.nr
		jump(jge, 0x40000000, 0, 1), // x32 numbers on amd64; none exist elsewhere
		stmt(ret, eperm),
	}
	for _, nr := range deniedSyscalls {
		prog = append(prog, jump(jeq, uint32(nr), 0, 1), stmt(ret, eperm))
	}
	namespaces := uint32(unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP)
	prog = append(prog,
		jump(jeq, uint32(unix.SYS_CLONE3), 0, 1), stmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)),
		jump(jeq, uint32(unix.SYS_CLONE), 0, 3),
		stmt(ld, 16), // the low half of args[0]: clone's flags (little-endian)
		jump(jset, namespaces, 0, 1), stmt(ret, eperm),
		stmt(ret, unix.SECCOMP_RET_ALLOW),
	)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronised", r)
	}
	return nil
}

var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}

// probeSocket tries to open a socket as an attacker would, and says what happened.
func probeSocket() string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		_ = unix.Close(fd)
		return "opened"
	}
	if errors.Is(err, unix.EPERM) {
		return "refused"
	}
	return "failed: " + err.Error()
}

// ownStatus reads the lines of /proc/self/status the pool reports.
func ownStatus() map[string]string {
	raw, err := os.ReadFile("/proc/self/status")
	out := map[string]string{}
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "Uid", "Gid", "CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp":
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}
