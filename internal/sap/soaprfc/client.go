// Package soaprfc calls remote-enabled ABAP function modules over SAP's SOAP RFC service
// (POST <base>/sap/bc/soap/rfc, namespace urn:sap-com:document:sap:rfc:functions). The
// connector uses it for table_schema (DDIF_FIELDINFO_GET), read_table (RFC_READ_TABLE) and
// execute_rfc (any function module; BAPIs with commit/rollback in one stateful session).
package soaprfc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sapagent/sapagent/internal/sap"
)

// Namespace of SOAP RFC function elements.
const (
	NamespaceRFC  = "urn:sap-com:document:sap:rfc:functions"
	NamespaceSOAP = "http://schemas.xmlsoap.org/soap/envelope/"
	servicePath   = "/sap/bc/soap/rfc"
	// DefaultMaxResponseBytes caps one answer; larger answers fail with ErrResponseTooLarge.
	DefaultMaxResponseBytes = 64 << 20
)

// Config describes one SAP system's SOAP RFC endpoint.
type Config struct {
	BaseURL          string        // https://host:port (no path)
	Client           string        // sap-client, e.g. "001"
	Language         string        // sap-language, e.g. "EN"
	HTTPClient       *http.Client  // nil: NewHTTPClient(nil)
	MaxResponseBytes int64         // 0: DefaultMaxResponseBytes
	Timeout          time.Duration // per call; 0: only the caller's context
}

// Credentials are the SAP user of one call (a named user or the technical user).
type Credentials struct {
	User     string
	Password string
}

// Client calls function modules on one system. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
}

// NewHTTPClient returns an http.Client that never follows redirects and uses no proxy;
// tlsCfg carries the CA pool of the system (nil: system roots).
func NewHTTPClient(tlsCfg *tls.Config) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if tlsCfg != nil {
		tr.TLSClientConfig = tlsCfg
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("soaprfc: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient(nil)
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Client{cfg: cfg, base: u}, nil
}

// Struct is one structure (or one table row): field name → value as SAP writes it.
type Struct map[string]string

// Params are the inputs of one call. Import and changing values are a string (scalar) or a
// Struct (structure); tables are rows of structures.
type Params struct {
	Imports  map[string]any
	Changing map[string]any
	Tables   map[string][]Struct
}

// Result holds what SAP answered: exporting and changing parameters in Exports (string or
// Struct), table parameters in Tables.
type Result struct {
	Exports map[string]any
	Tables  map[string][]Struct
}

// String is a scalar export ("" when absent or not a scalar).
func (r *Result) String(name string) string {
	s, _ := r.Exports[name].(string)
	return s
}

// Struct is a structure export (nil when absent).
func (r *Result) Struct(name string) Struct {
	s, _ := r.Exports[name].(Struct)
	return s
}

// Table is a table parameter's rows (nil when absent or empty).
func (r *Result) Table(name string) []Struct { return r.Tables[name] }

// RowFunc receives streamed rows of one table parameter; returning an error stops the parse.
type RowFunc func(table string, row Struct) error

// Call runs function module fm with params and returns its exports and tables.
func (c *Client) Call(ctx context.Context, cred Credentials, fm string, p Params) (*Result, error) {
	return c.call(ctx, cred, nil, fm, p, nil)
}

// CallStream is Call, but rows of the tables named in stream go to onRow one at a time instead
// of into the Result: memory stays flat however many rows SAP sends.
func (c *Client) CallStream(ctx context.Context, cred Credentials, fm string, p Params, stream []string, onRow RowFunc) (*Result, error) {
	return c.call(ctx, cred, nil, fm, p, streamer(stream, onRow))
}

func streamer(names []string, onRow RowFunc) map[string]RowFunc {
	m := map[string]RowFunc{}
	for _, n := range names {
		m[n] = onRow
	}
	return m
}

var abapName = regexp.MustCompile(`^[A-Za-z0-9_/]{1,61}$`)

// xmlName encodes an ABAP name as SOAP RFC does: a namespace slash becomes "_-".
func xmlName(n string) string { return strings.ReplaceAll(strings.ToUpper(n), "/", "_-") }

func abapNameOf(x string) string { return strings.ReplaceAll(x, "_-", "/") }

func badRequest(msg string) *Error { return newErr(sap.ErrBadRequest, 400, "", msg) }

// Envelope builds the SOAP request body for fm (exported for tests and the simulator).
func Envelope(fm string, p Params) ([]byte, error) {
	if !abapName.MatchString(fm) {
		return nil, badRequest(fmt.Sprintf("invalid function module name %q", fm))
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	b.WriteString(`<soap-env:Envelope xmlns:soap-env="` + NamespaceSOAP + `"><soap-env:Body>`)
	fn := xmlName(fm)
	b.WriteString(`<urn:` + fn + ` xmlns:urn="` + NamespaceRFC + `">`)
	for _, group := range []map[string]any{p.Imports, p.Changing} {
		for _, name := range sortedKeys(group) {
			if err := writeParam(&b, name, group[name]); err != nil {
				return nil, err
			}
		}
	}
	for _, name := range sortedKeys(p.Tables) {
		if !abapName.MatchString(name) {
			return nil, badRequest(fmt.Sprintf("invalid parameter name %q", name))
		}
		n := xmlName(name)
		b.WriteString("<" + n + ">")
		for _, row := range p.Tables[name] {
			b.WriteString("<item>")
			if err := writeFields(&b, row); err != nil {
				return nil, err
			}
			b.WriteString("</item>")
		}
		b.WriteString("</" + n + ">")
	}
	b.WriteString(`</urn:` + fn + `></soap-env:Body></soap-env:Envelope>`)
	return b.Bytes(), nil
}

func writeParam(b *bytes.Buffer, name string, v any) error {
	if !abapName.MatchString(name) {
		return badRequest(fmt.Sprintf("invalid parameter name %q", name))
	}
	n := xmlName(name)
	b.WriteString("<" + n + ">")
	switch x := v.(type) {
	case string:
		if err := writeText(b, name, x); err != nil {
			return err
		}
	case Struct:
		if err := writeFields(b, x); err != nil {
			return err
		}
	case map[string]string:
		if err := writeFields(b, x); err != nil {
			return err
		}
	case nil:
	default:
		return badRequest(fmt.Sprintf("parameter %s: unsupported value type %T", name, v))
	}
	b.WriteString("</" + n + ">")
	return nil
}

func writeFields(b *bytes.Buffer, s map[string]string) error {
	for _, f := range sortedKeys(s) {
		if !abapName.MatchString(f) {
			return badRequest(fmt.Sprintf("invalid field name %q", f))
		}
		n := xmlName(f)
		b.WriteString("<" + n + ">")
		if err := writeText(b, f, s[f]); err != nil {
			return err
		}
		b.WriteString("</" + n + ">")
	}
	return nil
}

func writeText(b *bytes.Buffer, name, s string) error {
	if !utf8.ValidString(s) {
		return badRequest(fmt.Sprintf("value of %s is not valid UTF-8", name))
	}
	return xml.EscapeText(b, []byte(s))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// call posts the envelope (within sess when not nil) and parses the answer.
func (c *Client) call(ctx context.Context, cred Credentials, sess *Session, fm string, p Params, stream map[string]RowFunc) (*Result, error) {
	body, err := Envelope(fm, p)
	if err != nil {
		return nil, err
	}
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	q := url.Values{}
	if c.cfg.Client != "" {
		q.Set("sap-client", c.cfg.Client)
	}
	if c.cfg.Language != "" {
		q.Set("sap-language", c.cfg.Language)
	}
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + servicePath
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, badRequest("cannot build request")
	}
	req.SetBasicAuth(cred.User, cred.Password)
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", NamespaceRFC)
	if sess != nil {
		sess.apply(req)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	if sess != nil {
		sess.remember(resp)
	}
	r := &capReader{r: resp.Body, left: c.cfg.MaxResponseBytes}
	res, err := c.parse(ctx, resp, r, fm, stream)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// capReader fails with ErrResponseTooLarge once more than left bytes were read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrResponseTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, ErrResponseTooLarge
	}
	return n, err
}

func (c *Client) parse(ctx context.Context, resp *http.Response, body io.Reader, fm string, stream map[string]RowFunc) (*Result, error) {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if resp.StatusCode == 401 {
		return nil, statusError(401, "")
	}
	if strings.Contains(ct, "html") || (resp.StatusCode != 200 && resp.StatusCode != 500 && !strings.Contains(ct, "xml")) {
		head, _ := io.ReadAll(io.LimitReader(body, 8<<10))
		e := statusError(resp.StatusCode, string(head))
		if resp.StatusCode == 200 || (resp.StatusCode == 500 && e.Code == sap.ErrSystemUnavailable) {
			e.Message = fmt.Sprintf("SAP answered HTTP %d with %s instead of a SOAP envelope", resp.StatusCode, contentKind(ct))
			return nil, e.with(ErrNotXML)
		}
		return nil, e
	}
	res, err := decodeEnvelope(body, fm, stream)
	if err != nil {
		var re *Error
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, c.decodeError(ctx, resp.StatusCode, err)
	}
	return res, nil
}

func contentKind(ct string) string {
	if ct == "" {
		return "no content type"
	}
	return ct
}

func (c *Client) decodeError(ctx context.Context, status int, err error) error {
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return newErr(sap.ErrSystemUnavailable, 503, "", fmt.Sprintf("SAP answer larger than %d bytes", c.cfg.MaxResponseBytes)).with(ErrResponseTooLarge)
	case strings.Contains(err.Error(), "invalid UTF-8"):
		return newErr(sap.ErrSystemUnavailable, 503, "", "SAP answer is not valid UTF-8").with(ErrInvalidUTF8)
	case ctx.Err() != nil:
		return transportError(ctx, ctx.Err())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return newErr(sap.ErrSystemUnavailable, 503, "", "SAP answer ended inside the SOAP envelope (truncated)").with(ErrNotXML)
	case errors.Is(err, errNoEnvelope), isSyntaxError(err):
		return newErr(sap.ErrSystemUnavailable, 503, "", fmt.Sprintf("SAP answered HTTP %d with malformed XML: %v", status, err)).with(ErrNotXML)
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return transportError(ctx, err)
	}
	return newErr(sap.ErrSystemUnavailable, 503, "", "reading SAP answer failed: "+rootCause(err))
}

func isSyntaxError(err error) bool {
	var se *xml.SyntaxError
	return errors.As(err, &se)
}
