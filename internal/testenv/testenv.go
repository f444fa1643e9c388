// Package testenv decides what a test does when a program it drives (a server binary to break,
// Node.js for the ABAP oracle) is not installed on the machine running it.
package testenv

import (
	"os"
	"testing"
)

// Missing skips the test with reason on a developer's machine. Under CI (the CI variable set, as
// .ci/run does) the program is part of the machine CI promises, so the test fails instead of
// passing unnoticed as skipped.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set: this test must run here, not be skipped)", reason)
		return
	}
	t.Skip(reason)
}
