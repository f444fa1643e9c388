//go:build linux && !amd64 && !arm64

package sandbox

// deniedSyscalls: no syscall filter is known for this architecture (seccompFilter says so).
var deniedSyscalls []int
