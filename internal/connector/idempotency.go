package connector

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Idempotency window and size: a key is remembered 24 h after its last use (the protocol's
// minimum), at most MaxIdempotencyKeys keys in all (the least recently used go first).
const (
	IdempotencyWindow  = 24 * time.Hour
	MaxIdempotencyKeys = 100_000
)

// Answer is a remembered first answer: HTTP status and body.
type Answer struct {
	Scope    string          `json:"scope"`
	BodyHash string          `json:"body"`
	Status   int             `json:"status"`
	Data     json.RawMessage `json:"answer"`
	UsedAt   time.Time       `json:"used_at"`
}

// errKeyReused is a key repeated with another body.
var errKeyReused = errors.New("idempotency key reused with a different request body")

// IdempotencyStore keeps the first answer of each keyed write in an append-only JSON-lines file
// (fsynced per answer, so an answer SAP gave survives a crash of the connector) and in memory.
// The file is compacted when it holds more than twice the live answers.
type IdempotencyStore struct {
	path string
	now  func() time.Time

	mu       sync.Mutex
	answers  map[string]*Answer
	inflight map[string]chan struct{}
	file     *os.File
	lines    int
}

// OpenIdempotencyStore loads the store at path, creating it; "" keeps answers in memory only.
func OpenIdempotencyStore(path string) (*IdempotencyStore, error) {
	s := &IdempotencyStore{path: path, now: time.Now, answers: map[string]*Answer{}, inflight: map[string]chan struct{}{}}
	if path == "" {
		return s, nil
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	if err := s.compact(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *IdempotencyStore) load() error {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	defer f.Close()
	// bufio.Reader, not Scanner: a remembered answer may be larger than any fixed line limit.
	rd := bufio.NewReaderSize(f, 64<<10)
	cutoff := s.now().Add(-IdempotencyWindow)
	for {
		line, err := rd.ReadBytes('\n')
		var a Answer
		// A torn last line (a crash mid-write) is skipped: its write had not been answered.
		// The compaction after loading rewrites the file without it.
		if len(line) > 0 && json.Unmarshal(line, &a) == nil && a.Scope != "" {
			if a.UsedAt.Before(cutoff) {
				delete(s.answers, a.Scope)
			} else {
				s.answers[a.Scope] = &a
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("idempotency store %s: %w", s.path, err)
		}
	}
}

// compact rewrites the file with the live answers (temp file, fsync, rename).
func (s *IdempotencyStore) compact() error {
	if s.file != nil {
		_ = s.file.Close()
		s.file = nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	w := bufio.NewWriter(f)
	for _, a := range s.answers {
		line, _ := json.Marshal(a)
		_, _ = w.Write(append(line, '\n'))
	}
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	s.file, err = os.OpenFile(s.path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("idempotency store: %w", err)
	}
	s.lines = len(s.answers)
	return nil
}

// Close closes the file.
func (s *IdempotencyStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

// IdempotencyScope is one key as the protocol scopes it: per system, connector key and SAP user.
func IdempotencyScope(system, connectorKey, user, key string) string {
	h := sha256.New()
	for _, part := range []string{system, connectorKey, user, key} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// BodyHash is what a repeat's body is compared by.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Begin claims scope. It returns the first answer when there is one (and errKeyReused when that
// answer was for another body); otherwise finish must be called once with the answer (remember
// false: the request did not run, forget the claim). A concurrent claim of the same scope waits
// for the first to finish, or for ctx.
func (s *IdempotencyStore) Begin(ctx context.Context, scope, bodyHash string) (first *Answer, finish func(status int, data []byte, remember bool), err error) {
	for {
		s.mu.Lock()
		if a, ok := s.answers[scope]; ok {
			if a.BodyHash != bodyHash {
				s.mu.Unlock()
				return nil, nil, errKeyReused
			}
			a.UsedAt = s.now()
			s.mu.Unlock()
			return a, nil, nil
		}
		wait, busy := s.inflight[scope]
		if !busy {
			done := make(chan struct{})
			s.inflight[scope] = done
			s.mu.Unlock()
			var once sync.Once
			return nil, func(status int, data []byte, remember bool) {
				once.Do(func() { s.finish(scope, bodyHash, status, data, remember, done) })
			}, nil
		}
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func (s *IdempotencyStore) finish(scope, bodyHash string, status int, data []byte, remember bool, done chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(done)
	delete(s.inflight, scope)
	if !remember {
		return
	}
	a := &Answer{Scope: scope, BodyHash: bodyHash, Status: status, Data: append(json.RawMessage(nil), data...), UsedAt: s.now()}
	s.answers[scope] = a
	if len(s.answers) > MaxIdempotencyKeys {
		s.evictOldest(MaxIdempotencyKeys / 10)
	}
	if s.file == nil {
		return
	}
	line, _ := json.Marshal(a)
	// A failed append leaves the answer in memory: it still holds until a restart.
	if _, err := s.file.Write(append(line, '\n')); err == nil {
		_ = s.file.Sync()
		s.lines++
	}
	if s.lines > 2*len(s.answers)+1000 {
		_ = s.compact()
	}
}

func (s *IdempotencyStore) evictOldest(n int) {
	all := make([]*Answer, 0, len(s.answers))
	for _, a := range s.answers {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].UsedAt.Before(all[j].UsedAt) })
	for _, a := range all[:min(n, len(all))] {
		delete(s.answers, a.Scope)
	}
}
