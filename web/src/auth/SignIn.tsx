import { useState, type FormEvent } from 'react'
import { ApiError } from '../api/client'
import { devSignIn } from './api'
import { saveSession } from './token'
import { Button, TextField, ErrorBanner } from '../ui/controls'

/**
 * Development sign-in: any user name, a token from POST /api/dev/token (absent in production).
 * embedded: shown below the identity-provider button (a development server with OIDC).
 */
export function DevSignIn({ embedded = false }: { embedded?: boolean }) {
  const headingId = embedded ? 'dev-signin-title' : 'signin-title'
  const [user, setUser] = useState('')
  const [error, setError] = useState<ApiError | null>(null)
  const [busy, setBusy] = useState(false)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const t = await devSignIn(user.trim())
      saveSession({ token: t.token, user: t.user, expiresAt: Date.parse(t.expires_at) })
    } catch (err) {
      setError(err as ApiError)
    } finally {
      setBusy(false)
    }
  }
  const form = (
    <form onSubmit={submit} className="w-full max-w-sm space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm" aria-labelledby={headingId}>
      {embedded
        ? <h2 id={headingId} className="text-base font-semibold">Development sign-in</h2>
        : <h1 id={headingId} className="text-xl font-semibold">Sign in to sapagent</h1>}
      <p className="text-sm text-slate-600">{embedded
        ? 'This development server also signs you in as any user name.'
        : 'Development server: sign in as any user name. A production server signs you in with your identity provider.'}</p>
      <TextField label="User name" name="user" value={user} onChange={setUser} autoFocus={!embedded} autoComplete="username"
        error={error?.code === 'invalid_user' || error?.code === 'invalid_json' ? error.message : undefined} required />
      {error && error.code !== 'invalid_user' && <ErrorBanner error={error} />}
      <Button type="submit" disabled={busy || !user.trim()} className="w-full">{busy ? 'Signing in…' : 'Sign in'}</Button>
    </form>
  )
  return embedded ? form : <main className="flex min-h-full items-center justify-center p-6">{form}</main>
}
