package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// devSecrets are generated once per data folder so a fresh clone works without configuring
// keys, while tokens, encrypted values and Temporal histories stay readable across restarts of
// the dev stack.
type devSecrets struct {
	JWTSecret  string `json:"jwt_secret"`
	SecretsKey string `json:"secrets_key"`
	PayloadKey string `json:"payload_key"`
}

// WithDevSecrets fills AUTH_JWT_SECRET, SECRETS_KEY and PAYLOAD_KEY from
// DATA_DIR/dev-secrets.json (creating it, or adding a key a file from an older version lacks)
// when they are unset in development. Production must configure them: it returns an error.
func (c Config) WithDevSecrets() (Config, error) {
	needAuth := c.AuthJWTSecret == "" && c.AuthJWKSURL == ""
	needKey := c.SecretsKey == ""
	needPayload := c.PayloadKey == ""
	if c.Environment == "production" {
		if needAuth || needKey || needPayload {
			return c, errors.New("production needs AUTH_JWT_SECRET or AUTH_JWKS_URL, SECRETS_KEY and PAYLOAD_KEY")
		}
		return c, c.strongSecrets()
	}
	if !needAuth && !needKey && !needPayload {
		return c, nil
	}
	path := filepath.Join(c.DataDir, "dev-secrets.json")
	var ds devSecrets
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &ds); err != nil {
			return c, fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		return c, err
	}
	changed := false
	for _, v := range []*string{&ds.JWTSecret, &ds.SecretsKey, &ds.PayloadKey} {
		if *v == "" {
			*v, changed = randomBase64(), true
		}
	}
	if changed {
		raw, _ := json.MarshalIndent(ds, "", "  ")
		if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
			return c, err
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return c, err
		}
	}
	if needAuth {
		c.AuthJWTSecret = ds.JWTSecret
	}
	if needKey {
		c.SecretsKey = ds.SecretsKey
	}
	if needPayload {
		c.PayloadKey = ds.PayloadKey
	}
	return c, nil
}

func randomBase64() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// MinJWTSecretBytes is the shortest HS256 secret production accepts: RFC 7518 asks for a key
// at least as long as the hash (256 bits); a short one can be brute-forced offline from any
// token, and then anyone can sign in as anyone.
const MinJWTSecretBytes = 32

// strongSecrets refuses weak keys in production — too short, not random (keyWeakness), one key
// for two purposes, or the dev stack's own — naming the variable but never echoing it.
func (c Config) strongSecrets() error {
	if c.AuthJWTSecret != "" {
		if len(c.AuthJWTSecret) < MinJWTSecretBytes {
			return fmt.Errorf("AUTH_JWT_SECRET is %d bytes; production needs at least %d random bytes (e.g. openssl rand -base64 48)", len(c.AuthJWTSecret), MinJWTSecretBytes)
		}
		// A text secret: hex or base64 text of random bytes has fewer distinct characters.
		if why := keyWeakness([]byte(c.AuthJWTSecret), 8); why != "" {
			return fmt.Errorf("AUTH_JWT_SECRET does not look random (%s); production needs a random secret (e.g. openssl rand -base64 48)", why)
		}
	}
	for _, k := range []struct{ name, value string }{{"SECRETS_KEY", c.SecretsKey}, {"PAYLOAD_KEY", c.PayloadKey}} {
		b, ok := decodeKey(k.value)
		if !ok || len(b) != 32 {
			return fmt.Errorf("%s must be the base64 of 32 random bytes (e.g. openssl rand -base64 32)", k.name)
		}
		if why := keyWeakness(b, minKeyBytes); why != "" {
			return fmt.Errorf("%s does not look random (%s); production needs the base64 of 32 random bytes (e.g. openssl rand -base64 32)", k.name, why)
		}
	}
	if err := c.reusedKey(); err != nil {
		return err
	}
	return c.devStackKey()
}
