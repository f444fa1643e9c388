import { createContext, useContext, useEffect, useState, type ReactNode } from 'react'
import { loadSession, onSessionChange, saveSession, type Session } from './token'

interface AuthState {
  session: Session | null
  signOut: () => void
}

const AuthContext = createContext<AuthState>({ session: null, signOut: () => {} })

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(() => loadSession())
  useEffect(() => onSessionChange(setSession), [])
  // Sign out when the token expires while the page is open (the API would answer 401 anyway).
  useEffect(() => {
    if (!session) return
    const t = window.setTimeout(() => setSession(loadSession()), Math.max(0, session.expiresAt - Date.now()) + 1000)
    return () => window.clearTimeout(t)
  }, [session])
  return <AuthContext.Provider value={{ session, signOut: () => saveSession(null) }}>{children}</AuthContext.Provider>
}

export function useAuth() {
  return useContext(AuthContext)
}

/** The signed-in user's ID (the token's sub). Only used below the sign-in gate. */
export function useUser(): string {
  return useAuth().session?.user ?? ''
}
