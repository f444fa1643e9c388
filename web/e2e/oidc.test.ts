// The production sign-in, end to end: OpenID Connect (authorization code with PKCE) against the
// fake provider run.mjs starts (e2e/oidc-provider.mjs, E2E_OIDC_URL). The page goes to the
// provider, comes back to /auth/callback, exchanges the code, and calls the API with the
// provider's RS256 token, which the API verifies against the provider's JWKS.
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { axeCheck, baseURL, call, closeTab, describeViolations, launchBrowser, openTab, uniqueUser } from './lib'

const opURL = process.env.E2E_OIDC_URL ?? ''
const clientId = 'sapagent-web'
const audience = 'sapagent-api' // run.mjs: OIDC_AUDIENCE and AUTH_AUDIENCE
const SESSION_KEY = 'sapagent.session' // web/src/auth/token.ts
const IDP_BUTTON = 'Continue with your identity provider'

let browser: Browser
beforeAll(async () => {
  if (!opURL) throw new Error('E2E_OIDC_URL is not set: run the browser tests with npm run e2e')
  browser = await launchBrowser()
})
afterAll(async () => { await browser?.close() })

interface StoredSession { token: string; user: string; expiresAt: number; refreshToken?: string; idToken?: string }

function session(page: Page): Promise<StoredSession | null> {
  return page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? 'null'), SESSION_KEY)
}

function decode(jwt: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, c] = jwt.split('.')
  return { header: JSON.parse(Buffer.from(h, 'base64url').toString()), claims: JSON.parse(Buffer.from(c, 'base64url').toString()) }
}

/**
 * Every URL the page was at (page.url() at each framenavigated, same-document changes included),
 * and every URL it requested as a navigation, redirects included (a 302 never becomes page.url()).
 */
function recordNavigations(page: Page): string[] {
  const urls: string[] = []
  page.on('framenavigated', (frame) => {
    urls.push(frame.url())
    urls.push(page.url())
  })
  page.on('request', (r) => {
    if (r.isNavigationRequest()) urls.push(r.url())
  })
  return urls
}

/** From the sign-in page to the provider's login form. */
async function goToProvider(page: Page) {
  await page.getByRole('button', { name: IDP_BUTTON }).click()
  await page.waitForURL((u) => u.href.startsWith(`${opURL}/authorize?`))
  await page.getByRole('heading', { name: 'Test identity provider' }).waitFor()
}

async function tokenRequest(form: Record<string, string>) {
  const res = await fetch(`${opURL}/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
  return { status: res.status, body: await res.json() as Record<string, string> }
}

describe('OpenID Connect sign-in', () => {
  it('signs in at the identity provider, calls the API with its token and signs out through it', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    const navigations = recordNavigations(page)
    const user = uniqueUser('oidc')
    try {
      await page.goto('/')
      await page.getByRole('heading', { name: 'Sign in to sapagent' }).waitFor()
      await page.getByRole('button', { name: IDP_BUTTON }).waitFor()
      // A development server with OIDC offers its user-name form too (dev_sign_in).
      await page.getByLabel('User name').waitFor()
      const axe = await axeCheck(page)
      expect(axe.serious, describeViolations(axe.serious)).toEqual([])
      expect(axe.score).toBeGreaterThanOrEqual(95)

      await goToProvider(page)
      const authorize = new URL(page.url())
      expect(authorize.searchParams.get('client_id')).toBe(clientId)
      expect(authorize.searchParams.get('redirect_uri')).toBe(`${baseURL}/auth/callback`)
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
      expect(authorize.searchParams.get('audience')).toBe(audience)
      expect(authorize.searchParams.has('code_verifier')).toBe(false)

      await page.getByLabel('Sign in as').fill(user)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByRole('heading', { name: 'Welcome to sapagent' }).waitFor()
      const sidebar = page.getByRole('navigation', { name: 'Sidebar' })
      await sidebar.getByText(`Signed in as ${user}`).waitFor()

      // The callback got the code and state, and they left the address bar; no token ever was in a URL.
      expect(navigations.some((u) => u.startsWith(`${baseURL}/auth/callback?code=`))).toBe(true)
      const now = new URL(page.url())
      expect(now.pathname).toBe('/')
      expect(now.searchParams.has('code') || now.searchParams.has('state')).toBe(false)
      const leaked = navigations.filter((u) => /access_token|id_token|refresh_token|eyJ/.test(u))
      expect(leaked, 'a token in a page URL').toEqual([])

      // The session holds the provider's RS256 access token (not a development HS256 one).
      const s = await session(page)
      expect(s?.user).toBe(user)
      const { header, claims } = decode(s!.token)
      expect(header.alg).toBe('RS256')
      expect(header.kid).toBeTruthy()
      expect(claims).toMatchObject({ iss: opURL, sub: user, aud: audience })
      expect(s?.refreshToken).toBeTruthy()

      // The page calls the API with it: the first organization, through the onboarding form.
      await page.getByLabel('Organization name').fill('OIDC Works')
      await page.getByRole('button', { name: 'Create organization' }).click()
      await page.getByRole('heading', { name: 'New workspace in OIDC Works' }).waitFor()

      // A refreshed token (the refresh_token grant) is accepted by the API as well.
      const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: s!.refreshToken!, client_id: clientId })
      expect(refreshed.status).toBe(200)
      const orgs = await call<{ data: { name: string }[] }>(refreshed.body.access_token, 'GET', '/api/orgs')
      expect(orgs.data.map((o) => o.name)).toContain('OIDC Works')

      // Sign-out ends the provider's session (end_session) and comes back to the sign-in page.
      const backFromLogout = page.waitForRequest((r) => r.isNavigationRequest() && r.url() === `${baseURL}/` &&
        !!r.redirectedFrom()?.url().startsWith(`${opURL}/logout?`))
      await page.getByRole('button', { name: 'Sign out' }).click()
      await backFromLogout
      await page.waitForLoadState()
      await page.getByRole('button', { name: IDP_BUTTON }).waitFor()
      const logout = navigations.find((u) => u.startsWith(`${opURL}/logout?`))
      expect(logout, 'went through end_session').toBeTruthy()
      expect(new URL(logout!).searchParams.get('post_logout_redirect_uri')).toBe(`${baseURL}/`)
      expect(await session(page)).toBeNull()
      // The provider forgot the user: signing in again asks who you are.
      await goToProvider(page)
      await page.getByLabel('Sign in as').waitFor()
      expect(navigations.filter((u) => /access_token|id_token|refresh_token|eyJ/.test(u))).toEqual([])
    } finally {
      await closeTab(tab)
    }
  })

  it('renews the session with the refresh token before it expires, and the API takes the new token', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    const user = uniqueUser('fresh')
    try {
      await page.goto('/')
      await goToProvider(page)
      await page.getByLabel('Sign in as').fill(user)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByRole('heading', { name: 'Welcome to sapagent' }).waitFor()
      const first = await session(page)
      expect(first?.refreshToken).toBeTruthy()
      // run.mjs gives the provider's tokens 75 s; the page refreshes 60 s before expiry.
      await expect.poll(async () => (await session(page))?.token, { timeout: 40_000, interval: 500 }).not.toBe(first!.token)
      const renewed = (await session(page))!
      expect(renewed.user).toBe(user)
      expect(renewed.expiresAt).toBeGreaterThan(first!.expiresAt)
      expect(renewed.refreshToken).not.toBe(first!.refreshToken) // the provider rotates it
      expect(decode(renewed.token).claims.sub).toBe(user)
      // The page works on with the new token: an organization made through the onboarding form.
      await page.getByLabel('Organization name').fill('Fresh Tokens Ltd')
      await page.getByRole('button', { name: 'Create organization' }).click()
      await page.getByRole('heading', { name: 'New workspace in Fresh Tokens Ltd' }).waitFor()
      const orgs = await call<{ data: { name: string }[] }>(renewed.token, 'GET', '/api/orgs')
      expect(orgs.data.map((o) => o.name)).toContain('Fresh Tokens Ltd')
    } finally {
      await closeTab(tab)
    }
  })

  it('refuses a callback whose state was tampered with', async () => {
    const tab = await openTab(browser)
    const { page } = tab
    try {
      await page.goto('/')
      await goToProvider(page)
      // The provider echoes the state it was given: change it on the way, the code stays real.
      await page.locator('input[name="state"]').evaluate((el) => { (el as HTMLInputElement).value = 'tampered' })
      await page.getByLabel('Sign in as').fill(uniqueUser('mallory'))
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.getByRole('heading', { name: 'Sign-in failed' }).waitFor()
      await expect(page.getByRole('alert').textContent()).resolves.toContain('does not match a sign-in started in this tab')
      expect(new URL(page.url()).search).toBe('')
      expect(await session(page)).toBeNull()
      await page.getByRole('link', { name: 'Back to sign-in' }).click()
      await page.getByRole('button', { name: IDP_BUTTON }).waitFor()
    } finally {
      await closeTab(tab)
    }
  })

  it('the provider checks the PKCE verifier, and the API accepts its tokens', async () => {
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const code = async () => {
      const res = await fetch(`${opURL}/authorize`, {
        method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: clientId, redirect_uri: `${baseURL}/auth/callback`, response_type: 'code', scope: 'openid', state: 's1', nonce: 'n1',
          code_challenge: challenge, code_challenge_method: 'S256', login: 'pkce-check',
        }),
      })
      expect(res.status).toBe(302)
      const to = new URL(res.headers.get('location')!)
      expect(to.searchParams.get('state')).toBe('s1')
      return to.searchParams.get('code')!
    }
    const exchange = (c: string, v: string) =>
      tokenRequest({ grant_type: 'authorization_code', code: c, redirect_uri: `${baseURL}/auth/callback`, client_id: clientId, code_verifier: v })

    const wrong = await exchange(await code(), randomBytes(32).toString('base64url'))
    expect(wrong.status).toBe(400)
    expect(wrong.body.error).toBe('invalid_grant')

    const c = await code()
    const ok = await exchange(c, verifier)
    expect(ok.status).toBe(200)
    expect(decode(ok.body.id_token).claims).toMatchObject({ iss: opURL, sub: 'pkce-check', aud: clientId, nonce: 'n1' })
    expect((await exchange(c, verifier)).status).toBe(400) // a code works once
    await expect(call(ok.body.access_token, 'GET', '/api/orgs')).resolves.toMatchObject({ data: [] })
  })
})
