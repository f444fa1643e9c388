// Package secrets encrypts SAP passwords and connection secrets at rest with AES-256-GCM.
// Every ciphertext is stored with the ID of the key that sealed it, so a new key can be
// introduced while values sealed with older keys still open; `sapagent rotate-secrets`
// re-seals them under the current key.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownKey means a value was sealed with a key this keyring does not hold.
var ErrUnknownKey = errors.New("secrets: value was encrypted with a key that is not configured")

// ErrCorrupt means a value failed authentication (tampered with, or moved to another row).
var ErrCorrupt = errors.New("secrets: value cannot be decrypted (corrupt or bound to another record)")

// Keyring holds the current key and older keys that may still be needed to decrypt.
type Keyring struct {
	currentID string
	aeads     map[string]cipher.AEAD
}

// KeyID is the public identifier of a key: the first 16 hex digits of its SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}

// NewKeyring builds a keyring from raw 32-byte keys; the first is the current one.
func NewKeyring(current []byte, old ...[]byte) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for i, key := range append([][]byte{current}, old...) {
		if len(key) != 32 {
			return nil, fmt.Errorf("secrets: key %d is %d bytes; AES-256 needs 32", i, len(key))
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := KeyID(key)
		if i == 0 {
			k.currentID = id
		}
		k.aeads[id] = aead
	}
	return k, nil
}

// ParseKeys builds a keyring from SECRETS_KEY (base64) and SECRETS_OLD_KEYS (comma-separated
// base64). Errors name the variable but never echo the key material.
func ParseKeys(current, old string) (*Keyring, error) {
	cur, olds, err := DecodeKeys(current, old, "SECRETS_KEY", "SECRETS_OLD_KEYS")
	if err != nil {
		return nil, err
	}
	return NewKeyring(cur, olds...)
}

// DecodeKeys decodes a current key and a comma-separated list of old ones (base64 of 32 bytes
// each). Errors name the variable (currentVar, oldVar) but never echo key material.
func DecodeKeys(current, old, currentVar, oldVar string) ([]byte, [][]byte, error) {
	cur, err := decodeKey(current)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", currentVar, err)
	}
	var olds [][]byte
	for _, s := range strings.Split(old, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := decodeKey(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", oldVar, err)
		}
		olds = append(olds, k)
	}
	return cur, olds, nil
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("key is not set")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("key must be 32 bytes (base64 of 32 random bytes), got %d bytes", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("key is not valid base64")
}

// NewKey returns a random key, base64-encoded (for SECRETS_KEY).
func NewKey() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// CurrentKeyID is the ID new values are sealed with.
func (k *Keyring) CurrentKeyID() string { return k.currentID }

// Seal encrypts plaintext under the current key. aad binds the value to its record (e.g.
// "connection_secret:<connID>:<name>") so a ciphertext copied to another row does not open.
func (k *Keyring) Seal(plaintext, aad []byte) (keyID string, ciphertext []byte) {
	aead := k.aeads[k.currentID]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return k.currentID, aead.Seal(nonce, nonce, plaintext, aad)
}

// Open decrypts a value sealed by Seal with the key it names.
func (k *Keyring) Open(keyID string, ciphertext, aad []byte) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, ErrUnknownKey
	}
	if len(ciphertext) < aead.NonceSize() {
		return nil, ErrCorrupt
	}
	nonce, sealed := ciphertext[:aead.NonceSize()], ciphertext[aead.NonceSize():]
	out, err := aead.Open(nil, nonce, sealed, aad)
	if err != nil {
		return nil, ErrCorrupt
	}
	return out, nil
}

// ConnectionSecretAAD binds a connection secret to its connection and name.
func ConnectionSecretAAD(connectionID, name string) []byte {
	return []byte("connection_secret:" + connectionID + ":" + name)
}

// CredentialAAD binds a user's SAP password to the user and the connection.
func CredentialAAD(userID, connectionID string) []byte {
	return []byte("user_credential:" + userID + ":" + connectionID)
}
