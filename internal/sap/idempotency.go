package sap

import (
	"context"
	"strconv"
	"sync/atomic"
)

// MaxIdempotencyKeyLength bounds a key; connectors may refuse longer ones with BAD_REQUEST.
const MaxIdempotencyKeyLength = 255

type idempotencyContextKey struct{}

// idempotencyScope is one key and the count of keyed requests made under it.
type idempotencyScope struct {
	key string
	n   atomic.Int64
}

// WithIdempotencyKey makes the write requests sent with ctx carry Idempotency-Key headers
// derived from key ("<agent>/<tool call>"): the n-th request to a writing endpoint (execute_rfc,
// write_table) gets "<key>/<n>". A retried tool call that repeats the same requests in the same
// order therefore repeats the same keys, and the connector answers each from memory instead of
// writing again. Requests under one key must be sent one after another, not in parallel, or
// their numbering is not reproducible. An empty key leaves ctx unchanged.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, idempotencyContextKey{}, &idempotencyScope{key: key})
}

// IdempotencyKey is the key ctx carries ("" for none).
func IdempotencyKey(ctx context.Context) string {
	if s, ok := ctx.Value(idempotencyContextKey{}).(*idempotencyScope); ok {
		return s.key
	}
	return ""
}

// Idempotent reports whether requests to endpoint carry an Idempotency-Key: the endpoints that
// can change data. execute_rfc is keyed whatever the function, because only the connector knows
// which function modules write.
func Idempotent(endpoint string) bool {
	return endpoint == EndpointExecuteRFC || endpoint == EndpointWriteTable
}

// RequestIdempotencyKey takes the Idempotency-Key for the next request to endpoint sent with
// ctx: "" when ctx carries no key or the endpoint never writes. Each call numbers one request,
// so call it once per request sent.
func RequestIdempotencyKey(ctx context.Context, endpoint string) string {
	s, ok := ctx.Value(idempotencyContextKey{}).(*idempotencyScope)
	if !ok || !Idempotent(endpoint) {
		return ""
	}
	return s.key + "/" + strconv.FormatInt(s.n.Add(1), 10)
}
