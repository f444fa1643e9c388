package adt

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/sapagent/sapagent/internal/sap"
)

// Typed failures a caller can test with errors.Is. Every *Error wraps one of them.
var (
	ErrNotSupported    = errors.New("adt: not supported by this SAP system")
	ErrNotFound        = errors.New("adt: object not found")
	ErrNoAccess        = errors.New("adt: missing authorization")
	ErrLockConflict    = errors.New("adt: object locked")
	ErrLogonFailed     = errors.New("adt: logon failed")
	ErrCSRF            = errors.New("adt: CSRF token refused")
	ErrUnavailable     = errors.New("adt: system unavailable")
	ErrTimeout         = errors.New("adt: timeout")
	ErrHTMLResponse    = errors.New("adt: SAP answered HTML instead of XML")
	ErrInvalidUTF8     = errors.New("adt: SAP answer is not valid UTF-8")
	ErrTooLarge        = errors.New("adt: SAP answer exceeds the size limit")
	ErrMalformed       = errors.New("adt: SAP answer does not parse")
	ErrSAPException    = errors.New("adt: SAP raised an exception")
	ErrRedirected      = errors.New("adt: SAP redirected the request")
	ErrBadRequestInput = errors.New("adt: invalid request")
)

// Error is a failed ADT call: the HTTP status SAP answered (0 when none), ADT's exception
// type id and message when the body was an exc:exception, and the kind (one of the Err* above).
type Error struct {
	Kind    error
	Status  int
	Type    string // exc:exception type id, e.g. ExceptionResourceNotFound
	Message string // localized message when SAP sent one
	Path    string // ADT path, never credentials
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Path != "" {
		s += " [" + e.Path + "]"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Kind }

// Protocol maps the failure onto the connector protocol's error (docs/connector-protocol.md).
func (e *Error) Protocol() *sap.Error {
	code, status := protocolCode(e.Kind)
	msg := e.Message
	if msg == "" {
		msg = e.Kind.Error()
	}
	return &sap.Error{Status: status, ErrorDetail: sap.ErrorDetail{Code: code, Message: msg, Exception: e.Type}}
}

func protocolCode(kind error) (string, int) {
	switch kind {
	case ErrNotSupported:
		return sap.ErrNotSupported, http.StatusUnprocessableEntity
	case ErrNotFound:
		return sap.ErrNotFound, http.StatusNotFound
	case ErrNoAccess:
		return sap.ErrAuthorization, http.StatusForbidden
	case ErrLogonFailed, ErrRedirected:
		return sap.ErrLogonFailed, http.StatusUnauthorized
	case ErrTimeout:
		return sap.ErrTimeout, http.StatusGatewayTimeout
	case ErrCSRF, ErrUnavailable, ErrHTMLResponse:
		return sap.ErrSystemUnavailable, http.StatusServiceUnavailable
	case ErrBadRequestInput:
		return sap.ErrBadRequest, http.StatusBadRequest
	}
	// Lock conflicts, ABAP exceptions and answers we cannot read are the system's doing but
	// retrying the same call will not help: 422.
	return sap.ErrSAPException, http.StatusUnprocessableEntity
}

// excException is ADT's error body (namespace http://www.sap.com/abapxml/types/communicationframework).
type excException struct {
	XMLName xml.Name `xml:"http://www.sap.com/abapxml/types/communicationframework exception"`
	Type    struct {
		ID string `xml:"id,attr"`
	} `xml:"type"`
	Message          string `xml:"message"`
	LocalizedMessage string `xml:"localizedMessage"`
}

// ParseException reads an exc:exception body; ok is false when the body is something else.
func ParseException(body []byte) (typeID, message string, ok bool) {
	var e excException
	if err := xml.Unmarshal(body, &e); err != nil {
		return "", "", false
	}
	msg := e.LocalizedMessage
	if msg == "" {
		msg = e.Message
	}
	return e.Type.ID, msg, true
}

// statusError builds the error for a non-2xx answer from its status, headers and body.
func statusError(path string, resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode, Path: path}
	if t, msg, ok := ParseException(body); ok {
		e.Type, e.Message = t, msg
	} else if isHTML(resp.Header.Get("Content-Type"), body) {
		e.Message = "HTTP " + resp.Status + " with an HTML page"
	}
	e.Kind = kindOf(resp.StatusCode, e.Type)
	if e.Kind == ErrRedirected && e.Message == "" {
		e.Message = fmt.Sprintf("HTTP %d to %q; the ICF service must accept Basic authentication", resp.StatusCode, resp.Header.Get("Location"))
	}
	if e.Message == "" {
		e.Message = "HTTP " + resp.Status
	}
	return e
}

// kindOf prefers ADT's exception type over the HTTP status: ADT answers a missing object with
// 404 and ExceptionResourceNotFound, a missing S_ADT_RES authorization with 403, a lock with 403
// or 409 and ExceptionResourceLockConflict.
func kindOf(status int, typeID string) error {
	switch typeID {
	case "ExceptionResourceNotFound":
		return ErrNotFound
	case "ExceptionResourceNoAccess", "ExceptionNotAuthorized":
		return ErrNoAccess
	case "ExceptionResourceLockConflict", "ExceptionResourceLocked", "ExceptionResourceInvalidLockHandle":
		return ErrLockConflict
	}
	switch {
	case status == http.StatusUnauthorized:
		return ErrLogonFailed
	case status == http.StatusForbidden:
		return ErrNoAccess
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusConflict || status == http.StatusLocked:
		return ErrLockConflict
	case status == http.StatusGatewayTimeout || status == http.StatusRequestTimeout:
		return ErrTimeout
	case status >= 300 && status < 400:
		return ErrRedirected
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable:
		return ErrUnavailable
	}
	return ErrSAPException
}
