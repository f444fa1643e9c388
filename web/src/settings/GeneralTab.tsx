// General: the workspace's name, who may decide tool calls, and deleting the workspace.
import { useCallback, useState } from 'react'
import { useNavigate } from 'react-router'
import { useSWRConfig } from 'swr'
import { updateWorkspace } from './api'
import { keys } from '../api/keys'
import type { Workspace } from '../api/types'
import { Card, ErrorBanner, SelectField } from '../ui/controls'
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
      const w = await updateWorkspace(workspace.id, { name })
      await mutate(keys.workspace(workspace.id), w, { revalidate: false })
      await mutate(keys.workspaces(workspace.org_id))
    }} />
  )
}

const MAX_POLICIES = [
  { value: 'run_everything', label: 'Run everything (no limit)' },
  { value: 'run_reads_only', label: 'Run reads, ask for writes' },
  { value: 'ask_every_time', label: 'Ask every time' },
]

function ApprovalFlags({ workspace, disabled }: { workspace: Workspace; disabled: boolean }) {
  const { mutate } = useSWRConfig()
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function set(flag: 'admins_may_approve' | 'four_eyes' | 'max_tool_policy', value: boolean | string) {
    setSaving(true)
    setError(null)
    try {
      const w = await updateWorkspace(workspace.id, { [flag]: value })
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
          description="Every write needs a second person's approval, whatever a member's tool policy: its requester may only reject it, any other member may approve it." />
      </div>
      <div className="mt-3">
        <SelectField label="Most a member's tool policy may allow" name="max_tool_policy" value={workspace.max_tool_policy ?? 'run_everything'}
          disabled={disabled || saving} onChange={(v) => set('max_tool_policy', v)} options={MAX_POLICIES}
          hint="Members keep their own choice; the stricter of it and this one applies to their calls." />
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
