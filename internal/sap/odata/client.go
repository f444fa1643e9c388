// Package odata is an OData v2 client for SAP Gateway services such as the S/4HANA released
// APIs (API_BUSINESS_PARTNER, API_PRODUCT_SRV): $metadata into a Schema that checks writes,
// reads by key and by set, create, update with If-Match, $batch, and Gateway errors mapped
// to the connector protocol (docs/connector.md, "OData").
package odata

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBody caps every answer read from SAP ($metadata of API_BUSINESS_PARTNER is ~600 kB).
const DefaultMaxBody = 8 << 20

// Config says where the Gateway is. BaseURL is the system's root (https://host:port).
type Config struct {
	BaseURL string
	Client  string // sap-client, e.g. "100"; empty: the system's default
	HTTP    *http.Client
	MaxBody int64 // 0: DefaultMaxBody
	Timeout time.Duration
	// UpdateMethod is PATCH (default) or MERGE, for Gateway releases that take only MERGE.
	UpdateMethod string
}

// Credentials are sent as Basic auth on every call; they never appear in errors.
type Credentials struct {
	User     string
	Password string
}

// Client talks to one SAP system. It keeps a cookie jar and a CSRF token per user and service.
type Client struct {
	cfg      Config
	base     *url.URL
	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	jar   http.CookieJar
	mu    sync.Mutex
	token map[string]string // service -> CSRF token
}

// New checks the config.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("odata: base URL %q is not an absolute URL", cfg.BaseURL)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	switch cfg.UpdateMethod {
	case "":
		cfg.UpdateMethod = http.MethodPatch
	case http.MethodPatch, "MERGE":
	default:
		return nil, fmt.Errorf("odata: update method %q is neither PATCH nor MERGE", cfg.UpdateMethod)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	return &Client{cfg: cfg, base: u, sessions: map[string]*session{}}, nil
}

func (c *Client) session(user string) *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[user]
	if s == nil {
		jar, _ := cookiejar.New(nil)
		s = &session{jar: jar, token: map[string]string{}}
		c.sessions[user] = s
	}
	return s
}

// servicePath is /sap/opu/odata/sap/<SERVICE>.
func servicePath(service string) string {
	return "/sap/opu/odata/sap/" + url.PathEscape(service)
}

// Response is a successful answer: status, headers and body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

type request struct {
	method  string
	service string
	rel     string // path below the service, e.g. "A_BusinessPartner('1')"; may hold a query
	query   url.Values
	header  http.Header
	body    []byte
}

func (r request) modifying() bool { return r.method != http.MethodGet && r.method != http.MethodHead }

// do sends a request; modifying requests carry the user's CSRF token, fetched first when
// missing and fetched again once when SAP answers 403 "x-csrf-token: Required".
func (c *Client) do(ctx context.Context, creds Credentials, r request) (*Response, error) {
	s := c.session(creds.User)
	if !r.modifying() {
		return c.send(ctx, creds, s, r, "")
	}
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		tok := s.token[r.service]
		s.mu.Unlock()
		if tok == "" {
			var err error
			if tok, err = c.fetchToken(ctx, creds, s, r.service); err != nil {
				return nil, err
			}
		}
		resp, err := c.send(ctx, creds, s, r, tok)
		var oe *Error
		if attempt == 0 && errors.As(err, &oe) && oe.Kind == ErrCSRF {
			s.mu.Lock()
			delete(s.token, r.service)
			s.mu.Unlock()
			continue
		}
		return resp, err
	}
}

// fetchToken asks for a CSRF token with a GET of the service root.
func (c *Client) fetchToken(ctx context.Context, creds Credentials, s *session, service string) (string, error) {
	resp, err := c.send(ctx, creds, s, request{method: http.MethodGet, service: service, header: http.Header{"X-Csrf-Token": {"Fetch"}}}, "")
	if err != nil {
		return "", err
	}
	tok := resp.Header.Get("X-Csrf-Token")
	if tok == "" || strings.EqualFold(tok, "Required") {
		return "", &Error{Kind: ErrCSRF, Status: resp.Status, Message: "SAP sent no CSRF token", Path: servicePath(service)}
	}
	s.mu.Lock()
	s.token[service] = tok
	s.mu.Unlock()
	return tok, nil
}

func (c *Client) send(ctx context.Context, creds Credentials, s *session, r request, token string) (*Response, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + servicePath(r.service) + "/"
	rel, relQuery, _ := strings.Cut(r.rel, "?")
	u.Path += rel
	u.RawPath = escapePath(u.Path)
	q, _ := url.ParseQuery(relQuery)
	for k, vs := range r.query {
		q[k] = vs
	}
	if c.cfg.Client != "" {
		q.Set("sap-client", c.cfg.Client)
	}
	// $-options read better unescaped; spaces go as %20, which every Gateway release decodes.
	u.RawQuery = strings.NewReplacer("%24", "$", "+", "%20").Replace(q.Encode())
	path := u.Path
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, &Error{Kind: ErrBadInput, Message: "request does not build", Path: path}
	}
	req.SetBasicAuth(creds.User, creds.Password)
	req.Header.Set("Accept", "application/json")
	for k, vs := range r.header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if token != "" {
		req.Header.Set("X-Csrf-Token", token)
	}
	for _, ck := range s.jar.Cookies(req.URL) {
		req.AddCookie(ck)
	}
	hc := *c.cfg.HTTP
	hc.Jar = nil
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		// url.Error holds the URL, which carries no credentials (Basic auth is a header).
		cause := err
		if inner := errors.Unwrap(err); inner != nil {
			cause = inner
		}
		return nil, &Error{Kind: ErrUnavailable, Message: "SAP not reachable: " + cause.Error(), Path: path}
	}
	defer resp.Body.Close()
	if cks := resp.Cookies(); len(cks) > 0 {
		s.jar.SetCookies(req.URL, cks)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBody+1))
	if err != nil {
		return nil, &Error{Kind: ErrUnavailable, Status: resp.StatusCode, Message: "answer cut off", Path: path}
	}
	if int64(len(data)) > c.cfg.MaxBody {
		return nil, &Error{Kind: ErrTooLarge, Status: resp.StatusCode, Message: "answer over " + strconv.FormatInt(c.cfg.MaxBody, 10) + " bytes", Path: path}
	}
	if resp.StatusCode == http.StatusForbidden && strings.EqualFold(resp.Header.Get("X-Csrf-Token"), "Required") {
		return nil, &Error{Kind: ErrCSRF, Status: resp.StatusCode, Path: path}
	}
	if resp.StatusCode >= 300 {
		e := ParseGatewayError(resp.StatusCode, data)
		if resp.StatusCode < 400 {
			e.Kind, e.Message = ErrLogonFailed, "SAP redirected the request (logon page)"
		} else if isHTML(resp.Header.Get("Content-Type"), data) && e.Code == "" && e.Kind == ErrSAPException {
			e.Kind = ErrHTMLResponse
		}
		e.Path = path
		return nil, e
	}
	if r.method != http.MethodHead && len(data) > 0 && isHTML(resp.Header.Get("Content-Type"), data) {
		return nil, &Error{Kind: ErrHTMLResponse, Status: resp.StatusCode, Path: path}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// keepInPath are the characters OData key predicates use; SAP reads them unescaped.
var keepInPath = strings.NewReplacer("%27", "'", "%28", "(", "%29", ")", "%2C", ",", "%3D", "=", "%24", "$", "%2F", "/")

// escapePath escapes a decoded path segment by segment, keeping key predicates readable.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = keepInPath.Replace(url.PathEscape(s))
	}
	return strings.Join(segs, "/")
}

func isHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "text/html") {
		return true
	}
	head := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 64)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html"))
}

// Metadata reads and parses the service's $metadata.
func (c *Client) Metadata(ctx context.Context, creds Credentials, service string) (*Schema, error) {
	resp, err := c.do(ctx, creds, request{method: http.MethodGet, service: service, rel: "$metadata", header: http.Header{"Accept": {"application/xml"}}})
	if err != nil {
		return nil, err
	}
	return ParseMetadata(resp.Body)
}

// Entity is one entity's properties plus the ETag that guards its update.
type Entity struct {
	Properties map[string]any
	ETag       string
}

// Query is a read of an entity set. Next, when set, is a __next link to follow instead.
type Query struct {
	Filter string
	Select []string
	Top    int
	Skip   int
}

// Page is one page of an entity set; Next is the __next link (empty on the last page).
type Page struct {
	Entities []Entity
	Next     string
}

// KeyPredicate builds ('1') or (A='1',B='2') from key values in the type's key order.
func KeyPredicate(keys ...KeyValue) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := k.Value
		if !k.Raw {
			v = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		if len(keys) == 1 {
			parts[i] = v
		} else {
			parts[i] = k.Name + "=" + v
		}
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// KeyValue is one key property. Raw values (numbers, guid'…', datetime'…') are not quoted.
type KeyValue struct {
	Name  string
	Value string
	Raw   bool
}

// Get reads one entity by key.
func (c *Client) Get(ctx context.Context, creds Credentials, service, set string, key []KeyValue) (Entity, error) {
	resp, err := c.do(ctx, creds, request{method: http.MethodGet, service: service, rel: set + KeyPredicate(key...)})
	if err != nil {
		return Entity{}, err
	}
	return ParseEntity(resp.Body, resp.Header.Get("ETag"))
}

// List reads one page of an entity set.
func (c *Client) List(ctx context.Context, creds Credentials, service, set string, q Query) (Page, error) {
	v := url.Values{}
	if q.Filter != "" {
		v.Set("$filter", q.Filter)
	}
	if len(q.Select) > 0 {
		v.Set("$select", strings.Join(q.Select, ","))
	}
	if q.Top > 0 {
		v.Set("$top", strconv.Itoa(q.Top))
	}
	if q.Skip > 0 {
		v.Set("$skip", strconv.Itoa(q.Skip))
	}
	resp, err := c.do(ctx, creds, request{method: http.MethodGet, service: service, rel: set, query: v})
	if err != nil {
		return Page{}, err
	}
	return ParseEntitySet(resp.Body)
}

// Next follows a page's __next link (relative to the service, as SAP sends it, or absolute).
func (c *Client) Next(ctx context.Context, creds Credentials, service string, p Page) (Page, error) {
	u, err := url.Parse(p.Next)
	if err != nil || p.Next == "" {
		return Page{}, &Error{Kind: ErrMalformed, Message: "bad __next link"}
	}
	rel := u.Path
	if i := strings.Index(rel, servicePath(service)+"/"); i >= 0 {
		rel = rel[i+len(servicePath(service))+1:]
	}
	q := u.Query()
	q.Del("sap-client")
	resp, err := c.do(ctx, creds, request{method: http.MethodGet, service: service, rel: rel, query: q})
	if err != nil {
		return Page{}, err
	}
	return ParseEntitySet(resp.Body)
}

// Create POSTs a new entity and returns it as SAP stored it.
func (c *Client) Create(ctx context.Context, creds Credentials, service, set string, props map[string]any) (Entity, error) {
	body, err := json.Marshal(props)
	if err != nil {
		return Entity{}, &Error{Kind: ErrBadInput, Message: "entity does not encode as JSON"}
	}
	resp, err := c.do(ctx, creds, request{method: http.MethodPost, service: service, rel: set, body: body, header: http.Header{"Content-Type": {"application/json"}}})
	if err != nil {
		return Entity{}, err
	}
	return ParseEntity(resp.Body, resp.Header.Get("ETag"))
}

// Update changes the given properties with PATCH or MERGE (Config.UpdateMethod), guarded by
// If-Match: etag (from a read). A 412 answer is ErrConflict. An empty etag is refused
// before sending: a blind overwrite is never what an agent meant.
func (c *Client) Update(ctx context.Context, creds Credentials, service, set string, key []KeyValue, props map[string]any, etag string) (newETag string, err error) {
	if etag == "" {
		return "", &Error{Kind: ErrBadInput, Message: "update needs the entity's ETag (read it first)"}
	}
	body, jerr := json.Marshal(props)
	if jerr != nil {
		return "", &Error{Kind: ErrBadInput, Message: "entity does not encode as JSON"}
	}
	resp, err := c.do(ctx, creds, request{method: c.cfg.UpdateMethod, service: service, rel: set + KeyPredicate(key...), body: body,
		header: http.Header{"Content-Type": {"application/json"}, "If-Match": {etag}}})
	if err != nil {
		return "", err
	}
	return resp.Header.Get("ETag"), nil
}

type entityJSON struct {
	D json.RawMessage `json:"d"`
}

// ParseEntity reads {"d": {...}}; the ETag is __metadata.etag, else the header's.
func ParseEntity(body []byte, headerETag string) (Entity, error) {
	var env entityJSON
	if err := json.Unmarshal(body, &env); err != nil || len(env.D) == 0 {
		return Entity{}, &Error{Kind: ErrMalformed, Message: "entity is not OData v2 JSON ({\"d\":…})"}
	}
	var props map[string]any
	if err := json.Unmarshal(env.D, &props); err != nil {
		return Entity{}, &Error{Kind: ErrMalformed, Message: "entity \"d\" is not an object"}
	}
	return toEntity(props, headerETag), nil
}

func toEntity(props map[string]any, headerETag string) Entity {
	e := Entity{Properties: props, ETag: headerETag}
	if md, ok := props["__metadata"].(map[string]any); ok {
		if et, ok := md["etag"].(string); ok && et != "" {
			e.ETag = et
		}
	}
	return e
}

// ParseEntitySet reads {"d": {"results": [...], "__next": "..."}} (and the older {"d": [...]}).
func ParseEntitySet(body []byte) (Page, error) {
	var env entityJSON
	if err := json.Unmarshal(body, &env); err != nil || len(env.D) == 0 {
		return Page{}, &Error{Kind: ErrMalformed, Message: "entity set is not OData v2 JSON ({\"d\":…})"}
	}
	var set struct {
		Results []map[string]any `json:"results"`
		Next    string           `json:"__next"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(env.D), []byte("[")) {
		if err := json.Unmarshal(env.D, &set.Results); err != nil {
			return Page{}, &Error{Kind: ErrMalformed, Message: "entity set: " + err.Error()}
		}
	} else if err := json.Unmarshal(env.D, &set); err != nil {
		return Page{}, &Error{Kind: ErrMalformed, Message: "entity set: " + err.Error()}
	}
	p := Page{Next: set.Next, Entities: make([]Entity, 0, len(set.Results))}
	for _, r := range set.Results {
		p.Entities = append(p.Entities, toEntity(r, ""))
	}
	return p, nil
}
