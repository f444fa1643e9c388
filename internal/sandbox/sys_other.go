//go:build !linux

package sandbox

import (
	"os"
	"syscall"
	"time"
)

// Outside Linux a sandbox is a plain child process: no namespaces, no address-space limit and
// no memory watchdog (development machines only; workers run on Linux).
var isolations = []struct {
	name string
	attr func() *syscall.SysProcAttr
}{
	{"no namespace", func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }},
}

func executable() (string, error) { return os.Executable() }

func confine(problems []string) (*Confinement, error) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	return &Confinement{Problems: append(problems, "no privilege drop or syscall filter outside Linux")}, nil
}

func dropPrivileges() []string { return nil }

// argKeep: see privs_linux.go (nothing is dropped here anyway).
const argKeep = "keep"

func limitMemory(uint64) error { return nil }

func limitCPU(time.Duration) {}

func closeInherited() {}

func rss(int) uint64 { return 0 }
