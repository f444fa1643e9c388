// General: the workspace's name, who may decide tool calls, and deleting the workspace.
import { useCallback, useState } from 'react'
import { useNavigate } from 'react-router'
import { useSWRConfig } from 'swr'
import { api } from '../api/client'
import { keys } from '../api/keys'
import type { Workspace } from '../api/types'
import { Card, ErrorBanner } from '../ui/controls'
import { DeleteCard } from './DeleteCard'
import { SwitchField } from './parts'
import { RenameCard } from './RenameCard'

export function GeneralTab({ workspace }: { workspace: Workspace }) {
  const isAdmin = workspace.role === 'admin'
  return (
    <>
      <RenameWorkspace workspace={workspace} disabled={!isAdmin} />
      <ApprovalFlags workspace={workspace} disabled={!isAdmin} />
      {isAdmin && <DeleteWorkspace workspace={workspace} />}
    </>
  )
}

function RenameWorkspace({ workspace, disabled }: { workspace: Workspace; disabled: boolean }) {
  const { mutate } = useSWRConfig()
  return (
    <RenameCard title="Workspace" label="Workspace name" current={workspace.name} disabled={disabled} save={async (name) => {
      const w = await api<Workspace>(keys.workspace(workspace.id), { method: 'PATCH', body: { name } })
      await mutate(keys.workspace(workspace.id), w, { revalidate: false })
      await mutate(keys.workspaces(workspace.org_id))
    }} />
  )
}

function ApprovalFlags({ workspace, disabled }: { workspace: Workspace; disabled: boolean }) {
  const { mutate } = useSWRConfig()
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function set(flag: 'admins_may_approve' | 'four_eyes', value: boolean) {
    setSaving(true)
    setError(null)
    try {
      const w = await api<Workspace>(keys.workspace(workspace.id), { method: 'PATCH', body: { [flag]: value } })
      await mutate(keys.workspace(workspace.id), w, { revalidate: false })
    } catch (err) {
      setError(err)
    } finally {
      setSaving(false)
    }
  }
  return (
    <Card title="Who decides tool calls">
      <p className="mb-2 text-sm text-slate-700">A tool call runs with the SAP login of the person whose message led to it, so by default only that person approves or rejects it.</p>
      <div className="divide-y divide-slate-100">
        <SwitchField label="Admins may approve" checked={workspace.admins_may_approve} disabled={disabled || saving}
          onChange={(v) => set('admins_may_approve', v)}
          description="Workspace admins (and organization owners and admins) may approve or reject any member's tool calls." />
        <SwitchField label="Four eyes" checked={workspace.four_eyes} disabled={disabled || saving}
          onChange={(v) => set('four_eyes', v)}
          description="A write needs a second person's approval: its requester may only reject it, any other member may approve it." />
      </div>
      <ErrorBanner error={error} className="mt-2" />
    </Card>
  )
}

function DeleteWorkspace({ workspace }: { workspace: Workspace }) {
  const navigate = useNavigate()
  const { mutate } = useSWRConfig()
  const done = useCallback(() => {
    if (localStorage.getItem('sapagent.workspace') === workspace.id) localStorage.removeItem('sapagent.workspace')
    void mutate(keys.workspaces(workspace.org_id))
    navigate('/')
  }, [mutate, navigate, workspace.id, workspace.org_id])
  return (
    <DeleteCard what="workspace" name={workspace.name} path={keys.workspace(workspace.id)} onDone={done}
      // The workspace is hidden at once: the sidebar drops it now.
      onStarted={() => void mutate(keys.workspaces(workspace.org_id))}
      explanation="Deletes the workspace with its conversations, files, connections and SAP logins. This cannot be undone."
      description={<p>Everything in it is removed for every member: conversations, files, connections, secrets and SAP logins.</p>} />
  )
}
