// OpenID Connect sign-in for production: authorization code flow with PKCE (S256) as a public
// client (no secret). The verifier, state and nonce wait in sessionStorage for the callback
// (/auth/callback); the code is exchanged with a POST, so tokens never appear in a URL.
import { createElement, useState, type ReactNode } from 'react'
import { jwtClaims, loadSession, onSessionChange, saveSession, type Session } from './token'
import { Button, ErrorBanner } from '../ui/controls'

import type { AuthConfig } from './api'
export type { AuthConfig }

/** The provider metadata the page uses (from <issuer>/.well-known/openid-configuration). */
export interface Discovery {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  end_session_endpoint?: string
}

/** What waits in sessionStorage between the redirect to the provider and the callback. */
export interface PendingSignIn {
  state: string
  nonce: string
  verifier: string
  issuer: string
  clientId: string
  tokenEndpoint: string
  endSessionEndpoint?: string
  redirectUri: string
}

/** What a signed-in tab keeps to refresh and end the session (no secrets: tokens live in the session). */
interface Provider {
  clientId: string
  tokenEndpoint: string
  endSessionEndpoint?: string
}

export interface TokenResponse {
  access_token?: string
  id_token?: string
  refresh_token?: string
  expires_in?: number
  token_type?: string
}

export class OidcError extends Error {}

const PENDING_KEY = 'sapagent.oidc.pending'
const PROVIDER_KEY = 'sapagent.oidc.provider'
export const CALLBACK_PATH = '/auth/callback'
/** Refresh this long before the token expires. */
const REFRESH_AHEAD_MS = 60_000

// ---- pure parts (unit-tested) ----

export function base64url(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** A random URL-safe string of n random bytes (43 characters for 32: a valid PKCE verifier). */
export function randomString(n = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(n)))
}

/** The PKCE S256 challenge of a verifier: base64url(sha256(verifier)). */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  return base64url(new Uint8Array(digest))
}

export function buildAuthorizeUrl(d: Pick<Discovery, 'authorization_endpoint'>, p: {
  clientId: string; redirectUri: string; scopes: string; state: string; nonce: string; challenge: string; audience?: string
}): string {
  const u = new URL(d.authorization_endpoint)
  u.searchParams.set('response_type', 'code')
  u.searchParams.set('client_id', p.clientId)
  u.searchParams.set('redirect_uri', p.redirectUri)
  u.searchParams.set('scope', p.scopes)
  u.searchParams.set('state', p.state)
  u.searchParams.set('nonce', p.nonce)
  u.searchParams.set('code_challenge', p.challenge)
  u.searchParams.set('code_challenge_method', 'S256')
  if (p.audience) u.searchParams.set('audience', p.audience)
  return u.toString()
}

/** The code from the callback's query, after checking the state; the provider's error is thrown. */
export function parseCallback(search: string, expectedState: string | undefined): string {
  const q = new URLSearchParams(search)
  const err = q.get('error')
  if (err) throw new OidcError(`The identity provider refused the sign-in: ${q.get('error_description') || err}`)
  const code = q.get('code')
  const state = q.get('state')
  if (!code || !state) throw new OidcError('The sign-in response is incomplete (no code or state).')
  if (!expectedState || state !== expectedState) throw new OidcError('The sign-in response does not match a sign-in started in this tab; sign in again.')
  return code
}

function isJwt(t: string | undefined): t is string {
  return !!t && t.split('.').length === 3
}

/**
 * The session a token response gives: the access token when it is a JWT (what the API
 * verifies), else the ID token; the user is the ID token's sub. A nonce, when given, must
 * match the ID token's.
 */
export function sessionFromTokens(t: TokenResponse, now: number, nonce?: string, previous?: Session): Session {
  const token = isJwt(t.access_token) ? t.access_token : t.id_token
  if (!token) throw new OidcError('The identity provider returned no usable token.')
  const id = t.id_token ? jwtClaims(t.id_token) : {}
  if (nonce !== undefined && id.nonce !== nonce) throw new OidcError('The ID token does not belong to this sign-in (nonce mismatch); sign in again.')
  const claims = jwtClaims(token)
  const user = (typeof id.sub === 'string' && id.sub) || (typeof claims.sub === 'string' && claims.sub) || previous?.user
  if (!user) throw new OidcError('The token names no user (sub).')
  const expiresAt = typeof claims.exp === 'number' ? claims.exp * 1000 : now + (t.expires_in ?? 300) * 1000
  return {
    token, user, expiresAt,
    refreshToken: t.refresh_token ?? previous?.refreshToken,
    idToken: t.id_token ?? previous?.idToken,
  }
}

// ---- the flow ----

export async function discover(issuer: string): Promise<Discovery> {
  const base = issuer.replace(/\/+$/, '')
  const res = await fetch(base + '/.well-known/openid-configuration', { headers: { Accept: 'application/json' } })
  if (!res.ok) throw new OidcError(`The identity provider's configuration is unavailable (HTTP ${res.status}).`)
  const d = (await res.json()) as Discovery
  if (!d.authorization_endpoint || !d.token_endpoint) throw new OidcError("The identity provider's configuration lacks its endpoints.")
  if (d.issuer && d.issuer.replace(/\/+$/, '') !== base) throw new OidcError(`The identity provider calls itself ${d.issuer}, not ${issuer}.`)
  return d
}

/** Starts the sign-in: remembers verifier, state and nonce in this tab, then goes to the provider. */
export async function startSignIn(config: AuthConfig): Promise<void> {
  if (!config.issuer || !config.client_id) throw new OidcError('Sign-in is not configured.')
  const d = await discover(config.issuer)
  const pending: PendingSignIn = {
    state: randomString(), nonce: randomString(), verifier: randomString(),
    issuer: config.issuer, clientId: config.client_id, tokenEndpoint: d.token_endpoint,
    endSessionEndpoint: d.end_session_endpoint, redirectUri: window.location.origin + CALLBACK_PATH,
  }
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending))
  const url = buildAuthorizeUrl(d, {
    clientId: pending.clientId, redirectUri: pending.redirectUri, scopes: config.scopes || 'openid profile email',
    state: pending.state, nonce: pending.nonce, challenge: await pkceChallenge(pending.verifier), audience: config.audience,
  })
  window.location.assign(url)
}

async function tokenRequest(endpoint: string, form: Record<string, string>): Promise<TokenResponse> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  })
  const body = (await res.json().catch(() => ({}))) as TokenResponse & { error?: string; error_description?: string }
  if (!res.ok) throw new OidcError(`The identity provider refused the token request: ${body.error_description || body.error || 'HTTP ' + res.status}`)
  return body
}

let completing: { search: string; done: Promise<void> } | null = null

/**
 * Finishes the sign-in on /auth/callback: checks the state, exchanges the code (with the
 * verifier) and saves the session. Idempotent per callback URL (React may run effects twice).
 */
export function completeSignIn(search: string): Promise<void> {
  if (completing?.search === search) return completing.done
  const done = (async () => {
    const raw = sessionStorage.getItem(PENDING_KEY)
    sessionStorage.removeItem(PENDING_KEY) // one use
    const pending = raw ? (JSON.parse(raw) as PendingSignIn) : undefined
    const code = parseCallback(search, pending?.state)
    const p = pending!
    const tokens = await tokenRequest(p.tokenEndpoint, {
      grant_type: 'authorization_code', code, redirect_uri: p.redirectUri, client_id: p.clientId, code_verifier: p.verifier,
    })
    const provider: Provider = { clientId: p.clientId, tokenEndpoint: p.tokenEndpoint, endSessionEndpoint: p.endSessionEndpoint }
    localStorage.setItem(PROVIDER_KEY, JSON.stringify(provider))
    saveSession(sessionFromTokens(tokens, Date.now(), p.nonce))
  })()
  completing = { search, done }
  return done
}

function loadProvider(): Provider | null {
  try {
    return JSON.parse(localStorage.getItem(PROVIDER_KEY) ?? 'null') as Provider | null
  } catch {
    return null
  }
}

/** Exchanges the refresh token for a new session; on failure the session runs out as usual. */
export async function refreshSession(): Promise<void> {
  const s = loadSession()
  const p = loadProvider()
  if (!s?.refreshToken || !p) return
  const run = async () => {
    const now = loadSession()
    // Another tab refreshed first (tabs share the session).
    if (!now?.refreshToken || now.expiresAt !== s.expiresAt) return
    const tokens = await tokenRequest(p.tokenEndpoint, { grant_type: 'refresh_token', refresh_token: now.refreshToken, client_id: p.clientId })
    saveSession(sessionFromTokens(tokens, Date.now(), undefined, now))
  }
  // One tab at a time: a provider that rotates refresh tokens accepts each one once.
  const locks = (navigator as Navigator & { locks?: LockManager }).locks
  if (locks) await locks.request('sapagent.oidc.refresh', run)
  else await run()
}

/**
 * Keeps an OIDC session fresh: refreshes shortly before expiry when a refresh token was given.
 * Call once while the app is mounted; returns the cleanup.
 */
export function keepSessionFresh(): () => void {
  let timer: number | undefined
  const schedule = (s: Session | null) => {
    window.clearTimeout(timer)
    if (!s?.refreshToken) return
    timer = window.setTimeout(() => {
      refreshSession().catch(() => { /* the session expires; the page asks to sign in again */ })
    }, Math.max(0, s.expiresAt - Date.now() - REFRESH_AHEAD_MS))
  }
  schedule(loadSession())
  const off = onSessionChange(schedule)
  return () => {
    off()
    window.clearTimeout(timer)
  }
}

/** Signs out: clears the session, then ends the provider's session when it offers that. */
export function signOut(): void {
  const p = loadProvider()
  saveSession(null)
  localStorage.removeItem(PROVIDER_KEY)
  if (p?.endSessionEndpoint) {
    const u = new URL(p.endSessionEndpoint)
    u.searchParams.set('client_id', p.clientId)
    u.searchParams.set('post_logout_redirect_uri', window.location.origin + '/')
    // No id_token_hint: that would put a token in a URL (browser history); client_id names the client.
    window.location.assign(u.toString())
  }
}

// ---- the sign-in page ----

/**
 * The production sign-in: one button that goes to the identity provider. A development server
 * with OIDC passes the development form as children, shown below the button.
 */
export function OidcSignIn({ config, children }: { config: AuthConfig; children?: ReactNode }) {
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const h = createElement
  if (config.mode === 'none' || !config.issuer) {
    return h('main', { className: 'flex min-h-full items-center justify-center p-6' },
      h('section', { className: 'max-w-sm space-y-2 rounded-lg border border-slate-200 bg-white p-6 shadow-sm', 'aria-labelledby': 'signin-title' },
        h('h1', { id: 'signin-title', className: 'text-xl font-semibold' }, 'Sign-in is not configured'),
        h('p', { className: 'text-sm text-slate-600' }, 'This server has no identity provider configured (OIDC_ISSUER and OIDC_CLIENT_ID). Ask its operator.')))
  }
  const host = new URL(config.issuer).host
  const go = () => {
    setBusy(true)
    setError(null)
    startSignIn(config).catch((e: unknown) => {
      setError(e instanceof Error ? e.message : String(e))
      setBusy(false)
    })
  }
  // The button's name does not contain "Sign in": the development form's button is "Sign in",
  // and a page with both must let each be found by its name.
  return h('main', { className: 'flex min-h-full flex-col items-center justify-center gap-4 p-6' },
    h('section', { className: 'w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm', 'aria-labelledby': 'signin-title' },
      h('h1', { id: 'signin-title', className: 'text-xl font-semibold' }, 'Sign in to sapagent'),
      h('p', { className: 'text-sm text-slate-600' }, `You sign in with your organisation's identity provider (${host}).`),
      error && h(ErrorBanner, { error }),
      h(Button, { type: 'button', onClick: go, disabled: busy, className: 'w-full' },
        busy ? 'Redirecting…' : 'Continue with your identity provider')),
    children)
}
