package config

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// minKeyBits is the least entropy production accepts in a key or secret, as estimated from its
// own bytes (Shannon entropy of the bytes and of the steps between neighbours, times the length,
// whichever is lower). Random keys are far above it: over 200,000 samples the lowest estimate of
// 32 random bytes was 133 bits, of `openssl rand -base64 32` 189, of `-hex 32` 216; a 32-character
// random alphanumeric secret 122. 32 × "a" is 0, "abcd" × 8 is 64, "abc…z012345" is 6.
const minKeyBits = 90

// minKeyBytes is the fewest distinct bytes a 32-byte key may have (random: 24 or more).
const minKeyBytes = 16

// keyWeakness says why b does not look random ("" when it does). It names no byte of b.
func keyWeakness(b []byte, minDistinct int) string {
	if p := period(b); p <= len(b)/2 {
		return fmt.Sprintf("it repeats a pattern of %d bytes", p)
	}
	distinct := map[byte]bool{}
	for _, x := range b {
		distinct[x] = true
	}
	if len(distinct) < minDistinct {
		return fmt.Sprintf("it has only %d different bytes", len(distinct))
	}
	steps := make([]byte, 0, len(b))
	for i := 1; i < len(b); i++ {
		steps = append(steps, b[i]-b[i-1])
	}
	if bits := min(entropyBits(b), entropyBits(steps)); bits < minKeyBits {
		return fmt.Sprintf("it has about %.0f bits of entropy (at least %d needed)", bits, minKeyBits)
	}
	return ""
}

// period is the shortest p such that b repeats every p bytes (len(b) when it does not).
func period(b []byte) int {
	for p := 1; p < len(b); p++ {
		repeats := true
		for i := p; i < len(b) && repeats; i++ {
			repeats = b[i] == b[i-p]
		}
		if repeats {
			return p
		}
	}
	return len(b)
}

// entropyBits is the Shannon entropy of b's byte frequencies times its length.
func entropyBits(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	var counts [256]int
	for _, x := range b {
		counts[x]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(b))
			h -= p * math.Log2(p)
		}
	}
	return h * float64(len(b))
}

// decodeKey is a key's bytes in any of the base64 alphabets the keyrings accept.
func decodeKey(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// namedKey is one configured secret: the variable it came from and what it is for.
type namedKey struct {
	name, purpose, value string
}

// keysByPurpose lists every configured secret with its purpose (old keys included).
func (c Config) keysByPurpose() []namedKey {
	var out []namedKey
	if c.AuthJWTSecret != "" {
		out = append(out, namedKey{"AUTH_JWT_SECRET", "tokens", c.AuthJWTSecret})
	}
	out = append(out, namedKey{"SECRETS_KEY", "secrets", c.SecretsKey}, namedKey{"PAYLOAD_KEY", "payloads", c.PayloadKey})
	for _, k := range splitList(c.SecretsOldKeys) {
		out = append(out, namedKey{"SECRETS_OLD_KEYS", "secrets", k})
	}
	for _, k := range splitList(c.PayloadOldKeys) {
		out = append(out, namedKey{"PAYLOAD_OLD_KEYS", "payloads", k})
	}
	return out
}

// sameKey reports whether two configured values are one key: the same text, or the same
// bytes in different base64 alphabets.
func sameKey(a, b string) bool {
	if a == b {
		return true
	}
	ab, aok := decodeKey(a)
	bb, bok := decodeKey(b)
	return aok && bok && len(ab) > 0 && string(ab) == string(bb)
}

// reusedKey refuses one key serving two purposes: a leak of one (a token secret in a proxy's
// config, say) would then also open the stored SAP passwords or the Temporal histories.
func (c Config) reusedKey() error {
	keys := c.keysByPurpose()
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if a.purpose != b.purpose && sameKey(a.value, b.value) {
				return fmt.Errorf("%s and %s hold the same key; production needs a different random key for each (e.g. openssl rand -base64 32 for each)", a.name, b.name)
			}
		}
	}
	return nil
}

// devStackKey refuses a key of the dev stack's generated file (DATA_DIR/dev-secrets.json): it
// lies unencrypted in a developer's data folder, so it is no production secret.
func (c Config) devStackKey() error {
	raw, err := os.ReadFile(filepath.Join(c.DataDir, "dev-secrets.json"))
	if err != nil {
		return nil // no dev stack ran here
	}
	var ds devSecrets
	if json.Unmarshal(raw, &ds) != nil {
		return nil
	}
	for _, k := range c.keysByPurpose() {
		for _, dev := range []string{ds.JWTSecret, ds.SecretsKey, ds.PayloadKey} {
			if dev != "" && sameKey(strings.TrimSpace(k.value), dev) {
				return fmt.Errorf("%s is a key of the dev stack (%s); production needs its own random keys (e.g. openssl rand -base64 32)",
					k.name, filepath.Join(c.DataDir, "dev-secrets.json"))
			}
		}
	}
	return nil
}
