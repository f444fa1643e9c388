package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// decodeJSON reads a JSON object body strictly: unknown fields, trailing data, a body over
// maxBytes and malformed JSON are 400s that say what is wrong.
func decodeJSON(c *gin.Context, maxBytes int64, dst any) bool {
	if ct := c.ContentType(); ct != "" && ct != "application/json" {
		fail(c, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooBig *http.MaxBytesError
		var syntax *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			badRequest(c, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", maxBytes))
		case errors.Is(err, io.EOF):
			badRequest(c, "invalid_json", "request body is empty; expected a JSON object")
		case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
			badRequest(c, "invalid_json", "request body is not valid JSON")
		case errors.As(err, &typeErr):
			badRequest(c, "invalid_json", fmt.Sprintf("field %q must be of type %s", typeErr.Field, typeErr.Type))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			badRequest(c, "unknown_field", "unknown field "+strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			badRequest(c, "invalid_json", "request body is not a valid JSON object")
		}
		return false
	}
	if dec.More() {
		badRequest(c, "invalid_json", "request body has data after the JSON object")
		return false
	}
	return true
}
