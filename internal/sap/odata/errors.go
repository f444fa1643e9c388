package odata

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// Typed failures a caller can test with errors.Is. Every *Error wraps one of them.
var (
	ErrNotFound     = errors.New("odata: entity or service not found")
	ErrNoAccess     = errors.New("odata: missing authorization")
	ErrLogonFailed  = errors.New("odata: logon failed")
	ErrBadInput     = errors.New("odata: SAP refused the input")
	ErrConflict     = errors.New("odata: the entity was changed since it was read (ETag mismatch); read it again and repeat the change")
	ErrCSRF         = errors.New("odata: CSRF token refused")
	ErrUnavailable  = errors.New("odata: system unavailable")
	ErrHTMLResponse = errors.New("odata: SAP answered HTML instead of JSON")
	ErrTooLarge     = errors.New("odata: SAP answer exceeds the size limit")
	ErrMalformed    = errors.New("odata: SAP answer does not parse")
	ErrSAPException = errors.New("odata: SAP Gateway raised an error")
)

// Error is a failed OData call. Code and Message come from the Gateway error body when there
// was one; Field is the property SAP (or ValidateWrite) blamed. Path never holds credentials.
type Error struct {
	Kind    error
	Status  int
	Code    string // Gateway message code, e.g. SEPM_BO_COMMON/010
	Message string
	Field   string
	Details []ErrorDetail
	Path    string
}

// ErrorDetail is one entry of innererror.errordetails.
type ErrorDetail struct {
	Code        string `json:"code" xml:"code"`
	Message     string `json:"message" xml:"message"`
	PropertyRef string `json:"propertyref" xml:"propertyref"`
	Severity    string `json:"severity" xml:"severity"`
	Target      string `json:"target" xml:"target"`
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Code != "" {
		s += " (" + e.Code + ")"
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
// An ETag mismatch has no protocol code of its own: it is 409 SAP_EXCEPTION with exception
// PRECONDITION_FAILED.
func (e *Error) Protocol() *sap.Error {
	msg := e.Message
	if msg == "" {
		msg = e.Kind.Error()
	}
	if e.Field != "" && !strings.Contains(msg, e.Field) {
		msg = e.Field + ": " + msg
	}
	d := sap.ErrorDetail{Message: msg, Exception: e.Code}
	status := http.StatusUnprocessableEntity
	switch e.Kind {
	case ErrNotFound:
		d.Code, status = sap.ErrNotFound, http.StatusNotFound
	case ErrNoAccess:
		d.Code, status = sap.ErrAuthorization, http.StatusForbidden
	case ErrLogonFailed:
		d.Code, status = sap.ErrLogonFailed, http.StatusUnauthorized
	case ErrBadInput:
		d.Code, status = sap.ErrBadRequest, http.StatusBadRequest
	case ErrConflict:
		d.Code, status, d.Exception = sap.ErrSAPException, http.StatusConflict, "PRECONDITION_FAILED"
		d.Message = ErrConflict.Error()
	case ErrCSRF, ErrUnavailable, ErrHTMLResponse:
		d.Code, status = sap.ErrSystemUnavailable, http.StatusServiceUnavailable
	default:
		d.Code = sap.ErrSAPException
	}
	return &sap.Error{Status: status, ErrorDetail: d}
}

// kindForStatus is the typed failure of an HTTP status SAP Gateway answered.
func kindForStatus(status int) error {
	switch {
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusUnauthorized:
		return ErrLogonFailed
	case status == http.StatusForbidden:
		return ErrNoAccess
	case status == http.StatusPreconditionFailed:
		return ErrConflict
	case status == http.StatusBadRequest:
		return ErrBadInput
	case status == http.StatusServiceUnavailable, status == http.StatusBadGateway, status == http.StatusGatewayTimeout:
		return ErrUnavailable
	default:
		return ErrSAPException
	}
}

type jsonGatewayError struct {
	Error struct {
		Code    string `json:"code"`
		Message struct {
			Value string `json:"value"`
		} `json:"message"`
		InnerError struct {
			ErrorDetails []ErrorDetail `json:"errordetails"`
		} `json:"innererror"`
	} `json:"error"`
}

type xmlGatewayError struct {
	XMLName xml.Name      `xml:"error"`
	Code    string        `xml:"code"`
	Message string        `xml:"message"`
	Details []ErrorDetail `xml:"innererror>errordetails>errordetail"`
}

// ParseGatewayError reads a Gateway error body (JSON or XML) into an *Error with the kind of
// status. A body that is neither keeps only the status's kind.
func ParseGatewayError(status int, body []byte) *Error {
	e := &Error{Kind: kindForStatus(status), Status: status}
	trimmed := bytes.TrimSpace(body)
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")):
		var j jsonGatewayError
		if json.Unmarshal(trimmed, &j) == nil {
			e.Code, e.Message, e.Details = j.Error.Code, j.Error.Message.Value, j.Error.InnerError.ErrorDetails
		}
	case bytes.HasPrefix(trimmed, []byte("<")):
		var x xmlGatewayError
		if xml.Unmarshal(trimmed, &x) == nil {
			e.Code, e.Message, e.Details = x.Code, strings.TrimSpace(x.Message), x.Details
		}
	}
	for _, d := range e.Details {
		if d.PropertyRef != "" {
			e.Field = d.PropertyRef
			break
		}
	}
	return e
}
