package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestHS256TokensAreCheckedForExpiryAudienceIssuerAndAlgorithm(t *testing.T) {
	v, err := NewVerifier(context.Background(), Options{Secret: secret, Audience: "authenticated", Issuer: "sapagent"})
	require.NoError(t, err)
	good, err := Mint(secret, "user-1", time.Hour, "authenticated", "sapagent")
	require.NoError(t, err)
	user, err := v.Verify(good)
	require.NoError(t, err)
	assert.Equal(t, "user-1", user)
	id, err := v.Identify(good)
	require.NoError(t, err)
	assert.Equal(t, "user-1", id.User)
	assert.WithinDuration(t, time.Now().Add(time.Hour), id.Expires, 2*time.Second, "Identify returns the exp claim")

	expired, _ := Mint(secret, "user-1", -time.Hour, "authenticated", "sapagent")
	within, _ := Mint(secret, "user-1", -10*time.Second, "authenticated", "sapagent")
	wrongAud, _ := Mint(secret, "user-1", time.Hour, "other", "sapagent")
	wrongIss, _ := Mint(secret, "user-1", time.Hour, "authenticated", "evil")
	otherKey, _ := Mint([]byte("another-secret-another-secret-00"), "user-1", time.Hour, "authenticated", "sapagent")
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.RegisteredClaims{Subject: "u", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
		Audience: jwt.ClaimStrings{"authenticated"}, Issuer: "sapagent"}).SignedString(secret)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.RegisteredClaims{Subject: "u", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}).
		SignedString(jwt.UnsafeAllowNoneSignatureType)
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "u", Audience: jwt.ClaimStrings{"authenticated"}, Issuer: "sapagent"}).SignedString(secret)

	_, err = v.Verify(within)
	assert.NoError(t, err, "leeway tolerates small clock skew")
	for name, tc := range map[string]struct{ token, reason string }{
		"expired":        {expired, "expired"},
		"wrong audience": {wrongAud, "audience"},
		"wrong issuer":   {wrongIss, "issuer"},
		"other secret":   {otherKey, "signature"},
		"HS512":          {hs512, "signature or algorithm"},
		"alg none":       {none, "signature or algorithm"},
		"no exp":         {noExp, "exp"},
		"garbage":        {"not.a.token", "malformed"},
	} {
		_, err := v.Verify(tc.token)
		var ae *Error
		require.ErrorAs(t, err, &ae, name)
		assert.Contains(t, ae.Reason, tc.reason, name)
	}
}

func TestJWKSKeysVerifyAsymmetricTokens(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pad := func(b *big.Int) string { return base64.RawURLEncoding.EncodeToString(b.FillBytes(make([]byte, 32))) }
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig", "x": pad(priv.X), "y": pad(priv.Y),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(jwks) }))
	defer srv.Close()

	v, err := NewVerifier(context.Background(), Options{JWKSURL: srv.URL})
	require.NoError(t, err)
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.RegisteredClaims{Subject: "user-es", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))})
	tok.Header["kid"] = "k1"
	signed, err := tok.SignedString(priv)
	require.NoError(t, err)
	user, err := v.Verify(signed)
	require.NoError(t, err)
	assert.Equal(t, "user-es", user)

	// Without a configured secret, HS256 is not an accepted algorithm at all.
	hs, _ := Mint(secret, "user-1", time.Hour, "", "")
	_, err = v.Verify(hs)
	var ae *Error
	require.ErrorAs(t, err, &ae)
}
