package store

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Cursor marks a position in a list ordered by (created_at DESC, id DESC). Clients see it
// as an opaque string.
type Cursor struct {
	CreatedAt time.Time `json:"t"`
	ID        uuid.UUID `json:"i"`
}

// ErrBadCursor means a cursor string was not produced by this API.
var ErrBadCursor = errors.New("cursor is not valid; use next_cursor from the previous page")

// Encode renders the cursor for a response's next_cursor.
func (c Cursor) Encode() string {
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// DecodeCursor parses a cursor; "" is the first page (nil).
func DecodeCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	var c Cursor
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == uuid.Nil {
		return nil, ErrBadCursor
	}
	return &c, nil
}

// cursorArgs returns the (created_at, id) bound for "rows after the cursor" in DESC order;
// the first page uses a bound past every row.
func cursorArgs(c *Cursor) (time.Time, uuid.UUID) {
	if c == nil {
		return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), uuid.Max
	}
	return c.CreatedAt, c.ID
}

// Bound is cursorArgs for the lists other packages own (the SAP index's sync runs).
func (c *Cursor) Bound() (time.Time, uuid.UUID) { return cursorArgs(c) }
