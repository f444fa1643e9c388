package sap

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClientSendsHeadersAndDecodesData(t *testing.T) {
	var got http.Header
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, path = r.Header.Clone(), r.URL.Path
		var req TableSchemaRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		_ = json.NewEncoder(w).Encode(map[string]any{"data": TableSchema{Table: req.Table, Description: "General Material Data"}})
	}))
	defer srv.Close()
	c := NewClient(Guard{}, 5*time.Second)
	var schema TableSchema
	err := c.Call(context.Background(), Target{URL: srv.URL + "/ECC/", ConnectorKey: "k1", SAPUser: "DEV", SAPPassword: "pw"},
		EndpointTableSchema, TableSchemaRequest{Table: "MARA"}, &schema)
	require.NoError(t, err)
	assert.Equal(t, "MARA", schema.Table)
	assert.Equal(t, "/ECC/table_schema", path)
	assert.Equal(t, "k1", got.Get(HeaderConnectorKey))
	assert.Equal(t, "DEV", got.Get(HeaderSAPUser))
	assert.Equal(t, "pw", got.Get(HeaderSAPPassword))
}

func TestClientMapsFailures(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/auth/read_table", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":"AUTHORIZATION_FAILED","message":"No authorization for table BKPF"}}`))
	})
	mux.HandleFunc("/redirect/read_table", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest", http.StatusFound)
	})
	mux.HandleFunc("/plain/read_table", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "gateway exploded", http.StatusBadGateway)
	})
	mux.HandleFunc("/slow/read_table", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	mux.HandleFunc("/notdata/read_table", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"rows":[]}`)) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewClient(Guard{}, 300*time.Millisecond)
	call := func(prefix string) error {
		return c.Call(context.Background(), Target{URL: srv.URL + prefix, SAPUser: "RESTRICTED", SAPPassword: "s3cret-pw"}, EndpointReadTable, ReadTableRequest{Table: "BKPF"}, &ReadTableResponse{})
	}

	err := call("/auth")
	var sapErr *Error
	require.ErrorAs(t, err, &sapErr)
	assert.Equal(t, ErrAuthorization, sapErr.Code)
	assert.Equal(t, "SAP authorization failed: No authorization for table BKPF", Describe(err))

	err = call("/redirect")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redirect")

	err = call("/plain")
	require.ErrorAs(t, err, &sapErr)
	assert.Equal(t, ErrSystemUnavailable, sapErr.Code)

	err = call("/slow")
	require.ErrorAs(t, err, &sapErr)
	assert.Equal(t, ErrTimeout, sapErr.Code)

	err = call("/notdata")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `{"data": …}`)

	srv.Close()
	err = call("/auth")
	require.ErrorAs(t, err, &sapErr)
	assert.Equal(t, ErrSystemUnavailable, sapErr.Code)

	for _, prefix := range []string{"/auth", "/redirect", "/plain", "/slow", "/notdata"} {
		if err := call(prefix); err != nil {
			assert.NotContains(t, err.Error(), "s3cret-pw")
		}
	}
}

func TestClientRefusesGuardedURLsBeforeSending(t *testing.T) {
	err := NewClient(Guard{Production: true}, time.Second).Call(context.Background(), Target{URL: "http://169.254.169.254"}, EndpointSystemInfo, struct{}{}, nil)
	assert.True(t, errors.Is(err, ErrBlocked))
}

// Writes carry Idempotency-Key "<key>/<n>" when the context has a key: the n-th request to a
// writing endpoint under that key. Reads never carry one, nor do requests without a key.
func TestClientSendsIdempotencyKeysOnWrites(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get(HeaderIdempotencyKey))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"data":{}}`))
	}))
	defer srv.Close()
	c := NewClient(Guard{}, 5*time.Second).Connector(Target{URL: srv.URL})
	send := func(ctx context.Context, endpoint string) {
		require.NoError(t, c.Call(ctx, endpoint, struct{}{}, nil))
	}
	ctx := WithIdempotencyKey(context.Background(), "call_7")
	assert.Equal(t, "call_7", IdempotencyKey(ctx))
	send(ctx, EndpointExecuteRFC)
	send(ctx, EndpointReadTable)
	send(ctx, EndpointExecuteRFC)
	send(ctx, EndpointWriteTable)
	send(context.Background(), EndpointExecuteRFC)
	// A retry of the tool call starts the numbering again, so its requests repeat the keys.
	send(WithIdempotencyKey(context.Background(), "call_7"), EndpointExecuteRFC)
	assert.Equal(t, []string{
		"/execute_rfc call_7/1", "/read_table ", "/execute_rfc call_7/2", "/write_table call_7/3",
		"/execute_rfc ", "/execute_rfc call_7/1",
	}, got)
	assert.Equal(t, "", IdempotencyKey(WithIdempotencyKey(context.Background(), "")))
}

// Answers no retry can make usable are ErrMalformedAnswer with the reason; a deep structure
// inside a string is not nesting.
func TestClientNamesUnusableAnswers(t *testing.T) {
	answers := map[string]string{
		"/deep":      `{"data":` + strings.Repeat("[", MaxAnswerDepth+1) + strings.Repeat("]", MaxAnswerDepth+1) + `}`,
		"/envelope":  `{"items":[]}`,
		"/shape":     `{"data":{"items":"x"}}`,
		"/in-string": `{"data":{"items":[{"name":"` + strings.Repeat(`[{\"`, 100) + `"}]}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(answers[r.URL.Path]))
	}))
	defer srv.Close()
	c := NewClient(Guard{}, 5*time.Second)
	call := func(endpoint string) error {
		var page IndexPage
		return c.Call(context.Background(), Target{URL: srv.URL}, endpoint, struct{}{}, &page)
	}
	for endpoint, reason := range map[string]string{"deep": "nested more than 64 levels deep", "envelope": `not {"data": …}`, "shape": "unexpected answer"} {
		err := call(endpoint)
		require.ErrorIs(t, err, ErrMalformedAnswer, endpoint)
		assert.Contains(t, err.Error(), reason)
	}
	assert.NoError(t, call("in-string"))
}

// A connector that echoes the request's key or password in its error does not put them into
// the error the caller logs, records in Temporal and shows on a waiting sync run.
func TestClientRedactsSecretsAConnectorEchoes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: ErrorDetail{Code: ErrSystemUnavailable,
			Message:   "down; key " + r.Header.Get(HeaderConnectorKey) + " password " + r.Header.Get(HeaderSAPPassword),
			Exception: "CX_" + r.Header.Get(HeaderConnectorKey)}})
	}))
	defer srv.Close()
	err := NewClient(Guard{}, 5*time.Second).Call(context.Background(), Target{URL: srv.URL, ConnectorKey: "sim-ecc-key", SAPUser: "DEV", SAPPassword: "s3cret!"},
		EndpointSystemInfo, struct{}{}, nil)
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "down; key [redacted] password [redacted]", se.Message)
	assert.NotContains(t, err.Error(), "sim-ecc-key")
	assert.NotContains(t, err.Error(), "s3cret!")
}
