package connector

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/sapagent/sapagent/internal/sap"
)

// MaxChangeLogEntries bounds a change log: beyond it the oldest entries are dropped when the
// file is compacted (a consumer that far behind re-syncs in full; its after_seq still works).
const MaxChangeLogEntries = 1_000_000

// ChangeLog is the connector's own change log of one SAP system: SAP has no single change
// sequence, so the backend polls SAP's tables and appends what it finds; the log gives each entry
// the next seq. Entries and the poller's state (opaque JSON: watermarks, what it has seen) are
// kept in an append-only JSON-lines file, fsynced per append, so seqs survive a restart and are
// never handed out twice.
type ChangeLog struct {
	path string
	// base is the seq of the log's start: a new log is at 1 before its first entry, so a full
	// sync that reads change_seq before any change has a position a delta can start after
	// (after_seq 0 would mean "everything"). The first entry is base+1.
	base int64

	mu      sync.Mutex
	entries []sap.Change
	state   json.RawMessage
	file    *os.File
	lines   int
}

// logLine is one line of the file: appended changes or a new poller state.
type logLine struct {
	Base    int64           `json:"base,omitempty"`
	Changes []sap.Change    `json:"changes,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
}

// OpenChangeLog loads the log at path, creating it; "" keeps it in memory only.
func OpenChangeLog(path string) (*ChangeLog, error) {
	l := &ChangeLog{path: path, base: 1}
	if path == "" {
		return l, nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("change log: %w", err)
	default:
		rd := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				var ll logLine
				// A line cut by a crash mid-write is the last one: what it held was never answered.
				if json.Unmarshal(line, &ll) == nil {
					l.apply(ll)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("change log: %w", err)
			}
		}
		f.Close()
	}
	if err := l.compact(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *ChangeLog) apply(ll logLine) {
	if ll.Base > 0 {
		l.base = ll.Base
	}
	for _, c := range ll.Changes {
		if n := len(l.entries); n == 0 || c.Seq > l.entries[n-1].Seq {
			l.entries = append(l.entries, c)
		}
	}
	if len(ll.State) > 0 {
		l.state = ll.State
	}
}

// compact rewrites the file with one line of entries (the newest MaxChangeLogEntries) and the state.
func (l *ChangeLog) compact() error {
	if l.path == "" {
		return nil
	}
	if n := len(l.entries); n > MaxChangeLogEntries {
		l.entries = append([]sap.Change(nil), l.entries[n-MaxChangeLogEntries:]...)
	}
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	err = enc.Encode(logLine{Base: l.base, Changes: l.entries, State: l.state})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	if l.file != nil {
		l.file.Close()
	}
	l.file, err = os.OpenFile(l.path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("change log: %w", err)
	}
	l.lines = 1
	return nil
}

// Append gives the changes the next seqs and records them together with the poller's new
// state in one fsynced line: a crash keeps both or neither. It returns the entries as stored.
func (l *ChangeLog) Append(changes []sap.Change, state json.RawMessage) ([]sap.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.latest() + 1
	stored := make([]sap.Change, len(changes))
	for i, c := range changes {
		c.Seq = next + int64(i)
		stored[i] = c
	}
	if l.file != nil {
		raw, err := json.Marshal(logLine{Changes: stored, State: state})
		if err != nil {
			return nil, err
		}
		if _, err := l.file.Write(append(raw, '\n')); err != nil {
			return nil, fmt.Errorf("change log: %w", err)
		}
		if err := l.file.Sync(); err != nil {
			return nil, fmt.Errorf("change log: %w", err)
		}
		l.lines++
	}
	l.entries = append(l.entries, stored...)
	if len(state) > 0 {
		l.state = state
	}
	if l.lines > 1000 || len(l.entries) > MaxChangeLogEntries+MaxChangeLogEntries/10 {
		if err := l.compact(); err != nil {
			return stored, err
		}
	}
	return stored, nil
}

func (l *ChangeLog) latest() int64 {
	if n := len(l.entries); n > 0 {
		return l.entries[n-1].Seq
	}
	return l.base
}

// Latest is the newest seq (the log's start, 1, while it has no entry).
func (l *ChangeLog) Latest() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest()
}

// State is the poller's last recorded state (nil: none yet).
func (l *ChangeLog) State() json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// After returns up to limit entries with seq > after, oldest first, and whether more follow.
func (l *ChangeLog) After(after int64, limit int) ([]sap.Change, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.index(after)
	end := len(l.entries)
	more := false
	if limit > 0 && end-i > limit {
		end, more = i+limit, true
	}
	return append([]sap.Change(nil), l.entries[i:end]...), more
}

// index is the position of the first entry with seq > after.
func (l *ChangeLog) index(after int64) int {
	lo, hi := 0, len(l.entries)
	for lo < hi {
		m := (lo + hi) / 2
		if l.entries[m].Seq <= after {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Close closes the file.
func (l *ChangeLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	return err
}
