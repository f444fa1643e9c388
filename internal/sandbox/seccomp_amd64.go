//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// deniedSyscalls are refused with EPERM in a sandbox (seccompFilter).
var deniedSyscalls = append(commonDenied,
	unix.SYS_ACCEPT, unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MKNOD,
	unix.SYS_USELIB, unix.SYS_MODIFY_LDT)
