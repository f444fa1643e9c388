// A small OpenID Connect provider for the browser tests (node:http and node:crypto only): the
// authorization code flow with PKCE (S256) for one public client, RS256 tokens from a key made at
// start, refresh tokens and end_session. It is strict where a real provider is (client, redirect
// URI, PKCE verifier, one-use codes) so the page's sign-in is tested against the protocol, not
// against a stub that accepts anything. Not for anything but tests: users sign in by name.
//
//   import { startProvider } from './oidc-provider.mjs'
//   const op = await startProvider({ clientId, appOrigin, audience })  // op.url, op.close()
//
// Standalone: `node e2e/oidc-provider.mjs <port> <app origin>`.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { createServer } from 'node:http'

const b64url = (buf) => Buffer.from(buf).toString('base64url')
const random = () => randomBytes(24).toString('base64url')
const USER = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/
const SESSION_COOKIE = 'e2e_op_session'

function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/**
 * Starts the provider on 127.0.0.1:port (0: any free port).
 * clientId: the one client; appOrigin: the page's origin (redirect URI <origin>/auth/callback,
 * post-logout <origin>/, CORS); audience: the access token's aud when the authorize request names
 * none (default clientId); tokenTtl: seconds.
 */
export async function startProvider({ port = 0, clientId = 'sapagent-web', appOrigin, audience, tokenTtl = 3600 } = {}) {
  if (!appOrigin) throw new Error('oidc-provider: appOrigin is required')
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const kid = random().slice(0, 16)
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' }
  const redirectUri = `${appOrigin}/auth/callback`
  const postLogoutUri = `${appOrigin}/`
  const codes = new Map() // code → { user, redirectUri, challenge, nonce, scope, audience, expires }
  const refreshTokens = new Map() // token → { user, scope, audience }
  const sessions = new Map() // provider session cookie → user
  let issuer = ''

  function jwt(claims) {
    const head = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }))
    const body = b64url(JSON.stringify(claims))
    return `${head}.${body}.${b64url(sign('sha256', Buffer.from(`${head}.${body}`), privateKey))}`
  }

  function tokens(grant, nonce) {
    const now = Math.floor(Date.now() / 1000)
    const exp = now + tokenTtl
    const refresh = random()
    refreshTokens.set(refresh, grant)
    const idClaims = { iss: issuer, sub: grant.user, aud: clientId, exp, iat: now, preferred_username: grant.user }
    if (nonce) idClaims.nonce = nonce
    return {
      token_type: 'Bearer',
      expires_in: tokenTtl,
      access_token: jwt({ iss: issuer, sub: grant.user, aud: grant.audience, exp, iat: now, scope: grant.scope, client_id: clientId }),
      id_token: jwt(idClaims),
      refresh_token: refresh,
      scope: grant.scope,
    }
  }

  function send(res, status, body, headers = {}) {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json'
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers })
    res.end(text)
  }
  const oauthError = (res, status, error, description) => send(res, status, { error, error_description: description })

  function readForm(req) {
    return new Promise((resolve, reject) => {
      let raw = ''
      req.setEncoding('utf8')
      req.on('data', (c) => {
        raw += c
        if (raw.length > 64 * 1024) reject(new Error('body too large'))
      })
      req.on('end', () => resolve(new URLSearchParams(raw)))
      req.on('error', reject)
    })
  }

  function cookie(req, name) {
    for (const part of (req.headers.cookie || '').split(';')) {
      const [k, ...v] = part.trim().split('=')
      if (k === name) return v.join('=')
    }
    return undefined
  }

  /** Checks an authorization request; returns the problem (shown on the provider's page, as real ones do). */
  function checkAuthorize(q) {
    if (q.get('client_id') !== clientId) return `unknown client_id ${q.get('client_id')}`
    if (q.get('redirect_uri') !== redirectUri) return `redirect_uri ${q.get('redirect_uri')} is not registered`
    if (q.get('response_type') !== 'code') return 'response_type must be code'
    if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') || '')) return 'PKCE S256 is required'
    if (!q.get('state')) return 'state is required'
    if (!q.get('nonce')) return 'nonce is required'
    if (!(q.get('scope') || '').split(' ').includes('openid')) return 'scope must include openid'
    return null
  }

  /** Issues a code for user and redirects back to the client with code and state. */
  function approve(res, q, user, extraHeaders = {}) {
    const code = random()
    codes.set(code, {
      user, redirectUri: q.get('redirect_uri'), challenge: q.get('code_challenge'), nonce: q.get('nonce'),
      scope: q.get('scope'), audience: q.get('audience') || audience || clientId, expires: Date.now() + 60_000,
    })
    const to = new URL(q.get('redirect_uri'))
    to.searchParams.set('code', code)
    to.searchParams.set('state', q.get('state'))
    res.writeHead(302, { Location: to.toString(), 'Cache-Control': 'no-store', ...extraHeaders })
    res.end()
  }

  function loginPage(q, problem) {
    const hidden = [...q.entries()].filter(([k]) => k !== 'login')
      .map(([k, v]) => `<input type="hidden" name="${escapeHTML(k)}" value="${escapeHTML(v)}">`).join('\n      ')
    return `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><title>Test identity provider</title></head>
  <body>
    <main>
      <h1>Test identity provider</h1>
      <p>Signing in to ${escapeHTML(q.get('client_id'))}.</p>
      ${problem ? `<p role="alert">${escapeHTML(problem)}</p>` : ''}
      <form method="post" action="/authorize">
      ${hidden}
      <label for="login">Sign in as</label>
      <input id="login" name="login" autocomplete="username" required>
      <button type="submit">Continue</button>
      </form>
    </main>
  </body>
</html>`
  }

  async function authorize(req, res, url) {
    const q = req.method === 'POST' ? await readForm(req) : url.searchParams
    const problem = checkAuthorize(q)
    // A bad client or redirect URI is never redirected to (that is how codes get stolen).
    if (problem) return send(res, 400, `<!doctype html><html lang="en"><head><title>Sign-in error</title></head><body><main><h1>Sign-in error</h1><p>${escapeHTML(problem)}</p></main></body></html>`)
    if (req.method === 'GET') {
      const session = sessions.get(cookie(req, SESSION_COOKIE))
      if (session) return approve(res, q, session) // already signed in at the provider
      return send(res, 200, loginPage(q))
    }
    const user = (q.get('login') || '').trim()
    if (!USER.test(user)) return send(res, 200, loginPage(q, 'Enter a user name (letters, digits, . _ @ -).'))
    const sid = random()
    sessions.set(sid, user)
    approve(res, q, user, { 'Set-Cookie': `${SESSION_COOKIE}=${sid}; Path=/; HttpOnly; SameSite=Lax` })
  }

  async function token(req, res) {
    const f = await readForm(req)
    if (f.get('client_id') !== clientId) return oauthError(res, 401, 'invalid_client', 'unknown client')
    if (f.get('grant_type') === 'authorization_code') {
      const grant = codes.get(f.get('code') || '')
      codes.delete(f.get('code') || '') // one use, also when the request is wrong
      if (!grant || grant.expires < Date.now()) return oauthError(res, 400, 'invalid_grant', 'unknown or expired code')
      if (f.get('redirect_uri') !== grant.redirectUri) return oauthError(res, 400, 'invalid_grant', 'redirect_uri does not match')
      const verifier = f.get('code_verifier') || ''
      if (b64url(createHash('sha256').update(verifier).digest()) !== grant.challenge) {
        return oauthError(res, 400, 'invalid_grant', 'PKCE verification failed')
      }
      return send(res, 200, tokens(grant, grant.nonce))
    }
    if (f.get('grant_type') === 'refresh_token') {
      const grant = refreshTokens.get(f.get('refresh_token') || '')
      if (!grant) return oauthError(res, 400, 'invalid_grant', 'unknown refresh token')
      refreshTokens.delete(f.get('refresh_token')) // rotated: each refresh token works once
      return send(res, 200, tokens(grant))
    }
    oauthError(res, 400, 'unsupported_grant_type', `grant_type ${f.get('grant_type')} is not supported`)
  }

  function logout(req, res, url) {
    const sid = cookie(req, SESSION_COOKIE)
    if (sid) sessions.delete(sid)
    const to = url.searchParams.get('post_logout_redirect_uri')
    if (to && to !== postLogoutUri) return send(res, 400, '<!doctype html><html lang="en"><head><title>Sign-out error</title></head><body><main><h1>post_logout_redirect_uri is not registered</h1></main></body></html>')
    res.writeHead(to ? 302 : 200, {
      ...(to ? { Location: to } : { 'Content-Type': 'text/html; charset=utf-8' }),
      'Set-Cookie': `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`,
      'Cache-Control': 'no-store',
    })
    res.end(to ? '' : '<!doctype html><html lang="en"><head><title>Signed out</title></head><body><main><h1>Signed out</h1></main></body></html>')
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, issuer)
    // The page fetches discovery and the token endpoint: CORS for its origin only.
    if (req.headers.origin === appOrigin) {
      res.setHeader('Access-Control-Allow-Origin', appOrigin)
      res.setHeader('Vary', 'Origin')
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, POST', 'Access-Control-Allow-Headers': 'Content-Type, Accept', 'Access-Control-Max-Age': '600' })
      return res.end()
    }
    try {
      switch (`${req.method} ${url.pathname}`) {
        case 'GET /.well-known/openid-configuration':
          return send(res, 200, {
            issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`,
            end_session_endpoint: `${issuer}/logout`, response_types_supported: ['code'], grant_types_supported: ['authorization_code', 'refresh_token'],
            subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'], code_challenge_methods_supported: ['S256'],
            token_endpoint_auth_methods_supported: ['none'], scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
          })
        case 'GET /jwks':
          return send(res, 200, { keys: [jwk] })
        case 'GET /authorize':
        case 'POST /authorize':
          return await authorize(req, res, url)
        case 'POST /token':
          return await token(req, res)
        case 'GET /logout':
          return logout(req, res, url)
        case 'GET /favicon.ico':
          res.writeHead(204)
          return res.end()
        default:
          return send(res, 404, { error: 'not_found' })
      }
    } catch (e) {
      send(res, 400, { error: 'invalid_request', error_description: String(e.message || e) })
    }
  })
  // A fixed port when it is free keeps the sign-in screenshot (which names the provider's
  // host) the same from run to run; any free port otherwise.
  const listen = (p) => new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(p, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  try {
    await listen(port)
  } catch (e) {
    if (e.code !== 'EADDRINUSE' || port === 0) throw e
    await listen(0)
  }
  issuer = `http://127.0.0.1:${server.address().port}`
  return {
    url: issuer,
    clientId,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port, appOrigin] = process.argv.slice(2)
  const op = await startProvider({ port: Number(port) || 0, appOrigin: appOrigin || 'http://127.0.0.1:8080' })
  console.log(`oidc-provider: ${op.url} (client ${op.clientId})`)
}
