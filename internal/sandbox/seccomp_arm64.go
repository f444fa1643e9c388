//go:build linux

package sandbox

// deniedSyscalls are refused with EPERM in a sandbox (seccompFilter).
var deniedSyscalls = commonDenied
