// Package payloadcodec encrypts everything the product's workflows carry (inputs, results,
// update and query arguments, heartbeat details, failure messages) before it reaches Temporal,
// with AES-256-GCM under PAYLOAD_KEY. Each encrypted payload names the key that sealed it, so a
// new key can be introduced while histories written under older keys still decrypt
// (PAYLOAD_OLD_KEYS). Search attributes, workflow IDs and type names are not payloads and stay
// readable: operators find conversations by them.
package payloadcodec

import (
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/sapagent/sapagent/internal/secrets"
)

// Metadata of an encrypted payload. The SDK's own metadata (encoding, messageType) is inside
// the ciphertext, with the data, so every encoding round-trips unchanged.
const (
	Encoding      = "binary/encrypted"
	MetadataKeyID = "encryption-key-id"
)

// aad separates payload ciphertexts from other uses of AES-GCM in the product: a value sealed
// by internal/secrets under the same key never opens as a payload.
var aad = []byte("sapagent:temporal-payload")

// ErrUnknownKey means a payload was sealed with a key that is neither PAYLOAD_KEY nor in
// PAYLOAD_OLD_KEYS.
var ErrUnknownKey = errors.New("payload was encrypted with a key that is not configured (PAYLOAD_KEY / PAYLOAD_OLD_KEYS)")

// ErrCorrupt means a payload failed authentication: tampered with or truncated.
var ErrCorrupt = errors.New("payload cannot be decrypted (tampered with or corrupt)")

// Codec is a converter.PayloadCodec: Encode seals with the current key, Decode opens with
// whichever configured key the payload names.
type Codec struct {
	keys *secrets.Keyring
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New builds a codec from raw 32-byte keys; the first is the current one.
func New(current []byte, old ...[]byte) (*Codec, error) {
	k, err := secrets.NewKeyring(current, old...)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "secrets: ", "payloadcodec: ", 1))
	}
	return &Codec{keys: k}, nil
}

// Parse builds a codec from PAYLOAD_KEY (base64 of 32 bytes) and PAYLOAD_OLD_KEYS
// (comma-separated). Errors name the variable but never echo key material.
func Parse(current, old string) (*Codec, error) {
	cur, olds, err := secrets.DecodeKeys(current, old, "PAYLOAD_KEY", "PAYLOAD_OLD_KEYS")
	if err != nil {
		return nil, err
	}
	return New(cur, olds...)
}

// CurrentKeyID is the ID new payloads are sealed with (public: it is in every payload's metadata).
func (c *Codec) CurrentKeyID() string { return c.keys.CurrentKeyID() }

// Encode seals every payload, whatever its encoding (nil and binary values too).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("payloadcodec: %w", err)
		}
		id, sealed := c.keys.Seal(plain, aad)
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(Encoding), MetadataKeyID: []byte(id)},
			Data:     sealed,
		}
	}
	return out, nil
}

// Decode opens encrypted payloads. Payloads that are not encrypted pass unchanged: histories
// written before encryption was turned on stay readable (and replayable).
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.Metadata[MetadataKeyID])
		plain, err := c.keys.Open(id, p.Data, aad)
		switch {
		case errors.Is(err, secrets.ErrUnknownKey):
			return nil, fmt.Errorf("%w: key ID %q", ErrUnknownKey, id)
		case err != nil:
			return nil, ErrCorrupt
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, ErrCorrupt
		}
		out[i] = &orig
	}
	return out, nil
}

// DataConverter is the SDK's default converter with every payload sealed by c.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter moves failure messages and stack traces into an encrypted payload: a tool
// error can quote SAP data, and Temporal would otherwise store the message in clear.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: c.DataConverter(), EncodeCommonAttributes: true,
	})
}
