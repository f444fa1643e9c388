// The signed-in user's token. Kept in localStorage so a second tab is signed in too (and a
// sign-out in one tab signs out every tab); it is sent only in the Authorization header or the
// WebSocket subprotocol, never in a URL the page shows.
const KEY = 'sapagent.session'

export interface Session {
  token: string
  user: string
  expiresAt: number // ms since epoch
  refreshToken?: string // OIDC only
  idToken?: string // OIDC only (for sign-out)
}

type Listener = (s: Session | null) => void
const listeners = new Set<Listener>()

export function loadSession(): Session | null {
  try {
    const raw = localStorage.getItem(KEY)
    if (!raw) return null
    const s = JSON.parse(raw) as Session
    if (!s.token || !s.user || !(s.expiresAt > Date.now())) return null
    return s
  } catch {
    return null
  }
}

export function saveSession(s: Session | null) {
  if (s) localStorage.setItem(KEY, JSON.stringify(s))
  else localStorage.removeItem(KEY)
  listeners.forEach((l) => l(s))
}

export function getToken(): string | null {
  return loadSession()?.token ?? null
}

export function onSessionChange(l: Listener): () => void {
  listeners.add(l)
  const onStorage = (e: StorageEvent) => {
    if (e.key === KEY) l(loadSession())
  }
  window.addEventListener('storage', onStorage)
  return () => {
    listeners.delete(l)
    window.removeEventListener('storage', onStorage)
  }
}

/** Called on a 401: the token expired or was revoked, so the page asks to sign in again. */
export function signalUnauthorized() {
  const s = loadSession()
  if (!s || s.expiresAt <= Date.now() + 5_000) saveSession(null)
}

/** The claims of a JWT (not verified: the API verifies; the page only reads sub and exp). */
export function jwtClaims(token: string): { sub?: string; exp?: number; [k: string]: unknown } {
  try {
    const part = token.split('.')[1]
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'))
    return JSON.parse(decodeURIComponent(escape(json)))
  } catch {
    return {}
  }
}
