// The SAP landscape of a workspace (issue 13 item 5): overview, syncs with live progress,
// Clean Core, inventory, diff between connections, generated docs and the action log. Each tab
// is a nested route, so a tab (and an object in it) has its own URL.
import { useCallback, useMemo, useState } from 'react'
import { NavLink, Navigate, Route, Routes } from 'react-router'
import { useSWRConfig } from 'swr'
import { useCurrentWorkspace } from '../layout/currentWorkspace'
import { ErrorBanner, PageHeader, Spinner } from '../ui/controls'
import { LandscapeContext } from './context'
import { useWorkspaceEvents } from './useWorkspaceEvents'
import { OverviewTab } from './OverviewTab'
import { SyncTab } from './SyncTab'
import { CleanCoreTab } from './CleanCoreTab'
import { CleanCoreObjectView } from './CleanCoreObjectView'
import { InventoryTab } from './InventoryTab'
import { DiffTab } from './DiffTab'
import { DocsTab } from './DocsTab'
import { ActionsTab } from './ActionsTab'

const tabs = [
  { path: 'overview', label: 'Overview' },
  { path: 'sync', label: 'Sync' },
  { path: 'clean-core', label: 'Clean Core' },
  { path: 'inventory', label: 'Inventory' },
  { path: 'diff', label: 'Diff' },
  { path: 'docs', label: 'Docs' },
  { path: 'actions', label: 'Action log' },
]

export default function LandscapePage() {
  const { wsId, workspace, error } = useCurrentWorkspace()
  const { mutate } = useSWRConfig()
  // After a sync every figure of the workspace may have changed: read the lists again.
  // The key filter skips useSWRInfinite's keys: `version` makes the paged lists follow.
  const [version, setVersion] = useState(0)
  const refresh = useCallback(() => {
    if (!wsId) return
    void mutate((key) => typeof key === 'string' && key.includes(`/api/workspaces/${wsId}/`))
    setVersion((v) => v + 1)
  }, [mutate, wsId])
  const { runs, state } = useWorkspaceEvents(wsId, { onSyncFinished: refresh, onResync: refresh })
  const ctx = useMemo(() => ({ wsId: wsId ?? '', isAdmin: workspace?.role === 'admin', runs, streamState: state, version }), [wsId, workspace?.role, runs, state, version])

  if (!wsId) return null
  return (
    <LandscapeContext.Provider value={ctx}>
      <div className="flex min-h-full flex-col">
        <PageHeader title={workspace ? `SAP landscape — ${workspace.name}` : 'SAP landscape'}>
          <LiveBadge state={state} />
        </PageHeader>
        <nav aria-label="Landscape sections" className="border-b border-slate-200 bg-white px-6">
          <ul className="flex flex-wrap gap-1">
            {tabs.map((t) => (
              <li key={t.path}>
                <NavLink to={`/w/${wsId}/landscape/${t.path}`}
                  className={({ isActive }) => `inline-block border-b-2 px-3 py-2 text-sm focus-visible:outline-2 focus-visible:outline-brand-600 ${isActive ? 'border-brand-600 font-semibold text-brand-800' : 'border-transparent text-slate-700 hover:text-slate-900'}`}>
                  {t.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main className="flex-1 space-y-4 p-6">
          {error && <ErrorBanner error={error} />}
          {!workspace && !error && <Spinner label="Loading workspace" />}
          <Routes>
            <Route index element={<Navigate to={`/w/${wsId}/landscape/overview`} replace />} />
            <Route path="overview" element={<OverviewTab />} />
            <Route path="sync" element={<SyncTab />} />
            <Route path="clean-core" element={<CleanCoreTab />} />
            <Route path="clean-core/:connId/:type/*" element={<CleanCoreObjectView />} />
            <Route path="inventory" element={<InventoryTab />} />
            <Route path="diff" element={<DiffTab />} />
            <Route path="docs/*" element={<DocsTab />} />
            <Route path="actions" element={<ActionsTab />} />
            <Route path="*" element={<Navigate to={`/w/${wsId}/landscape/overview`} replace />} />
          </Routes>
        </main>
      </div>
    </LandscapeContext.Provider>
  )
}

/** Whether live progress is arriving: the socket's state in words. */
function LiveBadge({ state }: { state: string }) {
  const text: Record<string, string> = { open: 'Live updates on', connecting: 'Connecting…', reconnecting: 'Reconnecting…', closed: 'Live updates off' }
  return (
    <span role="status" className="text-xs text-slate-600">
      <span aria-hidden className={`mr-1 inline-block h-2 w-2 rounded-full ${state === 'open' ? 'bg-green-600' : 'bg-slate-400'}`} />
      {text[state] ?? state}
    </span>
  )
}
