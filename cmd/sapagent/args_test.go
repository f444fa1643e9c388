package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A mistyped command line is refused before anything starts (no server on the default ports).
func TestCheckArgsRefusesWhatACommandDoesNotTake(t *testing.T) {
	for _, cmd := range []string{"api", "worker", "migrate", "offline-llm", "rotate-secrets"} {
		require.NoError(t, checkArgs(cmd, nil), cmd)
		require.ErrorContains(t, checkArgs(cmd, []string{"--user", "x"}), "takes no arguments", cmd)
	}
	require.ErrorContains(t, checkArgs("serve", nil), `unknown command "serve"`)
	require.NoError(t, checkArgs("token", []string{"--user", "x"}))
}
