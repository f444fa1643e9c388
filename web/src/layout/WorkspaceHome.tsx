import { useEffect } from 'react'
import { Link } from 'react-router'
import useSWR from 'swr'
import type { Page } from '../api/client'
import { keys } from '../api/keys'
import type { Agent, Connection } from '../api/types'
import { Card, ErrorBanner, PageHeader, Spinner } from '../ui/controls'
import { useCurrentWorkspace } from './currentWorkspace'

/** A workspace's start page: its connections and recent conversations. */
export function WorkspaceHome() {
  const { wsId, workspace, error } = useCurrentWorkspace()
  const { data: agents } = useSWR<Page<Agent>>(wsId ? keys.agents(wsId) : null)
  const { data: conns } = useSWR<Page<Connection>>(wsId ? keys.connections(wsId) : null)
  useEffect(() => {
    if (workspace) {
      localStorage.setItem('sapagent.workspace', workspace.id)
      localStorage.setItem('sapagent.org', workspace.org_id)
    }
  }, [workspace])
  if (error) return <main className="p-6"><ErrorBanner error={error} /></main>
  if (!workspace) return <main className="p-6"><Spinner /></main>
  return (
    <main className="flex-1 overflow-y-auto">
      <PageHeader title={workspace.name} />
      <div className="grid gap-4 p-6 md:grid-cols-2">
        <Card title="SAP connections">
          {conns?.data.length ? (
            <ul className="space-y-1 text-sm">
              {conns.data.map((c) => <li key={c.id}><strong>{c.name}</strong> · {c.system_type}{c.simulated ? ' · simulated' : ''}</li>)}
            </ul>
          ) : (
            <p className="text-sm text-slate-600">No connections yet.</p>
          )}
          {workspace.role === 'admin' && <Link className="mt-2 inline-block text-sm text-brand-700 underline" to={`/w/${wsId}/settings/connections`}>Manage connections</Link>}
        </Card>
        <Card title="Recent chats">
          {agents?.data.length ? (
            <ul className="space-y-1 text-sm">
              {agents.data.slice(0, 10).map((a) => <li key={a.id}><Link className="text-brand-700 underline" to={`/w/${wsId}/chat/${a.id}`}>{a.title || a.name || 'New chat'}</Link></li>)}
            </ul>
          ) : (
            <p className="text-sm text-slate-600">No chats yet: start one with “New chat” in the sidebar.</p>
          )}
        </Card>
      </div>
    </main>
  )
}
