package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sapagent/sapagent/internal/script"
)

// The parent and a sandbox process exchange frames over the child's stdin and stdout: a 4-byte
// big-endian length, then one JSON message.
//
//	parent → child: config (once), then per script: run, reply (per helper call), cancel
//	child → parent: ready (once), then per script: call (per helper call), done
//
// Every per-script message carries the run's number, so a late reply to an abandoned call
// cannot be taken for an answer in the next script.
const (
	msgConfig = "config"
	msgReady  = "ready"
	msgRun    = "run"
	msgCall   = "call"
	msgReply  = "reply"
	msgCancel = "cancel"
	msgDone   = "done"
)

// maxChildFrame bounds what the parent reads from a sandbox in one frame (a script's output
// and result are bounded far below it; a larger frame is a broken sandbox).
const maxChildFrame = 64 << 20

type message struct {
	Type string `json:"t"`
	Run  int    `json:"run,omitempty"`

	// config
	MemoryBytes uint64 `json:"mem,omitempty"`

	// ready
	Confinement *Confinement `json:"confinement,omitempty"`

	// run
	Code        string         `json:"code,omitempty"`
	Helpers     []helper       `json:"helpers,omitempty"`
	SameHelpers bool           `json:"same_helpers,omitempty"` // the helpers of the previous run
	Limits      *script.Limits `json:"limits,omitempty"`
	// Deadline is the caller's deadline when it comes before the script's own time limit
	// (the parent and its sandboxes share the clock).
	Deadline time.Time `json:"deadline,omitzero"`

	// call, reply
	N      int             `json:"n,omitempty"`
	Helper string          `json:"helper,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"` // reply: the helper's result; done: the script's result
	Error  string          `json:"error,omitempty"` // reply: the helper's error; done: the script's; cancel: why

	// done
	Output string `json:"output,omitempty"`
}

// Confinement is what a sandbox reports of its own privileges once confined.
type Confinement struct {
	// Status holds lines of its /proc/self/status: Uid, Gid, CapEff, CapPrm, CapBnd, CapAmb,
	// NoNewPrivs and Seccomp (2: a filter applies).
	Status map[string]string `json:"status,omitempty"`
	// Socket is what opening a TCP socket gave: "refused" (EPERM) with the syscall filter.
	Socket string `json:"socket,omitempty"`
	// Problems name what could not be applied (the sandbox runs anyway; the pool logs them once).
	Problems []string `json:"problems,omitempty"`
}

// helper is what a sandbox needs of a script.Helper to run it.
type helper struct {
	Name       string `json:"name"`
	Parameters string `json:"parameters,omitempty"`
}

// frameWriter writes frames; safe for concurrent use.
type frameWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newFrameWriter(w io.Writer) *frameWriter { return &frameWriter{w: bufio.NewWriter(w)} }

func (f *frameWriter) write(m message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var head [4]byte
	binary.BigEndian.PutUint32(head[:], uint32(len(body)))
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.w.Write(head[:]); err != nil {
		return err
	}
	if _, err := f.w.Write(body); err != nil {
		return err
	}
	return f.w.Flush()
}

// readFrame reads one frame of at most max bytes (0: no limit).
func readFrame(r *bufio.Reader, max int) (message, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return message{}, err
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if max > 0 && n > max {
		return message{}, fmt.Errorf("frame of %d bytes exceeds %d", n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return message{}, err
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return message{}, fmt.Errorf("malformed frame: %w", err)
	}
	return m, nil
}

// decodeValue decodes JSON into the values scripts exchange (script.Call's contract): integers
// as int64 (json.Number when too large), other numbers as float64.
func decodeValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			if f, err := v.Float64(); err == nil {
				return f
			}
			return v
		}
		if i, err := v.Int64(); err == nil {
			return i
		}
		return v
	case []any:
		for i := range v {
			v[i] = numbers(v[i])
		}
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	}
	return v
}
