package testenv

import (
	"testing"
)

// recorder is a testing.TB that records whether Missing skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestMissingSkipsOutsideCIAndFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Missing(r, "redis-server is not installed")
	if !r.skipped || r.failed {
		t.Fatalf("without CI: skipped=%v failed=%v, want a skip", r.skipped, r.failed)
	}
	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Missing(r, "redis-server is not installed")
	if !r.failed || r.skipped {
		t.Fatalf("under CI: skipped=%v failed=%v, want a failure", r.skipped, r.failed)
	}
}
