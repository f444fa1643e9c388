package httpx

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// UUIDParam parses a path parameter or answers 400.
func UUIDParam(c *gin.Context, name, what string) (uuid.UUID, bool) {
	id, err := uuid.Parse(c.Param(name))
	if err != nil {
		BadRequest(c, "invalid_id", what+" id is not a UUID")
		return id, false
	}
	return id, true
}

// RequiredName trims and checks a required name field.
func RequiredName(c *gin.Context, field, value string, max int) (string, bool) {
	value = strings.TrimSpace(value)
	switch {
	case value == "":
		BadRequest(c, "missing_field", field+" is required")
		return "", false
	case utf8.RuneCountInString(value) > max:
		BadRequest(c, "too_long", fmt.Sprintf("%s is longer than %d characters", field, max))
		return "", false
	case !utf8.ValidString(value) || strings.ContainsAny(value, "\x00\r\n"):
		BadRequest(c, "invalid_field", field+" contains control characters")
		return "", false
	}
	return value, true
}

// UserIDField validates a user id given in a body or path (the identity provider's subject).
func UserIDField(c *gin.Context, value string) (string, bool) {
	return RequiredName(c, "user_id", value, 200)
}
