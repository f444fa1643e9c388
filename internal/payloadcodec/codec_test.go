package payloadcodec

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func newKey(t testing.TB) []byte {
	k := make([]byte, 32)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return k
}

func b64(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

type message struct {
	Content string
	UserID  string
}

// Every kind of value the SDK's default converter produces (nil, bytes, proto, JSON) comes back
// equal through encrypt and decrypt, and the sealed payload shows none of the plaintext.
func TestEveryEncodingRoundTripsAndIsUnreadable(t *testing.T) {
	c, err := New(newKey(t))
	require.NoError(t, err)
	dc := c.DataConverter()
	secret := "customer KUNNR 4711 owes 12,345.00 EUR"
	values := []any{nil, []byte(secret), wrapperspb.String(secret), message{Content: secret, UserID: "u1"}, secret}
	for _, v := range values {
		p, err := dc.ToPayload(v)
		require.NoError(t, err)
		assert.Equal(t, Encoding, string(p.Metadata[converter.MetadataEncoding]))
		assert.Equal(t, c.CurrentKeyID(), string(p.Metadata[MetadataKeyID]))
		raw, err := proto.Marshal(p)
		require.NoError(t, err)
		assert.False(t, bytes.Contains(raw, []byte("KUNNR 4711")), "%T readable in the sealed payload", v)

		plain, err := converter.GetDefaultDataConverter().ToPayload(v)
		require.NoError(t, err)
		opened, err := c.Decode([]*commonpb.Payload{p})
		require.NoError(t, err)
		assert.True(t, proto.Equal(plain, opened[0]), "%T: metadata and data round-trip exactly", v)
	}
	var got message
	p, _ := dc.ToPayload(message{Content: secret})
	require.NoError(t, dc.FromPayload(p, &got))
	assert.Equal(t, secret, got.Content)
	var pb wrapperspb.StringValue
	p, _ = dc.ToPayload(wrapperspb.String(secret))
	require.NoError(t, dc.FromPayload(p, &pb))
	assert.Equal(t, secret, pb.Value)
	var raw []byte
	p, _ = dc.ToPayload([]byte(secret))
	require.NoError(t, dc.FromPayload(p, &raw))
	assert.Equal(t, secret, string(raw))
}

func TestFailureMessagesAreEncryptedAndComeBack(t *testing.T) {
	c, err := New(newKey(t))
	require.NoError(t, err)
	fc := c.FailureConverter()
	f := fc.ErrorToFailure(temporal.NewApplicationError("row KUNNR 4711 rejected", "SAPError"))
	assert.NotContains(t, f.Message, "4711")
	raw, _ := proto.Marshal(f)
	assert.False(t, bytes.Contains(raw, []byte("4711")))
	assert.ErrorContains(t, fc.FailureToError(f), "row KUNNR 4711 rejected")
}

func TestOldKeysStillDecryptAfterRotation(t *testing.T) {
	oldKey, newKeyBytes := newKey(t), newKey(t)
	before, err := Parse(b64(oldKey), "")
	require.NoError(t, err)
	sealed, err := before.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"hello"`)}})
	require.NoError(t, err)

	after, err := Parse(b64(newKeyBytes), " "+b64(oldKey)+" ,")
	require.NoError(t, err)
	assert.NotEqual(t, before.CurrentKeyID(), after.CurrentKeyID())
	opened, err := after.Decode(sealed)
	require.NoError(t, err)
	assert.Equal(t, `"hello"`, string(opened[0].Data))
	resealed, err := after.Encode(opened)
	require.NoError(t, err)
	assert.Equal(t, after.CurrentKeyID(), string(resealed[0].Metadata[MetadataKeyID]), "new payloads use the current key")

	// Once the old key is dropped, its payloads fail with an error that says so.
	dropped, err := Parse(b64(newKeyBytes), "")
	require.NoError(t, err)
	_, err = dropped.Decode(sealed)
	require.ErrorIs(t, err, ErrUnknownKey)
	assert.Contains(t, err.Error(), before.CurrentKeyID())
}

func TestTamperedPayloadsFail(t *testing.T) {
	c, err := New(newKey(t))
	require.NoError(t, err)
	sealed, err := c.Encode([]*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"pay 100"`)}})
	require.NoError(t, err)
	flipped := proto.Clone(sealed[0]).(*commonpb.Payload)
	flipped.Data[len(flipped.Data)-1] ^= 1
	truncated := proto.Clone(sealed[0]).(*commonpb.Payload)
	truncated.Data = truncated.Data[:5]
	noKeyID := proto.Clone(sealed[0]).(*commonpb.Payload)
	delete(noKeyID.Metadata, MetadataKeyID)
	for name, p := range map[string]*commonpb.Payload{"flipped bit": flipped, "truncated": truncated} {
		_, err := c.Decode([]*commonpb.Payload{p})
		assert.ErrorIs(t, err, ErrCorrupt, name)
	}
	_, err = c.Decode([]*commonpb.Payload{noKeyID})
	assert.ErrorIs(t, err, ErrUnknownKey)
}

func TestPlaintextPayloadsPassThroughDecode(t *testing.T) {
	c, err := New(newKey(t))
	require.NoError(t, err)
	plain := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"a":1}`)}
	got, err := c.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	assert.Same(t, plain, got[0], "histories from before encryption stay readable")
}

func TestBadKeysAreRefusedWithoutEchoingThem(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	for _, tc := range []struct{ cur, old, want string }{
		{"", "", "PAYLOAD_KEY"},
		{short, "", "PAYLOAD_KEY: key must be 32 bytes"},
		{"%%%not-base64%%%", "", "PAYLOAD_KEY: key is not valid base64"},
		{b64(newKey(t)), short, "PAYLOAD_OLD_KEYS"},
	} {
		_, err := Parse(tc.cur, tc.old)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), short)
	}
}
