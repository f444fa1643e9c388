// A connection's secrets: write-only. Names, when they were set and whether they were
// invalidated (the connector moved to another address) are listed; values never are.
import { useState, type FormEvent } from 'react'
import useSWR from 'swr'
import type { Page } from '../api/client'
import type { Connection } from '../api/types'
import { Button, ErrorBanner, Spinner, TextField } from '../ui/controls'
import { secretFields, splitError } from './fieldErrors'
import { Modal } from './parts'
import { deleteSecret, setSecret, settingsKeys, when, type SecretName } from './api'

export function SecretsDialog({ wsId, connection, open, onOpenChange }: {
  wsId: string
  connection: Connection
  open: boolean
  onOpenChange: (open: boolean) => void
}) {
  return (
    <Modal open={open} onOpenChange={onOpenChange} title={`Secrets of ${connection.name}`}
      description="Values are write-only: they are encrypted, sent only to this connection's connector, and never shown again.">
      {open && <Secrets wsId={wsId} connection={connection} />}
    </Modal>
  )
}

function Secrets({ wsId, connection }: { wsId: string; connection: Connection }) {
  const key = settingsKeys.secrets(wsId, connection.id)
  const { data, error, mutate } = useSWR<Page<SecretName>>(key)
  const [name, setName] = useState('connector_key')
  const [value, setValue] = useState('')
  const [saving, setSaving] = useState(false)
  const [saved, setSaved] = useState('')
  const [formError, setFormError] = useState<unknown>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const [removing, setRemoving] = useState('')

  async function store(e: FormEvent) {
    e.preventDefault()
    setSaving(true)
    setSaved('')
    setFormError(null)
    try {
      await setSecret(wsId, connection.id, name.trim(), value)
      setValue('') // the value leaves the page as soon as it is stored
      setSaved(name.trim())
      await mutate()
    } catch (err) {
      setFormError(err)
    } finally {
      setSaving(false)
    }
  }

  async function remove(n: string) {
    setRemoving(n)
    setRowError(null)
    try {
      await deleteSecret(wsId, connection.id, n)
      await mutate()
    } catch (err) {
      setRowError(err)
    } finally {
      setRemoving('')
    }
  }

  const errs = splitError(formError, secretFields)
  return (
    <div className="space-y-4">
      {error && <ErrorBanner error={error} />}
      {!data && !error && <Spinner />}
      {data && (data.data.length === 0 ? <p className="text-sm text-slate-600">No secrets stored.</p> : (
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Stored secrets</caption>
          <thead><tr className="text-slate-600"><th scope="col" className="py-1">Name</th><th scope="col">Updated</th><th scope="col">Status</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {data.data.map((s) => (
              <tr key={s.name} className="border-t border-slate-100 align-top">
                <td className="py-1 font-mono">{s.name}</td>
                <td>{when(s.updated_at)}</td>
                <td>{s.invalidated ? <span className="text-red-800">Invalidated: {s.invalidated_reason || 'enter it again'}</span> : 'Stored'}</td>
                <td className="space-x-1 text-right">
                  <Button variant="ghost" aria-label={`Replace ${s.name}`} onClick={() => { setName(s.name); setValue('') }}>Replace</Button>
                  <Button variant="ghost" aria-label={`Delete secret ${s.name}`} disabled={removing === s.name} onClick={() => remove(s.name)}>Delete</Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      <ErrorBanner error={rowError} />
      <form onSubmit={store} className="space-y-3 rounded-md border border-slate-200 p-3">
        <h3 className="text-sm font-semibold">Set or replace a secret</h3>
        <TextField label="Secret name" name="secret_name" value={name} onChange={setName} required error={errs.field.name}
          hint="connector_key, or host, sysnr, client, router … (lower-case letters, digits and _)" />
        <TextField label="Secret value" name="secret_value" type="password" autoComplete="new-password" value={value} onChange={setValue} required error={errs.field.value} />
        <ErrorBanner error={errs.banner} />
        <div className="flex items-center gap-3">
          <Button type="submit" disabled={saving || !name.trim() || !value}>{saving ? 'Storing…' : 'Store secret'}</Button>
          <span role="status" className="text-xs text-slate-600">{saved && `Stored ${saved}.`}</span>
        </div>
      </form>
    </div>
  )
}
