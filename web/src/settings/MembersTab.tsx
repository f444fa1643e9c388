// Members of the workspace: org members become workspace admins or members.
import { Card } from '../ui/controls'
import { MembersEditor } from './MembersEditor'
import { addMember, settingsKeys } from './api'

const ROLES = [{ value: 'member', label: 'Member' }, { value: 'admin', label: 'Admin' }]

export function MembersTab({ wsId, isAdmin }: { wsId: string; isAdmin: boolean }) {
  const list = settingsKeys.members(wsId)
  return (
    <Card title="Members">
      <p className="mb-3 text-sm text-slate-700">
        Members use the workspace; admins also change its settings, connections and members. Organization owners and admins administer every workspace of the organization without being listed here.
      </p>
      <MembersEditor what="workspace" roles={ROLES} canManage={isAdmin}
        userHint="The person's user ID (their sign-in name). They must be a member of the organization first."
        endpoints={{
          list, add: list,
          // Adding an existing member again sets their role.
          changeRole: (user, role) => addMember(list, user, role),
          remove: (user) => `${list}/${encodeURIComponent(user)}`,
        }} />
    </Card>
  )
}
