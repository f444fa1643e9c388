import { describe, expect, it } from 'vitest'
import { base64url, buildAuthorizeUrl, OidcError, parseCallback, pkceChallenge, randomString, sessionFromTokens } from './oidc'

function jwt(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => base64url(new TextEncoder().encode(JSON.stringify(o)))
  return `${enc({ alg: 'RS256' })}.${enc(claims)}.sig`
}

describe('PKCE', () => {
  it('computes base64url(sha256(verifier)) without padding', async () => {
    expect(await pkceChallenge('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0')
  })
  it('makes verifiers of 43 URL-safe characters', () => {
    const v = randomString()
    expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(randomString()).not.toBe(v)
  })
})

describe('buildAuthorizeUrl', () => {
  it('asks for a code with PKCE, state, nonce and the audience', () => {
    const u = new URL(buildAuthorizeUrl({ authorization_endpoint: 'https://login.example.com/authorize?tenant=acme' }, {
      clientId: 'web', redirectUri: 'https://app.example.com/auth/callback', scopes: 'openid profile email',
      state: 's1', nonce: 'n1', challenge: 'c1', audience: 'https://api.example.com',
    }))
    expect(u.origin + u.pathname).toBe('https://login.example.com/authorize')
    expect(Object.fromEntries(u.searchParams)).toEqual({
      tenant: 'acme', response_type: 'code', client_id: 'web', redirect_uri: 'https://app.example.com/auth/callback',
      scope: 'openid profile email', state: 's1', nonce: 'n1', code_challenge: 'c1', code_challenge_method: 'S256',
      audience: 'https://api.example.com',
    })
  })
  it('leaves the audience out when none is configured', () => {
    const u = new URL(buildAuthorizeUrl({ authorization_endpoint: 'https://l.example.com/auth' }, {
      clientId: 'web', redirectUri: 'https://a/auth/callback', scopes: 'openid', state: 's', nonce: 'n', challenge: 'c',
    }))
    expect(u.searchParams.has('audience')).toBe(false)
  })
})

describe('parseCallback', () => {
  it('returns the code when the state matches', () => {
    expect(parseCallback('?code=abc&state=s1', 's1')).toBe('abc')
  })
  it('refuses a state mismatch', () => {
    expect(() => parseCallback('?code=abc&state=evil', 's1')).toThrow(OidcError)
    expect(() => parseCallback('?code=abc&state=s1', undefined)).toThrow(/does not match/)
  })
  it('reports the provider error', () => {
    expect(() => parseCallback('?error=access_denied&error_description=User+cancelled&state=s1', 's1')).toThrow(/User cancelled/)
  })
  it('refuses a response without a code', () => {
    expect(() => parseCallback('?state=s1', 's1')).toThrow(/incomplete/)
  })
})

describe('sessionFromTokens', () => {
  const now = Date.UTC(2026, 0, 1)
  it('uses a JWT access token, the ID token sub and the access token exp', () => {
    const access = jwt({ sub: 'auth0|alice', exp: 2_000_000_000 })
    const id = jwt({ sub: 'auth0|alice', nonce: 'n1', exp: 1_900_000_000 })
    const s = sessionFromTokens({ access_token: access, id_token: id, refresh_token: 'r1' }, now, 'n1')
    expect(s).toEqual({ token: access, user: 'auth0|alice', expiresAt: 2_000_000_000_000, refreshToken: 'r1', idToken: id })
  })
  it('falls back to the ID token when the access token is opaque', () => {
    const id = jwt({ sub: 'bob', nonce: 'n1', exp: 1_900_000_000 })
    const s = sessionFromTokens({ access_token: 'opaque', id_token: id }, now, 'n1')
    expect(s.token).toBe(id)
    expect(s.expiresAt).toBe(1_900_000_000_000)
  })
  it('refuses an ID token of another sign-in', () => {
    const id = jwt({ sub: 'bob', nonce: 'other', exp: 1_900_000_000 })
    expect(() => sessionFromTokens({ id_token: id }, now, 'n1')).toThrow(/nonce/)
  })
  it('keeps the refresh token and user on a refresh without them', () => {
    const access = jwt({ exp: 2_000_000_000 })
    const prev = { token: 'old', user: 'alice', expiresAt: 1, refreshToken: 'r1', idToken: 'i1' }
    expect(sessionFromTokens({ access_token: access }, now, undefined, prev)).toEqual({ token: access, user: 'alice', expiresAt: 2_000_000_000_000, refreshToken: 'r1', idToken: 'i1' })
  })
})
