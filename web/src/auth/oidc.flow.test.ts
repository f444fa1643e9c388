// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest'
import { base64url, completeSignIn, type PendingSignIn } from './oidc'
import { loadSession, saveSession } from './token'

function jwt(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => base64url(new TextEncoder().encode(JSON.stringify(o)))
  return `${enc({ alg: 'RS256' })}.${enc(claims)}.sig`
}

const pending: PendingSignIn = {
  state: 'st', nonce: 'nn', verifier: 'ver', issuer: 'https://login.example.com', clientId: 'web',
  tokenEndpoint: 'https://login.example.com/token', redirectUri: 'http://localhost/auth/callback',
}

afterEach(() => {
  vi.unstubAllGlobals()
  saveSession(null)
  sessionStorage.clear()
})

describe('completeSignIn', () => {
  it('exchanges the code with the verifier (no secret) and saves the session', async () => {
    sessionStorage.setItem('sapagent.oidc.pending', JSON.stringify(pending))
    const access = jwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 })
    const fetchMock = vi.fn(async () => new Response(JSON.stringify({ access_token: access, id_token: jwt({ sub: 'alice', nonce: 'nn' }), refresh_token: 'r' }), { status: 200 }))
    vi.stubGlobal('fetch', fetchMock)
    await completeSignIn('?code=c1&state=st')
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit]
    expect(url).toBe('https://login.example.com/token')
    expect(Object.fromEntries(new URLSearchParams(init.body as string))).toEqual({
      grant_type: 'authorization_code', code: 'c1', redirect_uri: 'http://localhost/auth/callback', client_id: 'web', code_verifier: 'ver',
    })
    expect(loadSession()).toMatchObject({ token: access, user: 'alice', refreshToken: 'r' })
    expect(sessionStorage.getItem('sapagent.oidc.pending')).toBeNull()
  })

  it('refuses a state mismatch without calling the provider', async () => {
    sessionStorage.setItem('sapagent.oidc.pending', JSON.stringify(pending))
    const fetchMock = vi.fn()
    vi.stubGlobal('fetch', fetchMock)
    await expect(completeSignIn('?code=c2&state=forged')).rejects.toThrow(/does not match/)
    expect(fetchMock).not.toHaveBeenCalled()
    expect(loadSession()).toBeNull()
  })
})
