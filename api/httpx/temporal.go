package httpx

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
)

// defaultTemporalTimeout applies when a handler's TemporalTimeout is unset.
const defaultTemporalTimeout = 5 * time.Second

// TemporalContext bounds one call to Temporal made while answering a request: the SDK retries
// an unreachable server until its context ends, which would otherwise be a minute or more.
func TemporalContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = defaultTemporalTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// LogTemporalFailure logs a failed Temporal call unless the client had already gone (its
// request context ended): that is no outage.
func LogTemporalFailure(ctx context.Context, log *slog.Logger, timeout time.Duration, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) || isDeadline(err) {
		log.Warn(what+": Temporal did not answer in time", "timeout", timeout, "error", err)
		return
	}
	log.Error(what, "error", err)
}

// isDeadline recognises the deadline as the SDK reports it (a service error, not the context's).
func isDeadline(err error) bool {
	var de *serviceerror.DeadlineExceeded
	return errors.As(err, &de)
}
