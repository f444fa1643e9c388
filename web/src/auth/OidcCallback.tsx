import { useEffect, useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { completeSignIn } from './oidc'
import { ErrorBanner, Spinner } from '../ui/controls'

/**
 * /auth/callback: the identity provider sends the browser here with ?code&state. The code and
 * state leave the address bar at once (history.replaceState), then the code is exchanged and
 * the page goes to /.
 */
export default function OidcCallback() {
  const navigate = useNavigate()
  const [error, setError] = useState<unknown>(null)
  // Read before the effect drops it from the address bar (effects may run twice).
  const [search] = useState(() => window.location.search)
  useEffect(() => {
    if (window.location.search) window.history.replaceState(window.history.state, '', window.location.pathname)
    completeSignIn(search).then(
      () => navigate('/', { replace: true }),
      (e: unknown) => setError(e),
    )
  }, [navigate, search])
  return (
    <main className="flex min-h-full items-center justify-center p-6">
      <section className="w-full max-w-sm space-y-4" aria-labelledby="callback-title">
        <h1 id="callback-title" className="text-xl font-semibold">{error ? 'Sign-in failed' : 'Signing in…'}</h1>
        {error ? (
          <>
            <ErrorBanner error={error} />
            <Link to="/" replace className="text-sm text-blue-700 underline focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-500">Back to sign-in</Link>
          </>
        ) : <Spinner label="Signing in" />}
      </section>
    </main>
  )
}
