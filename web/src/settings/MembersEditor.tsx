// A member list with roles: add, change role, remove. Used by the workspace's Members tab and
// by the organization settings; the API decides who may do what and its message is shown.
import { useState, type FormEvent } from 'react'
import useSWR from 'swr'
import type { Page } from '../api/client'
import type { Member } from '../api/types'
import { useAuth } from '../auth/AuthProvider'
import { Button, ErrorBanner, SelectField, Spinner, TextField } from '../ui/controls'
import { explainMemberError, memberFields, splitError } from './fieldErrors'
import { addMember, removeMember, when } from './api'

export interface MembersApi {
  list: string // GET: the members
  add: string // POST {user_id, role}
  changeRole: (user: string, role: string) => Promise<unknown>
  remove: (user: string) => string // DELETE
}

export function MembersEditor({ what, roles, endpoints, canManage, userHint }: {
  what: string // "workspace" | "organization", for labels
  roles: { value: string; label: string }[]
  endpoints: MembersApi
  canManage: boolean
  userHint: string
}) {
  const { session } = useAuth()
  const { data, error, mutate } = useSWR<Page<Member>>(endpoints.list)
  const [rowError, setRowError] = useState<unknown>(null)
  const [busyUser, setBusyUser] = useState('')

  async function rowAction(user: string, f: () => Promise<unknown>) {
    setBusyUser(user)
    setRowError(null)
    try {
      await f()
      await mutate()
    } catch (err) {
      setRowError(explainMemberError(err))
    } finally {
      setBusyUser('')
    }
  }

  return (
    <div className="space-y-4">
      {error && <ErrorBanner error={error} />}
      {!data && !error && <Spinner />}
      {data && (
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Members of the {what}</caption>
          <thead><tr className="text-slate-600"><th scope="col" className="py-1">User</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {data.data.map((m) => (
              <tr key={m.user_id} className="border-t border-slate-100">
                <td className="py-1">{m.user_id}{m.user_id === session?.user && <span className="ml-1 text-xs text-slate-600">(you)</span>}</td>
                <td>
                  {canManage ? (
                    <select aria-label={`Role of ${m.user_id}`} value={m.role} disabled={busyUser === m.user_id}
                      onChange={(e) => rowAction(m.user_id, () => endpoints.changeRole(m.user_id, e.target.value))}
                      className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm">
                      {roles.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
                    </select>
                  ) : roles.find((r) => r.value === m.role)?.label ?? m.role}
                </td>
                <td>{when(m.created_at)}</td>
                <td className="text-right">
                  {(canManage || m.user_id === session?.user) && (
                    <Button variant="ghost" aria-label={m.user_id === session?.user ? `Leave the ${what}` : `Remove ${m.user_id}`} disabled={busyUser === m.user_id}
                      onClick={() => rowAction(m.user_id, () => removeMember(endpoints.remove(m.user_id)))}>
                      {m.user_id === session?.user ? 'Leave' : 'Remove'}
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorBanner error={rowError} />
      {canManage && <AddMember what={what} roles={roles} url={endpoints.add} userHint={userHint} onAdded={() => mutate()} />}
    </div>
  )
}

function AddMember({ what, roles, url, userHint, onAdded }: {
  what: string
  roles: { value: string; label: string }[]
  url: string
  userHint: string
  onAdded: () => Promise<unknown>
}) {
  const [user, setUser] = useState('')
  const [role, setRole] = useState('member')
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setSaving(true)
    setError(null)
    try {
      await addMember(url, user.trim(), role)
      setUser('')
      await onAdded()
    } catch (err) {
      setError(err)
    } finally {
      setSaving(false)
    }
  }
  const errs = splitError(explainMemberError(error), memberFields)
  return (
    <form onSubmit={submit} className="space-y-3 rounded-md border border-slate-200 p-3">
      <h3 className="text-sm font-semibold">Add a member to the {what}</h3>
      <div className="grid gap-3 sm:grid-cols-2">
        <TextField label="User ID" name="user_id" value={user} onChange={setUser} required error={errs.field.user_id} hint={userHint} />
        <SelectField label="Role" name="role" value={role} onChange={setRole} options={roles} error={errs.field.role} />
      </div>
      <ErrorBanner error={errs.banner} />
      <Button type="submit" disabled={saving || !user.trim()}>{saving ? 'Adding…' : 'Add member'}</Button>
    </form>
  )
}
