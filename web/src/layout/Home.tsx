import { useState, type FormEvent } from 'react'
import { Navigate, useNavigate, useSearchParams } from 'react-router'
import useSWR, { useSWRConfig } from 'swr'
import { ApiError, type Page } from '../api/client'
import { keys } from '../api/keys'
import type { Org, Workspace } from '../api/types'
import { createOrg, createWorkspace } from './api'
import { Button, Card, ErrorBanner, PageHeader, Spinner, TextField } from '../ui/controls'

/** The start page: opens the last workspace, or creates the first organization and workspace. */
export function Home() {
  const [params] = useSearchParams()
  const { data: orgs, error } = useSWR<Page<Org>>(keys.orgs)
  const orgId = params.get('org') ?? localStorage.getItem('sapagent.org') ?? orgs?.data[0]?.id
  const validOrg = orgs?.data.find((o) => o.id === orgId)?.id ?? orgs?.data[0]?.id
  const { data: workspaces } = useSWR<Page<Workspace>>(validOrg ? keys.workspaces(validOrg) : null)
  const want = params.get('new')
  if (error) return <main className="p-6"><ErrorBanner error={error} /></main>
  if (!orgs) return <main className="p-6"><Spinner /></main>
  if (want === 'org' || orgs.data.length === 0) return <CreateOrg first={orgs.data.length === 0} />
  if (!validOrg) return <main className="p-6"><Spinner /></main>
  if (!workspaces) return <main className="p-6"><Spinner /></main>
  const org = orgs.data.find((o) => o.id === validOrg)!
  if (want === 'workspace' || workspaces.data.length === 0) return <CreateWorkspace org={org} />
  const last = localStorage.getItem('sapagent.workspace')
  const ws = workspaces.data.find((w) => w.id === last) ?? workspaces.data[0]
  return <Navigate to={`/w/${ws.id}`} replace />
}

function CreateOrg({ first }: { first: boolean }) {
  const { mutate } = useSWRConfig()
  const navigate = useNavigate()
  return (
    <CreateNamed title={first ? 'Welcome to sapagent' : 'New organization'} label="Organization name" button="Create organization"
      intro={first ? "Start with an organization: it holds your team's workspaces and members." : undefined}
      create={async (name) => {
        const o = await createOrg(name)
        localStorage.setItem('sapagent.org', o.id)
        await mutate(keys.orgs)
        navigate(`/?org=${o.id}&new=workspace`)
      }} />
  )
}

function CreateWorkspace({ org }: { org: Org }) {
  const { mutate } = useSWRConfig()
  const navigate = useNavigate()
  return (
    <CreateNamed title={`New workspace in ${org.name}`} label="Workspace name" button="Create workspace"
      intro="A workspace groups SAP connections, conversations and the people who work on them."
      create={async (name) => {
        const w = await createWorkspace(org.id, name)
        await mutate(keys.workspaces(org.id))
        navigate(`/w/${w.id}/settings/connections`)
      }} />
  )
}

/** A page with one form that creates something by name; the API's name errors show under the field. */
function CreateNamed({ title, intro, label, button, create }: {
  title: string
  intro?: string
  label: string
  button: string
  create: (name: string) => Promise<void>
}) {
  const [name, setName] = useState('')
  const [error, setError] = useState<ApiError | null>(null)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setError(null)
    try {
      await create(name.trim())
    } catch (err) {
      setError(err as ApiError)
    }
  }
  const nameError = error && /name/.test(error.code) ? error.message : undefined
  return (
    <main className="flex-1 overflow-y-auto">
      <PageHeader title={title} />
      <div className="max-w-lg p-6">
        <Card>
          <form onSubmit={submit} className="space-y-4">
            {intro && <p className="text-sm text-slate-700">{intro}</p>}
            <TextField label={label} name="name" value={name} onChange={setName} autoFocus required error={nameError} />
            {error && !nameError && <ErrorBanner error={error} />}
            <Button type="submit" disabled={!name.trim()}>{button}</Button>
          </form>
        </Card>
      </div>
    </main>
  )
}
