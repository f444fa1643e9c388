package store

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Postgres stores neither NUL characters nor invalid UTF-8, in text or jsonb: such a write fails
// every time it is tried, and a retried write that can never succeed wedges whatever waits for
// it. Text that comes from outside our control (model output, tool results, SAP data) passes
// through these on its way into a row, so the write succeeds with U+FFFD in place of what could
// not be stored. Callers that must refuse such text (API input, tool arguments) check it before.

// replacement stands for a character Postgres cannot store.
const replacement = "\uFFFD"

// CleanText returns s with every NUL and every invalid UTF-8 sequence replaced by U+FFFD.
func CleanText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, replacement), "\x00", replacement)
}

// CleanJSON returns a JSON document jsonb accepts: every \u0000 escape in its strings becomes
// \ufffd, and invalid UTF-8 becomes U+FFFD. An escaped backslash before "u0000" is text, not NUL,
// and stays.
func CleanJSON(raw json.RawMessage) json.RawMessage {
	s := string(raw)
	if !strings.Contains(s, `\u0000`) && utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return raw
	}
	s = strings.ToValidUTF8(s, replacement)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			b.WriteString(replacement)
			continue
		}
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && strings.HasPrefix(s[i+2:], "0000") {
			b.WriteString(`\ufffd`)
			i += 5
			continue
		}
		b.WriteString(s[i : i+2]) // any other escape, \\ included, is copied whole
		i++
	}
	return json.RawMessage(b.String())
}

// HasNUL reports whether s holds a NUL character.
func HasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// IsDataError reports whether Postgres refused a value itself (SQLSTATE class 22: a character
// it cannot store, a value out of range…): trying the same write again fails the same way.
func IsDataError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22")
}
