import useSWR from 'swr'
import { authKeys } from './api'
import { DevSignIn } from './SignIn'
import { OidcSignIn, type AuthConfig } from './oidc'
import { ErrorBanner, Spinner } from '../ui/controls'

/**
 * The sign-in gate: a development server signs in by user name, a production one with OIDC; a
 * development server with OIDC configured offers both (the provider first).
 */
export function SignInPage() {
  const { data, error } = useSWR<AuthConfig>(authKeys.config)
  // A server without the route (older API) offers the development sign-in, which it refuses if absent.
  if (error && (error as { status?: number }).status === 404) return <DevSignIn />
  if (error) return <main className="p-6"><ErrorBanner error={error} /></main>
  if (!data) return <main className="p-6"><Spinner /></main>
  if (data.mode === 'dev') return <DevSignIn />
  return <OidcSignIn config={data}>{data.mode === 'oidc' && data.dev_sign_in ? <DevSignIn embedded /> : null}</OidcSignIn>
}
