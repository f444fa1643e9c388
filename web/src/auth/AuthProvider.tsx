import { createContext, useContext, useEffect, useState, type ReactNode } from 'react'
import { loadSession, onSessionChange, type Session } from './token'
import { keepSessionFresh, signOut } from './oidc'

interface AuthState {
  session: Session | null
  signOut: () => void
}

const AuthContext = createContext<AuthState>({ session: null, signOut: () => {} })

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(() => loadSession())
  useEffect(() => onSessionChange(setSession), [])
  // OIDC sessions with a refresh token are renewed shortly before they expire.
  useEffect(() => keepSessionFresh(), [])
  // Sign out when the token expires while the page is open (the API would answer 401 anyway).
  useEffect(() => {
    if (!session) return
    const t = window.setTimeout(() => setSession(loadSession()), Math.max(0, session.expiresAt - Date.now()) + 1000)
    return () => window.clearTimeout(t)
  }, [session])
  return <AuthContext.Provider value={{ session, signOut }}>{children}</AuthContext.Provider>
}

export function useAuth() {
  return useContext(AuthContext)
}

/** The signed-in user's ID (the token's sub). Only used below the sign-in gate. */
export function useUser(): string {
  return useAuth().session?.user ?? ''
}
