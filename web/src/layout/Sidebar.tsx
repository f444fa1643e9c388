import { useState } from 'react'
import { Link, NavLink, useMatch, useNavigate } from 'react-router'
import useSWR, { useSWRConfig } from 'swr'
import type { Page } from '../api/client'
import { keys } from '../api/keys'
import type { Agent, Org, Workspace } from '../api/types'
import { useAuth } from '../auth/AuthProvider'
import { Button, ErrorBanner } from '../ui/controls'
import { createAgent } from '../chat/api'

const LAST_ORG = 'sapagent.org'

/** Organization switcher, the org's workspaces, and the current workspace's conversations. */
export function Sidebar() {
  const { session, signOut } = useAuth()
  const navigate = useNavigate()
  const match = useMatch('/w/:wsId/*')
  const wsId = match?.params.wsId
  const { data: orgs } = useSWR<Page<Org>>(keys.orgs)
  const { data: current } = useSWR<Workspace>(wsId ? keys.workspace(wsId) : null)
  const orgId = current?.org_id ?? localStorage.getItem(LAST_ORG) ?? orgs?.data[0]?.id
  const { data: workspaces } = useSWR<Page<Workspace>>(orgId ? keys.workspaces(orgId) : null)

  function switchOrg(id: string) {
    if (id === '__new') return navigate('/?new=org')
    localStorage.setItem(LAST_ORG, id)
    navigate('/?org=' + id)
  }

  return (
    <nav aria-label="Sidebar" className="flex w-72 shrink-0 flex-col border-r border-slate-200 bg-white">
      <div className="border-b border-slate-200 p-3">
        <Link to="/" className="mb-2 block text-base font-semibold text-brand-800">sapagent</Link>
        <label htmlFor="org-switcher" className="block text-xs font-medium text-slate-600">Organization</label>
        <select id="org-switcher" className="mt-1 w-full rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
          value={orgId ?? ''} onChange={(e) => switchOrg(e.target.value)}>
          {!orgs?.data.length && <option value="">No organization yet</option>}
          {orgs?.data.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          <option value="__new">New organization…</option>
        </select>
        {orgId && orgs?.data.find((o) => o.id === orgId && o.role !== 'member') && (
          <Link to={`/orgs/${orgId}/settings`} className="mt-1 inline-block text-xs text-brand-700 underline">Organization settings</Link>
        )}
      </div>
      <div className="border-b border-slate-200 p-3">
        <h2 className="mb-1 text-xs font-medium uppercase tracking-wide text-slate-600">Workspaces</h2>
        <ul className="space-y-0.5">
          {workspaces?.data.map((w) => (
            <li key={w.id}>
              <NavLink to={`/w/${w.id}`} className={({ isActive }) => `block truncate rounded px-2 py-1 text-sm ${isActive || w.id === wsId ? 'bg-brand-50 font-medium text-brand-800' : 'hover:bg-slate-100'}`}>
                {w.name}
              </NavLink>
            </li>
          ))}
        </ul>
        {orgId && <Link to={`/?org=${orgId}&new=workspace`} className="mt-1 inline-block text-xs text-brand-700 underline">New workspace</Link>}
      </div>
      {wsId && <Conversations wsId={wsId} workspace={current} />}
      <div className="mt-auto flex items-center justify-between border-t border-slate-200 p-3 text-sm">
        <span className="min-w-0 truncate" title={session?.user}>Signed in as <strong>{session?.user}</strong></span>
        <Button variant="ghost" onClick={signOut} className="shrink-0 whitespace-nowrap">Sign out</Button>
      </div>
    </nav>
  )
}

function Conversations({ wsId, workspace }: { wsId: string; workspace?: Workspace }) {
  const navigate = useNavigate()
  const { mutate } = useSWRConfig()
  const [showArchived, setShowArchived] = useState(false)
  const { data: agents, error } = useSWR<Page<Agent>>(keys.agents(wsId, showArchived))
  const [createError, setCreateError] = useState<unknown>(null)
  const [creating, setCreating] = useState(false)
  const chat = useMatch('/w/:wsId/chat/:agentId')

  async function newChat() {
    setCreating(true)
    setCreateError(null)
    try {
      const a = await createAgent(wsId, 'New chat')
      await mutate(keys.agents(wsId))
      navigate(`/w/${wsId}/chat/${a.id}`)
    } catch (e) {
      setCreateError(e)
    } finally {
      setCreating(false)
    }
  }

  return (
    <div className="flex min-h-0 flex-1 flex-col p-3">
      <div className="mb-2 flex gap-2">
        <Button onClick={newChat} disabled={creating} className="flex-1">New chat</Button>
      </div>
      <ErrorBanner error={createError} className="mb-2" />
      <div className="mb-2 flex gap-3 text-sm">
        <NavLink to={`/w/${wsId}/landscape`} className={({ isActive }) => (isActive ? 'font-medium text-brand-800' : 'text-slate-700 hover:underline')}>Landscape</NavLink>
        {workspace?.role === 'admin' || workspace?.role === 'member' ? (
          <NavLink to={`/w/${wsId}/settings`} className={({ isActive }) => (isActive ? 'font-medium text-brand-800' : 'text-slate-700 hover:underline')}>Settings</NavLink>
        ) : null}
      </div>
      <h2 className="mb-1 text-xs font-medium uppercase tracking-wide text-slate-600">{showArchived ? 'Archived chats' : 'Chats'}</h2>
      <ErrorBanner error={error} />
      <ul className="min-h-0 flex-1 space-y-0.5 overflow-y-auto" aria-label={showArchived ? 'Archived chats' : 'Chats'}>
        {agents?.data.map((a) => (
          <li key={a.id}>
            <NavLink to={`/w/${wsId}/chat/${a.id}`} aria-current={chat?.params.agentId === a.id ? 'page' : undefined}
              className={({ isActive }) => `flex items-center gap-2 truncate rounded px-2 py-1 text-sm ${isActive ? 'bg-brand-50 font-medium text-brand-800' : 'hover:bg-slate-100'}`}>
              {a.status !== 'idle' && <span aria-label={a.status === 'waiting' ? 'waiting for approval' : 'working'} className={`h-2 w-2 shrink-0 rounded-full ${a.status === 'waiting' ? 'bg-amber-500' : 'bg-green-600'}`} />}
              <span className="truncate">{a.title || a.name || 'New chat'}</span>
            </NavLink>
          </li>
        ))}
        {agents && agents.data.length === 0 && <li className="px-2 text-sm text-slate-500">{showArchived ? 'No archived chats.' : 'No chats yet.'}</li>}
      </ul>
      <button type="button" className="mt-2 self-start text-xs text-brand-700 underline" onClick={() => setShowArchived(!showArchived)}>
        {showArchived ? 'Show chats' : 'Show archived'}
      </button>
    </div>
  )
}
