package connector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sapagent/sapagent/internal/sap"
)

// maxBody bounds a request body (the platform's largest, a write_table of many rows, is far below).
const maxBody = 8 << 20

// Server serves the connector protocol for the configured systems.
type Server struct {
	systems  map[string]*system
	order    []System
	keys     [][32]byte
	store    *IdempotencyStore
	log      *slog.Logger
	backends map[string]Backend
}

type system struct {
	cfg     System
	backend Backend
	slots   *CallSlots // max_concurrent_calls, shared with the backend (SlotSharer)
}

// NewServer builds the server; backends maps each system ID to its Backend (one per system).
func NewServer(cfg *Config, backends map[string]Backend, store *IdempotencyStore, log *slog.Logger) (*Server, error) {
	if store == nil {
		return nil, errors.New("connector: an idempotency store is required")
	}
	s := &Server{systems: map[string]*system{}, order: cfg.Systems, store: store, log: log, backends: backends}
	for _, k := range cfg.ConnectorKeys {
		s.keys = append(s.keys, sha256.Sum256([]byte(k)))
	}
	for _, sys := range cfg.Systems {
		b, ok := backends[sys.ID]
		if !ok {
			return nil, fmt.Errorf("connector: no backend for system %s", sys.ID)
		}
		slots := NewCallSlots(sys.MaxConcurrentCalls)
		if sh, ok := b.(SlotSharer); ok {
			sh.ShareCallSlots(slots)
		}
		s.systems[sys.ID] = &system{cfg: sys, backend: b, slots: slots}
	}
	return s, nil
}

// Handler routes GET /healthz, GET /health/systems and POST /<system>/<endpoint>. It routes by
// itself rather than with http.ServeMux, which answers unclean paths ("//", "..") with a
// redirect instead of the protocol's error body.
func (s *Server) Handler() http.Handler {
	return s.recoverer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz" && r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
		case r.URL.Path == "/health/systems" && r.Method == http.MethodGet:
			s.serveHealth(w, r)
		default:
			s.serveCall(w, r)
		}
	}))
}

// recoverer turns a panic (a backend bug) into the protocol's error body instead of a dropped
// connection.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("connector call panicked", "path", r.URL.Path, "panic", fmt.Sprint(v))
				writeError(w, protoError(http.StatusServiceUnavailable, sap.ErrSystemUnavailable, "the connector failed on this call (see its log)"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func protoError(status int, code, format string, args ...any) *sap.Error {
	return &sap.Error{Status: status, ErrorDetail: sap.ErrorDetail{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func writeError(w http.ResponseWriter, e *sap.Error) {
	writeJSON(w, e.Status, sap.ErrorBody{Error: e.ErrorDetail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		status = http.StatusServiceUnavailable
		raw, _ = json.Marshal(sap.ErrorBody{Error: sap.ErrorDetail{Code: sap.ErrSystemUnavailable, Message: "the connector could not encode SAP's answer: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(raw, '\n'))
}

// keyValid compares in constant time against every configured key.
func (s *Server) keyValid(key string) bool {
	if key == "" {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	ok := 0
	for _, k := range s.keys {
		ok |= subtle.ConstantTimeCompare(sum[:], k[:])
	}
	return ok == 1
}

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if !s.keyValid(r.Header.Get(sap.HeaderConnectorKey)) {
		writeError(w, protoError(http.StatusUnauthorized, sap.ErrConnectorKey, "X-Connector-Key is missing or not one of the connector's keys"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"systems": CheckSystems(r.Context(), s.order, s.backends)})
}

// call is one protocol call in progress, for the log line.
type call struct {
	system, endpoint, user string
	replayed               bool
}

func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c := &call{}
	status, code := s.handle(w, r, c)
	s.log.Info("connector call", "system", c.system, "endpoint", c.endpoint, "user", c.user,
		"status", status, "code", code, "replayed", c.replayed, "duration_ms", time.Since(start).Milliseconds())
}

// handle answers one call and returns its status and error code for the log.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, c *call) (int, string) {
	fail := func(e *sap.Error) (int, string) {
		writeError(w, e)
		return e.Status, e.Code
	}
	c.system, c.endpoint, _ = strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !s.keyValid(r.Header.Get(sap.HeaderConnectorKey)) {
		return fail(protoError(http.StatusUnauthorized, sap.ErrConnectorKey, "X-Connector-Key is missing or not one of the connector's keys"))
	}
	sys, ok := s.systems[c.system]
	if !ok {
		return fail(protoError(http.StatusNotFound, sap.ErrNotFound, "no SAP system %q at this connector", c.system))
	}
	if !knownEndpoint(c.endpoint) {
		return fail(protoError(http.StatusNotFound, sap.ErrNotFound, "no connector endpoint %q (docs/connector-protocol.md)", c.endpoint))
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return fail(protoError(http.StatusMethodNotAllowed, sap.ErrBadRequest, "use POST with a JSON body"))
	}
	body, bad := readBody(w, r)
	if bad != nil {
		return fail(bad)
	}
	cred := Credentials{User: r.Header.Get(sap.HeaderSAPUser), Password: r.Header.Get(sap.HeaderSAPPassword)}
	if cred.User == "" {
		if sys.cfg.User == "" {
			return fail(protoError(http.StatusUnauthorized, sap.ErrLogonFailed, "no X-SAP-User was sent and system %s has no technical user in the connector's config", sys.cfg.ID))
		}
		cred = Credentials{User: sys.cfg.User, Password: sys.cfg.Password, Technical: true}
	}
	c.user = cred.User
	if e := sys.writeRefused(c.endpoint, body); e != nil {
		return fail(e)
	}
	key := r.Header.Get(sap.HeaderIdempotencyKey)
	if key == "" || !sap.Idempotent(c.endpoint) {
		status, data := s.run(r.Context(), sys, c.endpoint, cred, body)
		return writeAnswer(w, status, data)
	}
	if len(key) > sap.MaxIdempotencyKeyLength || !printableASCII(key) {
		return fail(protoError(http.StatusBadRequest, sap.ErrBadRequest, "%s must be at most %d printable ASCII characters", sap.HeaderIdempotencyKey, sap.MaxIdempotencyKeyLength))
	}
	scope := IdempotencyScope(sys.cfg.ID, r.Header.Get(sap.HeaderConnectorKey), cred.User, key)
	first, finish, err := s.store.Begin(r.Context(), scope, BodyHash(body))
	switch {
	case errors.Is(err, errKeyReused):
		return fail(protoError(http.StatusUnprocessableEntity, sap.ErrIdempotencyKeyReused, "%s %q was already used with a different request body; nothing ran", sap.HeaderIdempotencyKey, key))
	case err != nil:
		return fail(protoError(http.StatusGatewayTimeout, sap.ErrTimeout, "waited for the first request with this %s, which is still running", sap.HeaderIdempotencyKey))
	case first != nil:
		c.replayed = true
		return writeAnswer(w, first.Status, first.Data)
	}
	// A panicking backend must not leave the key claimed forever (finish runs once).
	defer finish(0, nil, false)
	status, data := s.run(r.Context(), sys, c.endpoint, cred, body)
	finish(status, data, ranInSAP(status, data))
	return writeAnswer(w, status, data)
}

func writeAnswer(w http.ResponseWriter, status int, data []byte) (int, string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
	_, _ = w.Write([]byte{'\n'})
	code := ""
	if status != http.StatusOK {
		var eb sap.ErrorBody
		_ = json.Unmarshal(data, &eb)
		code = eb.Error.Code
	}
	return status, code
}

// ranInSAP says whether an answer must be remembered: SAP answered (success, an ABAP exception,
// an unknown object, a missing authorization). A call refused before it ran — bad request,
// logon failure, not supported, unavailable, timeout — is not remembered, so its retry runs.
func ranInSAP(status int, data []byte) bool {
	switch status {
	case http.StatusOK, http.StatusNotFound, http.StatusForbidden:
		return true
	case http.StatusUnprocessableEntity:
		var eb sap.ErrorBody
		_ = json.Unmarshal(data, &eb)
		return eb.Error.Code != sap.ErrNotSupported && eb.Error.Code != sap.ErrIdempotencyKeyReused
	}
	return false
}

// run takes a slot of the system (waiting at most the queue timeout), calls the backend under
// the call timeout and encodes its answer as the protocol's body.
func (s *Server) run(ctx context.Context, sys *system, endpoint string, cred Credentials, body []byte) (int, []byte) {
	encodeErr := func(e *sap.Error) (int, []byte) {
		e.Message = redact(e.Message, cred.Password, sys.cfg.Password)
		e.Exception = redact(e.Exception, cred.Password, sys.cfg.Password)
		raw, _ := json.Marshal(sap.ErrorBody{Error: e.ErrorDetail})
		return e.Status, raw
	}
	queue := time.NewTimer(time.Duration(sys.cfg.Timeouts.Queue))
	defer queue.Stop()
	select {
	case sys.slots.pool <- struct{}{}:
	case <-queue.C:
		return encodeErr(protoError(http.StatusServiceUnavailable, sap.ErrSystemUnavailable,
			"all %d calls to system %s are busy (max_concurrent_calls); none freed up within %s", sys.slots.Cap(), sys.cfg.ID, time.Duration(sys.cfg.Timeouts.Queue)))
	case <-ctx.Done():
		return encodeErr(protoError(http.StatusGatewayTimeout, sap.ErrTimeout, "the caller gave up while waiting for a free call slot of system %s", sys.cfg.ID))
	}
	defer func() { <-sys.slots.pool }()
	// The backend's parallel reads for this call may use its slot while the call waits for them.
	cctx, cancel := context.WithTimeout(sys.slots.holding(ctx), time.Duration(sys.cfg.Timeouts.Call))
	defer cancel()
	decode := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(v); err != nil {
			return protoError(http.StatusBadRequest, sap.ErrBadRequest, "the %s request body is not valid JSON of its shape: %v", endpoint, err)
		}
		if dec.More() {
			return protoError(http.StatusBadRequest, sap.ErrBadRequest, "the %s request body has data after its JSON object", endpoint)
		}
		return nil
	}
	out, _, err := dispatch(cctx, sys.backend, endpoint, cred, decode)
	if err != nil {
		var se *sap.Error
		switch {
		case errors.As(err, &se):
			cp := *se
			return encodeErr(&cp)
		case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
			return encodeErr(protoError(http.StatusGatewayTimeout, sap.ErrTimeout, "system %s did not answer %s within %s", sys.cfg.ID, endpoint, time.Duration(sys.cfg.Timeouts.Call)))
		default:
			return encodeErr(protoError(http.StatusServiceUnavailable, sap.ErrSystemUnavailable, "system %s: %v", sys.cfg.ID, err))
		}
	}
	raw, err := json.Marshal(map[string]any{"data": out})
	if err != nil {
		return encodeErr(protoError(http.StatusServiceUnavailable, sap.ErrSystemUnavailable, "the connector could not encode SAP's answer: %v", err))
	}
	return http.StatusOK, raw
}

// readBody reads a JSON object of at most maxBody bytes in valid UTF-8.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *sap.Error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, protoError(http.StatusRequestEntityTooLarge, sap.ErrBadRequest, "the request body is larger than %d MiB", maxBody>>20)
	case err != nil:
		return nil, protoError(http.StatusBadRequest, sap.ErrBadRequest, "the request body could not be read: %v", err)
	}
	body := bytes.TrimSpace(buf.Bytes())
	if !utf8.Valid(body) {
		return nil, protoError(http.StatusBadRequest, sap.ErrBadRequest, "the request body is not valid UTF-8")
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, protoError(http.StatusBadRequest, sap.ErrBadRequest, "the request body must be a JSON object ({} when the endpoint takes no parameters)")
	}
	if !json.Valid(body) {
		return nil, protoError(http.StatusBadRequest, sap.ErrBadRequest, "the request body is not valid JSON")
	}
	return body, nil
}

// writeRefused applies read_only and write_function_modules before anything runs: write_table
// outside a test run, and execute_rfc with commit or of BAPI_TRANSACTION_COMMIT. Whether another
// function module writes only SAP knows; backends check that with System.WritesFunction.
func (sys *system) writeRefused(endpoint string, body []byte) *sap.Error {
	switch endpoint {
	case sap.EndpointWriteTable:
		var req struct {
			TestRun bool `json:"test_run"`
		}
		if json.Unmarshal(body, &req) == nil && !req.TestRun && sys.cfg.ReadOnly {
			return protoError(http.StatusForbidden, sap.ErrAuthorization, "system %s is read_only in the connector's config: write_table runs only with test_run", sys.cfg.ID)
		}
	case sap.EndpointExecuteRFC:
		var req struct {
			Function string `json:"function"`
			Commit   bool   `json:"commit"`
		}
		if json.Unmarshal(body, &req) != nil {
			return nil // the backend's decode reports it
		}
		commit := req.Commit || strings.EqualFold(req.Function, "BAPI_TRANSACTION_COMMIT")
		if commit && !sys.cfg.WritesFunction(req.Function) {
			if sys.cfg.ReadOnly {
				return protoError(http.StatusForbidden, sap.ErrAuthorization, "system %s is read_only in the connector's config: %s with a commit is refused", sys.cfg.ID, strings.ToUpper(req.Function))
			}
			return protoError(http.StatusForbidden, sap.ErrAuthorization, "%s is not in write_function_modules of system %s in the connector's config", strings.ToUpper(req.Function), sys.cfg.ID)
		}
	}
	return nil
}

func knownEndpoint(e string) bool {
	for _, k := range Endpoints {
		if k == e {
			return true
		}
	}
	return false
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// redact removes passwords from text SAP or a backend produced.
func redact(text string, secrets ...string) string {
	for _, secret := range secrets {
		if len(secret) >= 3 {
			text = strings.ReplaceAll(text, secret, "[redacted]")
		}
	}
	return text
}
