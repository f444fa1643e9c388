// Package auth verifies the bearer tokens the API accepts (Supabase-style JWTs: HS256 with a
// shared secret, or asymmetric keys published at a JWKS URL) and mints HS256 tokens for
// development. The user is the token's `sub`.
package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// Leeway tolerates clock skew between the issuer and this server.
const Leeway = 30 * time.Second

// Options configure verification; at least one of Secret and JWKSURL is required.
type Options struct {
	Secret   []byte // HS256 shared secret (AUTH_JWT_SECRET)
	JWKSURL  string // asymmetric keys (AUTH_JWKS_URL)
	Audience string // required `aud` when set (AUTH_AUDIENCE)
	Issuer   string // required `iss` when set (AUTH_ISSUER)
}

// Verifier checks tokens.
type Verifier struct {
	parser *jwt.Parser
	secret []byte
	jwks   keyfunc.Keyfunc
}

// Asymmetric algorithms accepted from a JWKS; "none" and HS* with a public key never are.
var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// NewVerifier builds a verifier. With a JWKS URL it fetches the key set in the background
// and refreshes it when a token names an unknown key.
func NewVerifier(ctx context.Context, o Options) (*Verifier, error) {
	if len(o.Secret) == 0 && o.JWKSURL == "" {
		return nil, errors.New("auth: set AUTH_JWT_SECRET or AUTH_JWKS_URL")
	}
	v := &Verifier{secret: o.Secret}
	var methods []string
	if len(o.Secret) > 0 {
		methods = append(methods, "HS256")
	}
	if o.JWKSURL != "" {
		kf, err := keyfunc.NewDefaultCtx(ctx, []string{o.JWKSURL})
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS %s: %w", o.JWKSURL, err)
		}
		v.jwks = kf
		methods = append(methods, asymmetric...)
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithLeeway(Leeway), jwt.WithExpirationRequired()}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	if o.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(o.Issuer))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// Error is a token problem safe to show to the client.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// Verify returns the token's user (sub) or an *Error saying what is wrong.
func (v *Verifier) Verify(token string) (string, error) {
	id, err := v.Identify(token)
	return id.User, err
}

// Identity is who a valid token speaks for, and until when.
type Identity struct {
	User    string
	Expires time.Time // the token's exp, without Leeway: long-lived connections end here
}

// Identify is Verify that also returns the token's expiry.
func (v *Verifier) Identify(token string) (Identity, error) {
	claims := jwt.RegisteredClaims{}
	_, err := v.parser.ParseWithClaims(token, &claims, v.key)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenExpired):
		return Identity{}, &Error{"token has expired"}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return Identity{}, &Error{"token signature or algorithm is not accepted"}
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return Identity{}, &Error{"token audience is not accepted"}
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return Identity{}, &Error{"token issuer is not accepted"}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return Identity{}, &Error{"token lacks a required claim (exp)"}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return Identity{}, &Error{"token is not valid yet"}
	default:
		return Identity{}, &Error{"token is malformed"}
	}
	if claims.Subject == "" || len(claims.Subject) > 200 {
		return Identity{}, &Error{"token has no usable subject (sub)"}
	}
	// exp is required by the parser, so ExpiresAt is set.
	return Identity{User: claims.Subject, Expires: claims.ExpiresAt.Time}, nil
}

func (v *Verifier) key(t *jwt.Token) (any, error) {
	if t.Method.Alg() == "HS256" {
		if len(v.secret) == 0 {
			return nil, errors.New("HS256 not configured")
		}
		return v.secret, nil
	}
	if v.jwks == nil {
		return nil, errors.New("no JWKS configured")
	}
	return v.jwks.Keyfunc(t)
}

// Mint signs an HS256 token for user, valid for ttl (development and tests).
func Mint(secret []byte, user string, ttl time.Duration, audience, issuer string) (string, error) {
	now := time.Now()
	claims := jwt.RegisteredClaims{Subject: user, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)), Issuer: issuer}
	if audience != "" {
		claims.Audience = jwt.ClaimStrings{audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
