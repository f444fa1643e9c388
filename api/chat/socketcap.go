package chat

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
)

// DefaultMaxSocketsPerUser applies when Server.MaxSocketsPerUser is unset.
const DefaultMaxSocketsPerUser = 20

// socketCount counts the open WebSockets and SSE streams of each user in this process. Each
// stream holds a Redis subscription share, a relay and buffers: without a cap one user could
// exhaust the process's memory and file descriptors.
type socketCount struct {
	mu   sync.Mutex
	open map[string]int
}

// socketSlot takes one of the caller's stream slots, or answers 429 too_many_sockets (before
// any upgrade, so clients see a plain HTTP refusal). release gives it back; call it once.
func (s *Streams) socketSlot(c *gin.Context) (release func(), ok bool) {
	limit := s.MaxSocketsPerUser
	if limit <= 0 {
		limit = DefaultMaxSocketsPerUser
	}
	user := httpx.User(c)
	sc := &s.sockets
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.open[user] >= limit {
		httpx.Fail(c, http.StatusTooManyRequests, "too_many_sockets",
			"at most "+strconv.Itoa(limit)+" open WebSocket/SSE streams per user on this server; close one first")
		return nil, false
	}
	if sc.open == nil {
		sc.open = map[string]int{}
	}
	sc.open[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if sc.open[user]--; sc.open[user] <= 0 {
				delete(sc.open, user)
			}
		})
	}, true
}
