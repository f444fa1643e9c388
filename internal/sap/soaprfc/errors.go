package soaprfc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// Error is every failure of a SOAP RFC call, already mapped to a connector protocol code
// (internal/sap protocol.go). Exception is the ABAP exception name when SAP raised one.
// No Error ever carries the password: messages are built from SAP's answer and our own text.
type Error struct {
	Code      string // sap.Err* code
	Status    int    // HTTP status the connector should answer with
	Exception string // ABAP exception name, e.g. TABLE_NOT_AVAILABLE
	Message   string
	Err       error // sentinel cause (ErrNotXML, ErrResponseTooLarge …) for errors.Is
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) with(cause error) *Error { e.Err = cause; return e }

func (e *Error) Error() string {
	if e.Exception != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Exception)
	}
	return e.Code + ": " + e.Message
}

// Detail is the error in the connector protocol's body shape.
func (e *Error) Detail() sap.ErrorDetail {
	return sap.ErrorDetail{Code: e.Code, Message: e.Message, Exception: e.Exception}
}

// Typed failures of the transport that are not ABAP exceptions.
var (
	ErrResponseTooLarge = errors.New("SAP answer exceeds the size limit")
	ErrNotXML           = errors.New("SAP answered HTML or other non-XML content instead of a SOAP envelope")
	ErrInvalidUTF8      = errors.New("SAP answer is not valid UTF-8")
	ErrTestRunMissing   = errors.New("function module has no TESTRUN parameter; test run not supported")
)

func newErr(code string, status int, exc, msg string) *Error {
	return &Error{Code: code, Status: status, Exception: exc, Message: msg}
}

// notFoundExceptions are ABAP exceptions that mean "the named table/function does not exist".
var notFoundExceptions = map[string]bool{
	"TABLE_NOT_AVAILABLE": true,
	"NOT_FOUND":           true,
	"FU_NOT_FOUND":        true,
	"FUNCTION_NOT_FOUND":  true,
}

// authExceptions are ABAP exceptions raised for a missing authorization (S_RFC, S_TABU_DIS …).
var authExceptions = map[string]bool{
	"NOT_AUTHORIZED":      true,
	"RFC_NO_AUTHORITY":    true, // AUTHORITY_CHECK_RFC: S_RFC missing
	"NO_AUTHORITY":        true,
	"NO_AUTHORIZATION":    true,
	"AUTHORITY_NOT_AVAIL": true,
}

// exceptionError maps an ABAP exception raised by fm to the protocol's code.
func exceptionError(fm, exc, text string) *Error {
	exc = strings.ToUpper(strings.TrimSpace(exc))
	msg := text
	if msg == "" {
		msg = fm + " raised " + exc
	}
	switch {
	case notFoundExceptions[exc]:
		return newErr(sap.ErrNotFound, 404, exc, msg)
	case authExceptions[exc]:
		return newErr(sap.ErrAuthorization, 403, exc, msg)
	case exc == "DATA_BUFFER_EXCEEDED":
		return newErr(sap.ErrDataBufferExceeded, 422, exc, msg)
	case exc == "OPTION_NOT_VALID":
		return newErr(sap.ErrInvalidWhereOptions, 422, exc, msg)
	}
	return newErr(sap.ErrSAPException, 422, exc, msg)
}

// transportError maps a failure below HTTP (refused connection, timeout, cancelled context).
func transportError(ctx context.Context, err error) *Error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return newErr(sap.ErrTimeout, 504, "", "SAP did not answer in time")
	case errors.Is(err, context.Canceled):
		return newErr(sap.ErrTimeout, 504, "", "call cancelled")
	}
	// url.Error texts contain the URL, never the credentials (Basic auth is a header).
	return newErr(sap.ErrSystemUnavailable, 503, "", "SAP system not reachable: "+rootCause(err))
}

func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// statusError maps an HTTP status without a SOAP fault.
func statusError(status int, body string) *Error {
	switch {
	case status == 401 || strings.Contains(body, "Logon failed") || strings.Contains(body, "Anmeldung fehlgeschlagen"):
		return newErr(sap.ErrLogonFailed, 401, "", "SAP logon failed: user, password or client wrong")
	case status == 403:
		return newErr(sap.ErrAuthorization, 403, "", "SAP refused the call: missing authorization (S_RFC / S_ICF)")
	case status == 404:
		return newErr(sap.ErrNotSupported, 422, "", "SOAP RFC service /sap/bc/soap/rfc is not active on this system (SICF)")
	case status == 502 || status == 503 || status == 504:
		return newErr(sap.ErrSystemUnavailable, 503, "", fmt.Sprintf("SAP system unavailable (HTTP %d)", status))
	}
	return newErr(sap.ErrSystemUnavailable, 503, "", fmt.Sprintf("unexpected HTTP %d from SAP", status))
}
