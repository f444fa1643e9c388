package api

import (
	"fmt"
	"strconv"

	"github.com/gin-gonic/gin"
)

const (
	defaultPageSize = 100
	maxPageSize     = 500
)

// pageParams reads ?limit= and, when seqCursor, ?cursor= as the last seq of the previous page.
func pageParams(c *gin.Context, seqCursor bool) (after int64, limit int, ok bool) {
	limit = defaultPageSize
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			badRequest(c, "invalid_limit", fmt.Sprintf("limit must be an integer from 1 to %d", maxPageSize))
			return 0, 0, false
		}
		limit = n
	}
	if v := c.Query("cursor"); seqCursor && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequest(c, "invalid_cursor", "cursor is not valid; use next_cursor from the previous page")
			return 0, 0, false
		}
		after = n
	}
	return after, limit, true
}
