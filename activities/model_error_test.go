package activities

import (
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/workflows"
)

func TestModelErrorsAreClassifiedAndNeverEchoCredentials(t *testing.T) {
	cases := []struct {
		status    int
		retryable bool
	}{{400, false}, {401, false}, {403, false}, {404, false}, {408, true}, {429, true}, {500, true}, {503, true}}
	for _, tc := range cases {
		err := modelError(&openai.APIError{HTTPStatusCode: tc.status, Message: "Incorrect API key provided: sk-abc***xyz"})
		var appErr *temporal.ApplicationError
		isApp := errors.As(err, &appErr)
		assert.Equal(t, !tc.retryable, isApp && appErr.NonRetryable(), "HTTP %d", tc.status)
		if tc.retryable {
			// Retried by the workflow within the model's own budget, not by Temporal forever.
			assert.Equal(t, workflows.ErrTypeModelUnavailable, appErr.Type(), "HTTP %d", tc.status)
		}
		if tc.status == 401 || tc.status == 403 {
			assert.NotContains(t, err.Error(), "sk-", "HTTP %d", tc.status)
		}
	}
	err := modelError(&openai.RequestError{HTTPStatusCode: 422, Err: errors.New("bad")})
	var appErr *temporal.ApplicationError
	assert.True(t, errors.As(err, &appErr) && appErr.NonRetryable())
	require.True(t, errors.As(modelError(errors.New("connection reset")), &appErr))
	assert.Equal(t, workflows.ErrTypeModelUnavailable, appErr.Type(), "network errors are tried again")
	assert.False(t, appErr.NonRetryable())
}
