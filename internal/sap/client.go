package sap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Connector is one SAP system as the tools see it: a remote connector reached over HTTP, or
// the simulator in-process.
type Connector interface {
	// Call sends req to endpoint and decodes the response's data into resp. Failures the
	// system reports are *Error; others are transport errors.
	Call(ctx context.Context, endpoint string, req, resp any) error
}

// Target is where and as whom a remote call goes. The password travels only in a header.
type Target struct {
	URL          string
	ConnectorKey string
	SAPUser      string
	SAPPassword  string
}

// redact removes the target's secrets from text a connector sent: a connector that echoes
// the request's key or password in its error must not put them into logs, histories or runs.
func (t Target) redact(text string) string {
	for _, secret := range []string{t.ConnectorKey, t.SAPPassword} {
		if len(secret) >= 4 {
			text = strings.ReplaceAll(text, secret, "[redacted]")
		}
	}
	return text
}

// Client calls remote connectors through the URL guard.
type Client struct {
	guard Guard
	http  *http.Client
}

// maxResponse bounds a connector's answer (a read_table of many rows stays far below).
const maxResponse = 64 << 20

// MaxAnswerDepth bounds how deeply a connector's answer may nest (objects and arrays): the
// protocol's answers nest a few levels; a deeper one is hostile or broken.
const MaxAnswerDepth = 64

// ErrMalformedAnswer marks a connector answer no retry can make usable: larger than 64 MiB,
// nested too deeply, not {"data": …}, or not of the endpoint's shape. Callers that retry
// (the sync) stop at once on it (errors.Is).
var ErrMalformedAnswer = errors.New("the connector's answer is unusable")

// MalformedError says why an answer is unusable; it Is ErrMalformedAnswer.
type MalformedError struct {
	Endpoint, Reason string
}

func (e *MalformedError) Error() string {
	return "connector " + e.Endpoint + ": the answer is unusable: " + e.Reason
}

// Is makes errors.Is(err, ErrMalformedAnswer) true.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformedAnswer }

// answerDepth is how deeply raw JSON nests objects and arrays (strings skipped, escapes too).
// It stops counting past limit.
func answerDepth(raw []byte, limit int) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > deepest {
				if deepest = depth; deepest > limit {
					return deepest
				}
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// NewClient builds a client whose every connection is checked by guard at dial time. It uses
// no proxy (a proxy would dial on our behalf, past the check) and never follows redirects.
func NewClient(guard Guard, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: guard.Control}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &Client{guard: guard, http: &http.Client{
		Transport:     transport,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Connector binds the client to one target.
func (c *Client) Connector(t Target) Connector { return remote{c, t} }

type remote struct {
	c *Client
	t Target
}

func (r remote) Call(ctx context.Context, endpoint string, req, resp any) error {
	return r.c.Call(ctx, r.t, endpoint, req, resp)
}

// Call POSTs req as JSON to <t.URL>/<endpoint> and decodes {"data": …} into resp.
func (c *Client) Call(ctx context.Context, t Target, endpoint string, req, resp any) error {
	u, err := c.guard.CheckURL(t.URL)
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", endpoint, err)
	}
	full := strings.TrimSuffix(u.String(), "/") + "/" + endpoint
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, full, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("connector request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if t.ConnectorKey != "" {
		hreq.Header.Set(HeaderConnectorKey, t.ConnectorKey)
	}
	if t.SAPUser != "" {
		hreq.Header.Set(HeaderSAPUser, t.SAPUser)
		hreq.Header.Set(HeaderSAPPassword, t.SAPPassword)
	}
	if key := RequestIdempotencyKey(ctx, endpoint); key != "" {
		hreq.Header.Set(HeaderIdempotencyKey, key)
	}
	res, err := c.http.Do(hreq)
	if err != nil {
		return transportError(endpoint, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("connector %s: reading the answer: %w", endpoint, err)
	}
	if len(raw) > maxResponse {
		return &MalformedError{endpoint, fmt.Sprintf("larger than %d MiB", maxResponse>>20)}
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		return fmt.Errorf("connector %s answered with a redirect (%d), which is never followed", endpoint, res.StatusCode)
	}
	if res.StatusCode != http.StatusOK {
		var eb ErrorBody
		if json.Unmarshal(raw, &eb) == nil && eb.Error.Code != "" {
			eb.Error.Message = t.redact(eb.Error.Message)
			eb.Error.Exception = t.redact(eb.Error.Exception)
			return &Error{Status: res.StatusCode, ErrorDetail: eb.Error}
		}
		return &Error{Status: res.StatusCode, ErrorDetail: ErrorDetail{Code: statusCode(res.StatusCode),
			Message: fmt.Sprintf("connector answered %d %s", res.StatusCode, http.StatusText(res.StatusCode))}}
	}
	if answerDepth(raw, MaxAnswerDepth) > MaxAnswerDepth {
		return &MalformedError{endpoint, fmt.Sprintf("nested more than %d levels deep", MaxAnswerDepth)}
	}
	var envelope struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil || len(envelope.Data) == 0 {
		return &MalformedError{endpoint, `not {"data": …}`}
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(envelope.Data, resp); err != nil {
		return &MalformedError{endpoint, "unexpected answer: " + err.Error()}
	}
	return nil
}

func statusCode(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return ErrLogonFailed
	case status == http.StatusForbidden:
		return ErrAuthorization
	case status == http.StatusNotFound:
		return ErrNotFound
	case status == http.StatusGatewayTimeout:
		return ErrTimeout
	case status >= 500:
		return ErrSystemUnavailable
	}
	return ErrBadRequest
}

// transportError keeps the reason (refused by the guard, timeout, unreachable) and drops the
// request details.
func transportError(endpoint string, err error) error {
	if errors.Is(err, ErrBlocked) {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return fmt.Errorf("connector %s: %w", endpoint, op.Err)
		}
		return fmt.Errorf("connector %s: %w", endpoint, ErrBlocked)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return &Error{Status: http.StatusGatewayTimeout, ErrorDetail: ErrorDetail{Code: ErrTimeout, Message: "the connector did not answer in time"}}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &Error{Status: http.StatusServiceUnavailable, ErrorDetail: ErrorDetail{Code: ErrSystemUnavailable, Message: "the connector is unreachable: " + op.Err.Error()}}
	}
	return fmt.Errorf("connector %s: %w", endpoint, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Describe turns a connector failure into a sentence for the model and the user.
func Describe(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	msg := e.Message
	if e.Exception != "" {
		msg += " (exception " + e.Exception + ")"
	}
	switch e.Code {
	case ErrAuthorization:
		return "SAP authorization failed: " + msg
	case ErrLogonFailed:
		return "SAP logon failed: " + msg + ". Check the SAP user and password stored for this connection."
	case ErrConnectorKey:
		return "the connector refused the connector key: " + msg
	case ErrNotFound:
		return "not found in SAP: " + msg
	case ErrSAPException, ErrDataBufferExceeded, ErrInvalidWhereOptions:
		return "SAP exception: " + msg
	case ErrNotSupported:
		return "not supported by this system: " + msg
	case ErrTimeout:
		return "SAP did not answer in time: " + msg
	case ErrSystemUnavailable:
		return "the SAP system is unavailable: " + msg
	case ErrIdempotencyKeyReused:
		return "the connector refused to run this write: " + msg
	}
	return msg
}
