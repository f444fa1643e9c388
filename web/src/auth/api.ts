// The sign-in screens' API (docs/api.md): how the page signs in, and the development sign-in.
import { api, type ResponseOf } from '../api/client'

export type AuthConfig = ResponseOf<'getAuthConfig'>
export type DevToken = ResponseOf<'postDevToken'>

export const authKeys = { config: '/api/auth/config' }

/** A 12-hour token for a user name (development servers only; otherwise 404). */
export const devSignIn = (user: string) => api<DevToken>('/api/dev/token', { method: 'POST', body: { user } })
