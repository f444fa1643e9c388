package httpx

import (
	"time"

	"github.com/gin-gonic/gin"
)

// The authenticated caller, as the authentication middleware found it in the token.
const (
	userKey    = "sapagent.user"
	expiresKey = "sapagent.expires"
)

// SetCaller records the authenticated caller for the handlers after it.
func SetCaller(c *gin.Context, user string, expires time.Time) {
	c.Set(userKey, user)
	c.Set(expiresKey, expires)
}

// User is the authenticated caller (the token's sub).
func User(c *gin.Context) string { return c.GetString(userKey) }

// Expiry is when the caller's token expires (its exp claim): event streams end there.
func Expiry(c *gin.Context) time.Time { return c.GetTime(expiresKey) }
