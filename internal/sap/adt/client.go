// Package adt is a client of SAP's ADT REST interface (/sap/bc/adt/…, what Eclipse ABAP
// Development Tools uses): discovery, repository quick search, object source, usage references
// (where-used) and free-style data preview. The connector (internal/connector) maps the
// connector protocol onto it; docs/connector.md ("ADT") says which services it uses.
package adt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultMaxBody caps an answer read from SAP; the modern discovery document is about 400 KB.
const DefaultMaxBody = 16 << 20

// Config describes one SAP system.
type Config struct {
	BaseURL  string // e.g. https://sap.example.com:44300 (no /sap/bc/adt)
	Client   string // sap-client, e.g. "001"
	Language string // sap-language, e.g. "EN"
	// HTTP is the transport; nil means a client with a 60 s timeout. Its redirect policy and
	// cookie jar are replaced: ADT redirects are not followed and cookies live per user.
	HTTP    *http.Client
	MaxBody int64 // 0 means DefaultMaxBody
}

// Client talks to one SAP system. It is safe for concurrent use; each SAP user gets its own
// session (cookie jar and CSRF token), and the system's capabilities are read once.
type Client struct {
	base    *url.URL
	cfg     Config
	maxBody int64
	rt      http.RoundTripper
	timeout time.Duration

	mu       sync.Mutex
	sessions map[string]*session

	capsMu sync.Mutex
	caps   *Capabilities
}

type session struct {
	http    *http.Client
	fetchMu sync.Mutex // one token fetch at a time: concurrent fetches would open rival SAP sessions
	mu      sync.Mutex
	token   string
}

func (s *session) currentToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

func (s *session) setToken(t string) {
	s.mu.Lock()
	s.token = t
	s.mu.Unlock()
}

// New checks the base URL and builds a client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: ErrBadRequestInput, Message: "base URL must be http(s)://host[:port]"}
	}
	c := &Client{base: u, cfg: cfg, maxBody: cfg.MaxBody, sessions: map[string]*session{}, timeout: 60 * time.Second}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxBody
	}
	if cfg.HTTP != nil {
		c.rt, c.timeout = cfg.HTTP.Transport, cfg.HTTP.Timeout
	}
	if c.rt == nil {
		c.rt = http.DefaultTransport
	}
	return c, nil
}

// Credentials are the SAP user a call runs as (Basic auth on every request).
type Credentials struct {
	User     string
	Password string
}

func (c *Client) session(user string) *session {
	key := strings.ToUpper(user)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[key]
	if s == nil {
		jar, _ := cookiejar.New(nil)
		s = &session{http: &http.Client{
			Transport:     c.rt,
			Timeout:       c.timeout,
			Jar:           jar,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
		c.sessions[key] = s
	}
	return s
}

// request is one ADT call.
type request struct {
	method      string
	path        string // /sap/bc/adt/...
	query       url.Values
	accept      string
	contentType string
	body        []byte
	text        bool // the answer is plain text (source), not XML
}

// do sends r as creds, fetching a CSRF token first for modifying calls and refetching it once
// when SAP answers 403 "x-csrf-token: Required". It returns the body of a 2xx answer.
func (c *Client) do(ctx context.Context, creds Credentials, r request) ([]byte, error) {
	s := c.session(creds.User)
	modifying := r.method != http.MethodGet && r.method != http.MethodHead
	if modifying {
		if err := c.ensureToken(ctx, creds, s, ""); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		resp, body, used, err := c.send(ctx, creds, s, r, false)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusForbidden && strings.EqualFold(resp.Header.Get("x-csrf-token"), "required") {
			if !modifying || attempt > 0 {
				return nil, &Error{Kind: ErrCSRF, Status: resp.StatusCode, Path: r.path, Message: "SAP refused the CSRF token twice"}
			}
			if err := c.ensureToken(ctx, creds, s, used); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, statusError(r.path, resp, body)
		}
		return body, checkBody(r, resp, body)
	}
}

// ensureToken fetches a CSRF token with a GET of the discovery document (which the client
// needs anyway) unless the session has one. stale names a token SAP refused: it is replaced
// unless another call already replaced it.
func (c *Client) ensureToken(ctx context.Context, creds Credentials, s *session, stale string) error {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if t := s.currentToken(); t != "" && t != stale {
		return nil
	}
	r := request{method: http.MethodGet, path: discoveryPath, accept: acceptDiscovery}
	resp, body, _, err := c.send(ctx, creds, s, r, true)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(r.path, resp, body)
	}
	if err := checkBody(r, resp, body); err != nil {
		return err
	}
	c.rememberDiscovery(body)
	if t := s.currentToken(); t == "" || t == stale {
		return &Error{Kind: ErrCSRF, Path: r.path, Message: "SAP sent no x-csrf-token"}
	}
	return nil
}

// send performs one HTTP exchange and reads at most maxBody bytes of the answer. It returns
// the CSRF token the request carried and keeps a token SAP sent back.
func (c *Client) send(ctx context.Context, creds Credentials, s *session, r request, fetchToken bool) (*http.Response, []byte, string, error) {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + r.path // r.path is escaped: names may hold %2F
	u.Path, _ = url.PathUnescape(u.RawPath)
	q := url.Values{}
	for k, v := range r.query {
		q[k] = v
	}
	if c.cfg.Client != "" {
		q.Set("sap-client", c.cfg.Client)
	}
	if c.cfg.Language != "" {
		q.Set("sap-language", c.cfg.Language)
	}
	u.RawQuery = q.Encode()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, nil, "", &Error{Kind: ErrBadRequestInput, Path: r.path, Message: "cannot build the request"}
	}
	req.SetBasicAuth(creds.User, creds.Password)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	token := s.currentToken()
	switch {
	case fetchToken || (token == "" && r.method == http.MethodGet):
		req.Header.Set("x-csrf-token", "Fetch")
	case token != "":
		req.Header.Set("x-csrf-token", token)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, nil, "", transportError(r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return nil, nil, "", transportError(r.path, err)
	}
	if int64(len(data)) > c.maxBody {
		return nil, nil, "", &Error{Kind: ErrTooLarge, Status: resp.StatusCode, Path: r.path}
	}
	if t := resp.Header.Get("x-csrf-token"); t != "" && !strings.EqualFold(t, "required") && !strings.EqualFold(t, "fetch") {
		s.setToken(t)
	}
	if fetchToken {
		token = "" // the request carried "Fetch", not a token
	}
	return resp, data, token, nil
}

// checkBody refuses what is not the kind of answer the call expects.
func checkBody(r request, resp *http.Response, body []byte) error {
	if !utf8.Valid(body) {
		return &Error{Kind: ErrInvalidUTF8, Status: resp.StatusCode, Path: r.path}
	}
	if isHTML(resp.Header.Get("Content-Type"), body) && (!r.text || strings.Contains(strings.ToLower(resp.Header.Get("Content-Type")), "html")) {
		return &Error{Kind: ErrHTMLResponse, Status: resp.StatusCode, Path: r.path}
	}
	return nil
}

// isHTML tells an HTML page (a logon page, an ICF error page, a proxy's) from ADT's XML.
func isHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "text/html") {
		return true
	}
	head := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

func transportError(path string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &Error{Kind: ErrTimeout, Path: path, Message: "SAP did not answer in time"}
	case errors.Is(err, context.Canceled):
		return err
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return &Error{Kind: ErrUnavailable, Path: path, Message: "SAP is unreachable: " + op.Err.Error()}
	}
	return &Error{Kind: ErrUnavailable, Path: path, Message: "the connection to SAP failed"}
}
