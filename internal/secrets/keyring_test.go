package secrets

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSealOpenRoundTripBoundToItsRecord(t *testing.T) {
	k, err := ParseKeys(NewKey(), "")
	require.NoError(t, err)
	id, ct := k.Seal([]byte("s3cr3t-pa55"), []byte("cred:u1:c1"))
	assert.Equal(t, k.CurrentKeyID(), id)
	assert.False(t, bytes.Contains(ct, []byte("s3cr3t")), "ciphertext never holds the plaintext")
	pt, err := k.Open(id, ct, []byte("cred:u1:c1"))
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t-pa55", string(pt))

	_, err = k.Open(id, ct, []byte("cred:u2:c1"))
	assert.ErrorIs(t, err, ErrCorrupt, "a value moved to another record does not open")
	ct[len(ct)-1] ^= 1
	_, err = k.Open(id, ct, []byte("cred:u1:c1"))
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestOldKeysStillOpenAfterRotation(t *testing.T) {
	oldKey, newKey := NewKey(), NewKey()
	before, err := ParseKeys(oldKey, "")
	require.NoError(t, err)
	id, ct := before.Seal([]byte("v"), nil)

	after, err := ParseKeys(newKey, "  ,"+oldKey)
	require.NoError(t, err)
	assert.NotEqual(t, id, after.CurrentKeyID())
	pt, err := after.Open(id, ct, nil)
	require.NoError(t, err)
	assert.Equal(t, "v", string(pt))

	newOnly, err := ParseKeys(newKey, "")
	require.NoError(t, err)
	_, err = newOnly.Open(id, ct, nil)
	assert.ErrorIs(t, err, ErrUnknownKey)
}

func TestBadKeysAreRejectedWithoutEchoingThem(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("too-short-key"))
	_, err := ParseKeys(short, "")
	require.ErrorContains(t, err, "SECRETS_KEY")
	assert.NotContains(t, err.Error(), short)
	_, err = ParseKeys("%%%not base64%%%", "")
	require.ErrorContains(t, err, "SECRETS_KEY")
	assert.NotContains(t, err.Error(), "%%%")
	_, err = ParseKeys(NewKey(), "nope")
	require.ErrorContains(t, err, "SECRETS_OLD_KEYS")
}
