package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomKey(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// strongProduction is a production configuration with keys made as README and
// docker-compose.yml say (openssl rand -base64 32).
func strongProduction(dataDir string) map[string]string {
	return map[string]string{"ENVIRONMENT": "production", "DATA_DIR": dataDir,
		"AUTH_JWT_SECRET": base64.StdEncoding.EncodeToString(randomKey(32)),
		"SECRETS_KEY":     base64.StdEncoding.EncodeToString(randomKey(32)),
		"PAYLOAD_KEY":     base64.StdEncoding.EncodeToString(randomKey(32))}
}

func checkSecrets(t *testing.T, vars map[string]string) error {
	t.Helper()
	c, err := load(env(vars))
	require.NoError(t, err)
	_, err = c.WithDevSecrets()
	return err
}

// Issue 18, finding 8: production started with AUTH_JWT_SECRET of 32 × "a", all-zero keys, one
// key for several purposes and the dev stack's own secret. Each is refused, naming the
// variable and never the value.
func TestProductionRefusesGuessableReusedAndDevStackKeys(t *testing.T) {
	dir := t.TempDir()
	dev, err := load(env(map[string]string{"DATA_DIR": dir}))
	require.NoError(t, err)
	devKeys, err := dev.WithDevSecrets() // the dev stack ran in this data folder
	require.NoError(t, err)

	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	pattern := b64([]byte(strings.Repeat("0123456789abcdef", 2)))
	sequence := make([]byte, 32)
	for i := range sequence {
		sequence[i] = byte(i * 7)
	}
	shared := b64(randomKey(32))
	sharedBytes, _ := decodeKey(shared)
	for _, tc := range []struct {
		name string
		set  map[string]string
		want string
	}{
		{"32 × a", map[string]string{"AUTH_JWT_SECRET": strings.Repeat("a", 32)}, "AUTH_JWT_SECRET does not look random (it repeats a pattern of 1 bytes)"},
		{"a short pattern", map[string]string{"AUTH_JWT_SECRET": strings.Repeat("Tr0ub4dor&3", 4)}, "AUTH_JWT_SECRET does not look random (it repeats a pattern of 11 bytes)"},
		{"a run of letters", map[string]string{"AUTH_JWT_SECRET": "abcdefghijklmnopqrstuvwxyz0123456789"}, "AUTH_JWT_SECRET does not look random (it has about"},
		{"two letters", map[string]string{"AUTH_JWT_SECRET": strings.Repeat("ab", 20) + "ba"}, "AUTH_JWT_SECRET does not look random"},
		{"all-zero SECRETS_KEY", map[string]string{"SECRETS_KEY": b64(make([]byte, 32))}, "SECRETS_KEY does not look random (it repeats a pattern of 1 bytes)"},
		{"all-zero PAYLOAD_KEY", map[string]string{"PAYLOAD_KEY": base64.RawURLEncoding.EncodeToString(make([]byte, 32))}, "PAYLOAD_KEY does not look random"},
		{"a repeated pattern", map[string]string{"PAYLOAD_KEY": pattern}, "PAYLOAD_KEY does not look random (it repeats a pattern of 16 bytes)"},
		{"an arithmetic sequence", map[string]string{"SECRETS_KEY": b64(sequence)}, "SECRETS_KEY does not look random (it has about 0 bits"},
		{"one key for secrets and payloads", map[string]string{"SECRETS_KEY": shared, "PAYLOAD_KEY": shared}, "SECRETS_KEY and PAYLOAD_KEY hold the same key"},
		{"the same bytes in another alphabet", map[string]string{"SECRETS_KEY": shared, "PAYLOAD_KEY": base64.RawURLEncoding.EncodeToString(sharedBytes)}, "SECRETS_KEY and PAYLOAD_KEY hold the same key"},
		{"the token secret as a key", map[string]string{"AUTH_JWT_SECRET": shared, "PAYLOAD_KEY": shared}, "AUTH_JWT_SECRET and PAYLOAD_KEY hold the same key"},
		{"an old secrets key as the payload key", map[string]string{"SECRETS_OLD_KEYS": b64(randomKey(32)) + "," + shared, "PAYLOAD_KEY": shared}, "PAYLOAD_KEY and SECRETS_OLD_KEYS hold the same key"},
		{"an old payload key as the token secret", map[string]string{"AUTH_JWT_SECRET": shared, "PAYLOAD_OLD_KEYS": shared}, "AUTH_JWT_SECRET and PAYLOAD_OLD_KEYS hold the same key"},
		{"the dev stack's token secret", map[string]string{"AUTH_JWT_SECRET": devKeys.AuthJWTSecret}, "AUTH_JWT_SECRET is a key of the dev stack"},
		{"the dev stack's payload key", map[string]string{"PAYLOAD_KEY": devKeys.PayloadKey}, "PAYLOAD_KEY is a key of the dev stack"},
		{"the dev stack's secrets key, retired", map[string]string{"SECRETS_OLD_KEYS": devKeys.SecretsKey}, "SECRETS_OLD_KEYS is a key of the dev stack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := strongProduction(dir)
			for k, v := range tc.set {
				vars[k] = v
			}
			err := checkSecrets(t, vars)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			for k, v := range tc.set {
				for _, part := range strings.Split(v, ",") {
					assert.NotContains(t, err.Error(), part, "the value of %s is never echoed", k)
				}
			}
		})
	}
}

// Keys made as the documentation says pass, whatever the draw: the thresholds sit far below
// what random keys reach. Old keys may be weak (rotation away from them must stay possible).
func TestProductionAcceptsRandomKeys(t *testing.T) {
	dir := t.TempDir()
	for range 2000 {
		require.NoError(t, checkSecrets(t, strongProduction(dir)))
	}
	for range 500 {
		vars := strongProduction(dir)
		vars["AUTH_JWT_SECRET"] = hex.EncodeToString(randomKey(32)) // openssl rand -hex 32
		require.NoError(t, checkSecrets(t, vars))
		vars["AUTH_JWT_SECRET"] = base64.StdEncoding.EncodeToString(randomKey(48)) // openssl rand -base64 48
		require.NoError(t, checkSecrets(t, vars))
		vars["AUTH_JWT_SECRET"] = base64.RawURLEncoding.EncodeToString(randomKey(30)) // a 40-character provider secret
		require.NoError(t, checkSecrets(t, vars))
	}
	vars := strongProduction(dir)
	vars["SECRETS_OLD_KEYS"] = base64.StdEncoding.EncodeToString(make([]byte, 32))
	vars["PAYLOAD_OLD_KEYS"] = vars["PAYLOAD_KEY"] // the current key listed again: same purpose
	assert.NoError(t, checkSecrets(t, vars))
	// A JWKS setup has no token secret.
	vars = strongProduction(dir)
	delete(vars, "AUTH_JWT_SECRET")
	vars["AUTH_JWKS_URL"] = "https://login.example.com/.well-known/jwks.json"
	assert.NoError(t, checkSecrets(t, vars))
	// Without a data folder of the dev stack nothing is compared.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "dev-secrets.json")))
	assert.NoError(t, checkSecrets(t, strongProduction(dir)))
}
