// Organization settings (/orgs/:orgId/settings): rename, members with roles, delete.
import { useCallback } from 'react'
import { useNavigate, useParams } from 'react-router'
import useSWR, { useSWRConfig } from 'swr'
import { keys } from '../api/keys'
import type { Org } from '../api/types'
import { Card, ErrorBanner, PageHeader, Spinner } from '../ui/controls'
import { DeleteCard } from './DeleteCard'
import { RenameCard } from './RenameCard'
import { MembersEditor } from './MembersEditor'
import { renameOrg, setOrgMemberRole, settingsKeys } from './api'

const ROLES = [{ value: 'member', label: 'Member' }, { value: 'admin', label: 'Admin' }, { value: 'owner', label: 'Owner' }]

export default function OrgSettingsPage() {
  const { orgId } = useParams()
  const { data: org, error } = useSWR<Org>(orgId ? settingsKeys.org(orgId) : null)
  if (!org) return <main className="flex-1 p-6">{error ? <ErrorBanner error={error} /> : <Spinner />}</main>
  const canManage = org.role === 'owner' || org.role === 'admin'
  const list = settingsKeys.orgMembers(org.id)
  return (
    <main className="flex-1 overflow-y-auto">
      <PageHeader title={`Organization settings · ${org.name}`} />
      <div className="max-w-4xl space-y-4 p-6">
        <RenameOrg org={org} disabled={!canManage} />
        <Card title="Members">
          <p className="mb-3 text-sm text-slate-700">
            Owners and admins manage members and administer every workspace; only owners grant, change or remove the owner role, and the organization always keeps one owner.
          </p>
          <MembersEditor what="organization" roles={ROLES} canManage={canManage}
            userHint="The person's user ID (their sign-in name)."
            endpoints={{
              list, add: list,
              changeRole: (user, role) => setOrgMemberRole(org.id, user, role),
              remove: (user) => `${list}/${encodeURIComponent(user)}`,
            }} />
        </Card>
        {org.role === 'owner' && <DeleteOrg org={org} />}
      </div>
    </main>
  )
}

function RenameOrg({ org, disabled }: { org: Org; disabled: boolean }) {
  const { mutate } = useSWRConfig()
  return (
    <RenameCard title="Organization" label="Organization name" current={org.name} disabled={disabled} save={async (name) => {
      const o = await renameOrg(org.id, name)
      await mutate(settingsKeys.org(org.id), o, { revalidate: false })
      await mutate(keys.orgs)
    }} />
  )
}

function DeleteOrg({ org }: { org: Org }) {
  const navigate = useNavigate()
  const { mutate } = useSWRConfig()
  const done = useCallback(() => {
    if (localStorage.getItem('sapagent.org') === org.id) localStorage.removeItem('sapagent.org')
    void mutate(keys.orgs)
    navigate('/')
  }, [mutate, navigate, org.id])
  return (
    <DeleteCard what="organization" name={org.name} path={settingsKeys.org(org.id)} onDone={done}
      explanation="Deletes the organization with all its workspaces, conversations, files and connections. This cannot be undone."
      description={<p>Every workspace of {org.name} is deleted for every member, with everything in it.</p>} />
  )
}
