// Connections: each with its system, connector, credential mode, schedule and health; the setup
// wizard, a test of a saved connection, its write-only secrets, and delete.
import { useState } from 'react'
import useSWR, { useSWRConfig } from 'swr'
import type { Page } from '../api/client'
import { keys } from '../api/keys'
import type { Connection } from '../api/types'
import { Button, Card, ErrorBanner, Spinner } from '../ui/controls'
import { CheckList } from './CheckList'
import { credentialModeLabel } from './connectionForm'
import { ConnectionWizard, type SavedResult } from './ConnectionWizard'
import { ConfirmDialog } from './parts'
import { SecretsDialog } from './SecretsDialog'
import { deleteConnection, settingsKeys, testConnection, type CheckResult, type ConnectorHealth } from './api'

export function ConnectionsTab({ wsId, isAdmin }: { wsId: string; isAdmin: boolean }) {
  const { mutate } = useSWRConfig()
  const { data, error } = useSWR<Page<Connection>>(keys.connections(wsId))
  // Health calls every connector: fetched once per visit and on demand (it has a rate budget).
  const health = useSWR<{ data: ConnectorHealth[] }>(data?.data.length ? settingsKeys.health(wsId) : null, { revalidateIfStale: false })
  const [wizard, setWizard] = useState<{ open: boolean; connection?: Connection }>({ open: false })
  const [notice, setNotice] = useState<unknown>(null)

  async function saved(r: SavedResult) {
    setWizard({ open: false })
    setNotice(r.keyError ? new Error(`Connection ${r.connection.name} was saved, but its connector key was not stored: ${(r.keyError as Error).message}. Set it under Secrets.`) : null)
    await mutate(keys.connections(wsId))
    void health.mutate()
  }

  return (
    <Card title="SAP connections">
      <div className="mb-3 flex flex-wrap gap-2">
        {isAdmin && <Button onClick={() => setWizard({ open: true })}>New connection</Button>}
        {!!data?.data.length && (
          <Button variant="secondary" disabled={health.isValidating} onClick={() => health.mutate()}>
            {health.isValidating ? 'Checking health…' : 'Check health'}
          </Button>
        )}
      </div>
      <ErrorBanner error={notice} className="mb-3" />
      {error && <ErrorBanner error={error} />}
      {!data && !error && <Spinner />}
      {data && data.data.length === 0 && <p className="text-sm text-slate-600">No connections yet.{isAdmin && ' Create one with New connection; without a connector URL it uses the built-in simulated SAP system on a development server.'}</p>}
      {health.error && <ErrorBanner error={health.error} className="mb-3" />}
      <ul className="space-y-3">
        {data?.data.map((c) => (
          <li key={c.id}>
            <ConnectionItem wsId={wsId} connection={c} isAdmin={isAdmin}
              health={health.data?.data.find((h) => h.connection_id === c.id)} healthLoading={health.isLoading}
              onEdit={() => setWizard({ open: true, connection: c })} />
          </li>
        ))}
      </ul>
      <ConnectionWizard wsId={wsId} open={wizard.open} connection={wizard.connection}
        onOpenChange={(open) => setWizard((w) => ({ ...w, open }))} onSaved={saved} />
    </Card>
  )
}

function ConnectionItem({ wsId, connection: c, isAdmin, health, healthLoading, onEdit }: {
  wsId: string
  connection: Connection
  isAdmin: boolean
  health?: ConnectorHealth
  healthLoading: boolean
  onEdit: () => void
}) {
  const { mutate } = useSWRConfig()
  const [test, setTest] = useState<{ busy: boolean; result?: CheckResult; error?: unknown }>({ busy: false })
  const [secretsOpen, setSecretsOpen] = useState(false)
  const [confirm, setConfirm] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const [deleteError, setDeleteError] = useState<unknown>(null)

  async function runTest() {
    setTest({ busy: true })
    try {
      const result = await testConnection(wsId, c.id)
      setTest({ busy: false, result })
    } catch (error) {
      setTest({ busy: false, error })
    }
  }

  async function remove() {
    setDeleting(true)
    setDeleteError(null)
    try {
      await deleteConnection(wsId, c.id)
      setConfirm(false)
      await mutate(keys.connections(wsId))
      void mutate(settingsKeys.health(wsId))
    } catch (err) {
      setDeleteError(err)
    } finally {
      setDeleting(false)
    }
  }

  return (
    <section aria-label={`Connection ${c.name}`} className="rounded-md border border-slate-200 p-3">
      <div className="flex flex-wrap items-start justify-between gap-2">
        <h3 className="font-medium">{c.name}</h3>
        <div className="flex flex-wrap gap-2">
          <Button variant="secondary" aria-label={`Test ${c.name}`} disabled={test.busy} onClick={runTest}>{test.busy ? 'Testing…' : 'Test'}</Button>
          {isAdmin && <>
            <Button variant="secondary" aria-label={`Edit ${c.name}`} onClick={onEdit}>Edit</Button>
            <Button variant="secondary" aria-label={`Secrets ${c.name}`} onClick={() => setSecretsOpen(true)}>Secrets</Button>
            <Button variant="danger" aria-label={`Delete ${c.name}`} onClick={() => setConfirm(true)}>Delete</Button>
          </>}
        </div>
      </div>
      <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
        <dt className="text-slate-600">System type</dt><dd>{c.system_type === 'S4HANA' ? 'S/4HANA' : c.system_type}</dd>
        <dt className="text-slate-600">Connector</dt><dd className="break-all">{c.connector_url || (c.simulated ? 'simulated' : 'none (not simulated)')}</dd>
        <dt className="text-slate-600">Environment</dt><dd>{c.environment}</dd>
        <dt className="text-slate-600">Credential mode</dt><dd>{credentialModeLabel(c.credential_mode)}</dd>
        <dt className="text-slate-600">Sync</dt><dd>full <code>{c.sync_full_cron}</code>, delta <code>{c.sync_delta_cron}</code> ({c.sync_timezone})</dd>
        <dt className="text-slate-600">Health</dt><dd><HealthLine health={health} loading={healthLoading} /></dd>
      </dl>
      {test.result && <div className="mt-2"><CheckList result={test.result} /></div>}
      {!!test.error && <ErrorBanner error={test.error} className="mt-2" />}
      {isAdmin && <SecretsDialog wsId={wsId} connection={c} open={secretsOpen} onOpenChange={setSecretsOpen} />}
      <ConfirmDialog open={confirm} onOpenChange={setConfirm} busy={deleting} error={deleteError}
        title={`Delete connection ${c.name}?`} confirmLabel="Delete connection" onConfirm={remove}
        description={<p>Its sync schedules stop, and its index, secrets and every member's SAP login for it are deleted.</p>} />
    </section>
  )
}

function HealthLine({ health, loading }: { health?: ConnectorHealth; loading: boolean }) {
  if (!health) return <span className="text-slate-600">{loading ? 'checking…' : 'unknown'}</span>
  if (!health.reachable) return <span className="text-red-800">unreachable ({health.latency_ms} ms): {health.error}</span>
  return (
    <span className="text-green-800">
      reachable, {health.latency_ms} ms{health.system_id && <>, system {health.system_id}</>}{health.system_type && <> ({health.system_type}{health.release && ` ${health.release}`})</>}
    </span>
  )
}
