package ops

import (
	"net/http"
	"regexp"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
)

// userName is what the development sign-in accepts as a user ID.
var userName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$`)

type devTokenRequest struct {
	User string `json:"user"`
}

// devToken signs a user in on a development server: whoever can reach it may act as anyone,
// which is what a development stack is for. Production never routes it.
func (s *Handler) devToken(c *gin.Context) {
	var req devTokenRequest
	if !httpx.DecodeJSON(c, 1<<10, &req) {
		return
	}
	if !userName.MatchString(req.User) {
		httpx.BadRequest(c, "invalid_user", "user must be 1 to 100 letters, digits or . _ @ - (starting with a letter or digit)")
		return
	}
	tok, exp, err := s.DevTokens(req.User)
	if err != nil {
		s.Log.Error("mint development token", "error", err)
		httpx.Unavailable(c, "token signing")
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"token": tok, "user": req.User, "expires_at": exp})
}
