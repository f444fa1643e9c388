import { lazy, Suspense } from 'react'
import { Navigate, Route, Routes } from 'react-router'
import { useAuth } from './auth/AuthProvider'
import { SignInPage } from './auth/SignInPage'
import { Shell } from './layout/Shell'
import { Home } from './layout/Home'
import { WorkspaceHome } from './layout/WorkspaceHome'
import { Spinner } from './ui/controls'

// Pages load on demand, so the first screen stays small (initial JS ≤ 250 KB gzip).
const ChatPage = lazy(() => import('./chat/ChatPage'))
const SettingsPage = lazy(() => import('./settings/SettingsPage'))
const OrgSettingsPage = lazy(() => import('./settings/OrgSettingsPage'))
const LandscapePage = lazy(() => import('./landscape/LandscapePage'))
const OidcCallback = lazy(() => import('./auth/OidcCallback'))

export function App() {
  const { session } = useAuth()
  return (
    <Suspense fallback={<div className="p-6"><Spinner /></div>}>
      <Routes>
        <Route path="/auth/callback" element={<OidcCallback />} />
        {!session ? (
          <Route path="*" element={<SignInPage />} />
        ) : (
          <Route element={<Shell />}>
            <Route index element={<Home />} />
            <Route path="orgs/:orgId/settings" element={<OrgSettingsPage />} />
            <Route path="w/:wsId" element={<WorkspaceHome />} />
            <Route path="w/:wsId/chat/:agentId" element={<ChatPage />} />
            <Route path="w/:wsId/settings/*" element={<SettingsPage />} />
            <Route path="w/:wsId/landscape/*" element={<LandscapePage />} />
            <Route path="*" element={<Navigate to="/" replace />} />
          </Route>
        )}
      </Routes>
    </Suspense>
  )
}
