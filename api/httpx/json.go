package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// DecodeJSON reads a JSON object body strictly: unknown fields, trailing data, a body over
// maxBytes and malformed JSON are 400s that say what is wrong.
func DecodeJSON(c *gin.Context, maxBytes int64, dst any) bool {
	if ct := c.ContentType(); ct != "" && ct != "application/json" {
		Fail(c, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		return false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			BadRequest(c, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", maxBytes))
			return false
		}
		BadRequest(c, "invalid_json", "request body could not be read")
		return false
	}
	// Postgres stores neither NUL characters (text, jsonb) nor invalid UTF-8: refuse them here
	// with a 400 rather than let the database turn them into a 503.
	if !utf8.Valid(raw) {
		BadRequest(c, "invalid_text", "request body is not valid UTF-8")
		return false
	}
	if bytes.Contains(raw, []byte(`\u0000`)) && hasNUL(raw) {
		BadRequest(c, "invalid_text", "request body contains a NUL character (\\u0000)")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooBig *http.MaxBytesError
		var syntax *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			BadRequest(c, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", maxBytes))
		case errors.Is(err, io.EOF):
			BadRequest(c, "invalid_json", "request body is empty; expected a JSON object")
		case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
			BadRequest(c, "invalid_json", "request body is not valid JSON")
		case errors.As(err, &typeErr):
			BadRequest(c, "invalid_json", fmt.Sprintf("field %q must be of type %s", typeErr.Field, typeErr.Type))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			BadRequest(c, "unknown_field", "unknown field "+strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			BadRequest(c, "invalid_json", "request body is not a valid JSON object")
		}
		return false
	}
	if dec.More() {
		BadRequest(c, "invalid_json", "request body has data after the JSON object")
		return false
	}
	return true
}

// hasNUL reports whether any string (or key) of a JSON document holds a NUL character. Only
// called when the raw text has "\u0000", which may also be an escaped backslash before "u0000".
func hasNUL(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // not JSON: the strict decode says so
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

// TextOK reports whether s can be stored as Postgres text: valid UTF-8 without NUL.
func TextOK(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// ValidText refuses a path or query that Postgres could not store (NUL, invalid UTF-8) with a
// 400 before any handler runs, so no route turns it into a database error.
func ValidText(c *gin.Context) {
	if !TextOK(c.Request.URL.Path) {
		BadRequest(c, "invalid_text", "the path contains a NUL character or invalid UTF-8")
		return
	}
	for _, vs := range c.Request.URL.Query() {
		for _, v := range vs {
			if !TextOK(v) {
				BadRequest(c, "invalid_text", "a query parameter contains a NUL character or invalid UTF-8")
				return
			}
		}
	}
	c.Next()
}
