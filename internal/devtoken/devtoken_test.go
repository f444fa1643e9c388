package devtoken

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
)

func TestRunMintsATokenTheAPIAccepts(t *testing.T) {
	cfg := config.Config{AuthJWTSecret: "a-secret-long-enough-for-hs256-signing", DataDir: t.TempDir()}
	var out bytes.Buffer
	require.NoError(t, Run(cfg, []string{"--user", "alice", "--ttl", "1h"}, &out))
	v, err := auth.NewVerifier(context.Background(), auth.Options{Secret: []byte(cfg.AuthJWTSecret)})
	require.NoError(t, err)
	user, err := v.Verify(strings.TrimSpace(out.String()))
	require.NoError(t, err)
	require.Equal(t, "alice", user)
}

func TestRunRefusesWhatItDoesNotTake(t *testing.T) {
	cfg := config.Config{AuthJWTSecret: "a-secret-long-enough-for-hs256-signing", DataDir: t.TempDir()}
	for name, args := range map[string][]string{
		"no user":        {},
		"stray argument": {"--user", "alice", "extra"},
		"unknown flag":   {"--user", "alice", "--port", "9"},
		"negative ttl":   {"--user", "alice", "--ttl", "-1h"},
	} {
		var out bytes.Buffer
		err := Run(cfg, args, &out)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "token", name)
		require.Empty(t, out.String(), name)
	}
}
