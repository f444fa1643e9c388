//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/script"
)

// procStatus reads the lines of a /proc/…/status file.
func procStatus(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

const noCapabilities = "0000000000000000"

// Issue 18, finding 8: a root worker's sandbox kept every capability and had no syscall filter.
// Now it runs as nobody with no capability in any set (bounding included), no_new_privs and a
// seccomp filter on every thread, and cannot open a socket; scripts still run.
func TestARootWorkersSandboxRunsUnprivilegedWithASyscallFilter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the privilege drop applies when the worker runs as root")
	}
	for _, tc := range []struct {
		name string
		o    Options
		id   string
	}{
		{"nobody by default", Options{Size: 1}, "65534"},
		{"a configured user", Options{Size: 1, UID: 4321, GID: 4322}, "4321"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, tc.o)
			pid := strconv.Itoa(waitPids(t, p, 1)[0])
			res, err := p.Run(context.Background(), "result = 6 * 7", nil, nil, script.Limits{})
			require.NoError(t, err)
			assert.Equal(t, int64(42), res.Value)

			conf := p.Confinement()
			require.NotNil(t, conf)
			assert.Empty(t, conf.Problems)
			assert.Equal(t, "refused", conf.Socket, "a socket cannot be opened")
			gid := strconv.Itoa(tc.o.GID)
			if tc.o.GID == 0 {
				gid = "65534"
			}
			want := map[string]string{"Uid": strings.Repeat(tc.id+" ", 3) + tc.id, "Gid": strings.Repeat(gid+" ", 3) + gid,
				"CapEff": noCapabilities, "CapPrm": noCapabilities, "CapBnd": noCapabilities, "CapAmb": noCapabilities,
				"NoNewPrivs": "1", "Seccomp": "2"}
			assert.Equal(t, want, conf.Status, "what the sandbox reports of itself")

			// Every thread of the process, seen from outside.
			tasks, err := filepath.Glob("/proc/" + pid + "/task/*/status")
			require.NoError(t, err)
			require.NotEmpty(t, tasks)
			for _, task := range tasks {
				st := procStatus(t, task)
				for k, v := range want {
					assert.Equal(t, v, st[k], "%s of %s", k, task)
				}
			}
		})
	}
}
