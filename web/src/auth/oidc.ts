// OpenID Connect sign-in with PKCE (production). Placeholder until the OIDC client lands.
import { createElement } from 'react'

export interface AuthConfig {
  mode: 'dev' | 'oidc'
  issuer?: string
  client_id?: string
  scopes?: string
  audience?: string
}

export function OidcSignIn({ config }: { config: AuthConfig }) {
  return createElement('main', { className: 'p-6' }, `Sign in with ${config.issuer ?? 'your identity provider'}`)
}
