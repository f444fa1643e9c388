// Workspace settings (/w/:wsId/settings/*): one tab per concern, each a nested route, so a
// tab has its own URL and the browser's back button works. Tabs are links (aria-current).
import { NavLink, Navigate, Route, Routes } from 'react-router'
import { useCurrentWorkspace } from '../layout/currentWorkspace'
import { ErrorBanner, PageHeader, Spinner } from '../ui/controls'
import { GeneralTab } from './GeneralTab'
import { ConnectionsTab } from './ConnectionsTab'
import { SapLoginsTab } from './SapLoginsTab'
import { ToolPolicyTab } from './ToolPolicyTab'
import { MembersTab } from './MembersTab'

const TABS = [
  { path: 'general', label: 'General' },
  { path: 'connections', label: 'Connections' },
  { path: 'sap-logins', label: 'My SAP logins' },
  { path: 'tool-policy', label: 'Tool policy' },
  { path: 'members', label: 'Members' },
]

export default function SettingsPage() {
  const { wsId, workspace, error } = useCurrentWorkspace()
  // SWR keeps the last data on error: a workspace being deleted keeps its page until it is gone.
  if (!workspace) {
    return <main className="flex-1 p-6">{error ? <ErrorBanner error={error} /> : <Spinner />}</main>
  }
  const isAdmin = workspace.role === 'admin'
  // Absolute paths: relative ones inside a splat route resolve against the current tab's URL.
  const base = `/w/${wsId}/settings`
  return (
    <main className="flex-1 overflow-y-auto">
      <PageHeader title={`Settings · ${workspace.name}`} />
      <nav aria-label="Workspace settings" className="border-b border-slate-200 bg-white px-6">
        <ul className="flex flex-wrap gap-1">
          {TABS.map((t) => (
            <li key={t.path}>
              <NavLink to={`${base}/${t.path}`}
                className={({ isActive }) => `inline-block border-b-2 px-3 py-2 text-sm ${isActive ? 'border-brand-600 font-medium text-brand-800' : 'border-transparent text-slate-700 hover:text-slate-900'}`}>
                {t.label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="max-w-4xl space-y-4 p-6">
        {!isAdmin && (
          <p className="rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm text-slate-700">
            You are a member of this workspace: you can read its settings, and set your own SAP logins and tool policy. Workspace admins change the rest.
          </p>
        )}
        <Routes>
          <Route index element={<Navigate to={`${base}/general`} replace />} />
          <Route path="general" element={<GeneralTab workspace={workspace} />} />
          <Route path="connections" element={<ConnectionsTab wsId={wsId!} isAdmin={isAdmin} />} />
          <Route path="sap-logins" element={<SapLoginsTab wsId={wsId!} />} />
          <Route path="tool-policy" element={<ToolPolicyTab wsId={wsId!} />} />
          <Route path="members" element={<MembersTab wsId={wsId!} isAdmin={isAdmin} />} />
          <Route path="*" element={<Navigate to={`${base}/general`} replace />} />
        </Routes>
      </div>
    </main>
  )
}
