package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
)

// A tool attempt ended by the worker's stop, a refused heartbeat or its deadline is cut off
// (retried, nothing recorded); one ended by the user's stop is not (the call ends stopped).
func TestAttemptCutOffTellsAStopFromALostAttempt(t *testing.T) {
	ended := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	assert.False(t, attemptCutOff(context.Background()), "still running")
	assert.True(t, attemptCutOff(ended(sdkworker.ErrWorkerShutdown)), "the worker stopped")
	assert.True(t, attemptCutOff(ended(errors.New("activity not found"))), "a refused heartbeat")
	assert.True(t, attemptCutOff(late), "out of time")
	assert.False(t, attemptCutOff(ended(temporal.NewCanceledError())), "the user stopped it")
}
