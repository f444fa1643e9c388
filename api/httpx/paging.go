package httpx

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/internal/store"
)

const (
	defaultPageSize = 100
	maxPageSize     = 500
)

// PageParams reads ?limit= and, when seqCursor, ?cursor= as the last seq of the previous page.
func PageParams(c *gin.Context, seqCursor bool) (after int64, limit int, ok bool) {
	limit = defaultPageSize
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			BadRequest(c, "invalid_limit", fmt.Sprintf("limit must be an integer from 1 to %d", maxPageSize))
			return 0, 0, false
		}
		limit = n
	}
	if v := c.Query("cursor"); seqCursor && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			BadRequest(c, "invalid_cursor", "cursor is not valid; use next_cursor from the previous page")
			return 0, 0, false
		}
		after = n
	}
	return after, limit, true
}

// Page writes the list envelope; next is the cursor of the last item when more exist.
func Page[T any](c *gin.Context, items []T, limit int, cursorOf func(T) store.Cursor) {
	hasMore := len(items) > limit
	if hasMore {
		items = items[:limit]
	}
	var next any
	if hasMore {
		next = cursorOf(items[len(items)-1]).Encode()
	}
	c.JSON(http.StatusOK, gin.H{"data": items, "next_cursor": next, "has_more": hasMore})
}

// ListParams reads ?cursor= (opaque) and ?limit=.
func ListParams(c *gin.Context) (*store.Cursor, int, bool) {
	_, limit, ok := PageParams(c, false)
	if !ok {
		return nil, 0, false
	}
	cur, err := store.DecodeCursor(c.Query("cursor"))
	if err != nil {
		BadRequest(c, "invalid_cursor", err.Error())
		return nil, 0, false
	}
	return cur, limit, true
}

// All wraps an unpaginated list in the list envelope.
func All[T any](c *gin.Context, items []T) {
	c.JSON(http.StatusOK, gin.H{"data": items, "next_cursor": nil, "has_more": false})
}
