// The connection setup wizard: (1) settings, (2) test the unsaved settings with
// test-connection-preview, (3) save, then store the connector key as a write-only secret.
// Also edits a saved connection (PATCH of what changed).
import { useState, type FormEvent } from 'react'
import type { Connection } from '../api/types'
import { Button, ErrorBanner, SelectField, TextField } from '../ui/controls'
import {
  CREDENTIAL_MODES, SYNC_DEFAULTS, createBody, emptyForm, formOf, patchBody, previewBody,
  type ConnectionForm, type TestLogin,
} from './connectionForm'
import { connectionFields, splitError } from './fieldErrors'
import { Modal } from './parts'
import { createConnection, previewConnection, setSecret, updateConnection, type CheckResult } from './api'
import { CheckList } from './CheckList'

type Step = 'settings' | 'test'

export interface SavedResult {
  connection: Connection
  keyError?: unknown // the connection was saved but its connector key was not
}

export function ConnectionWizard({ wsId, connection, open, onOpenChange, onSaved }: {
  wsId: string
  connection?: Connection
  open: boolean
  onOpenChange: (open: boolean) => void
  onSaved: (r: SavedResult) => void
}) {
  return (
    <Modal open={open} onOpenChange={onOpenChange}
      title={connection ? `Edit connection ${connection.name}` : 'New connection'}
      description="Settings, then a test of the unsaved settings, then save.">
      {/* Mounted only while open, so each opening starts from the first step. */}
      {open && <WizardBody wsId={wsId} connection={connection} onSaved={onSaved} onCancel={() => onOpenChange(false)} />}
    </Modal>
  )
}

function WizardBody({ wsId, connection, onSaved, onCancel }: {
  wsId: string
  connection?: Connection
  onSaved: (r: SavedResult) => void
  onCancel: () => void
}) {
  const before = connection ? formOf(connection) : emptyForm
  const [form, setForm] = useState<ConnectionForm>(before)
  const [login, setLogin] = useState<TestLogin>({ connector_key: '', sap_user: '', sap_password: '' })
  const [step, setStep] = useState<Step>('settings')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState<'' | 'testing' | 'saving'>('')
  const [result, setResult] = useState<CheckResult | null>(null)
  const set = <K extends keyof ConnectionForm>(k: K) => (v: ConnectionForm[K]) => setForm((f) => ({ ...f, [k]: v }))
  const setL = (k: keyof TestLogin) => (v: string) => setLogin((l) => ({ ...l, [k]: v }))
  const errs = splitError(error, connectionFields, form as unknown as Record<string, string>)

  // An error about a setting sends the person back to the settings step, next to its field.
  function failed(err: unknown) {
    setError(err)
    if (Object.keys(splitError(err, connectionFields, form as unknown as Record<string, string>).field).length) setStep('settings')
  }

  function next(e: FormEvent) {
    e.preventDefault()
    setError(null)
    setStep('test')
  }

  async function runTest() {
    setBusy('testing')
    setError(null)
    setResult(null)
    try {
      setResult(await previewConnection(wsId, previewBody(form, login)))
    } catch (err) {
      failed(err)
    } finally {
      setBusy('')
    }
  }

  async function save() {
    setBusy('saving')
    setError(null)
    let saved: Connection
    try {
      saved = connection
        ? await updateConnection(wsId, connection.id, patchBody(form, before))
        : await createConnection(wsId, createBody(form))
    } catch (err) {
      failed(err)
      setBusy('')
      return
    }
    let keyError: unknown
    if (login.connector_key) {
      try {
        await setSecret(wsId, saved.id, 'connector_key', login.connector_key)
      } catch (err) {
        keyError = err
      }
    }
    setBusy('')
    onSaved({ connection: saved, keyError })
  }

  const noChange = !!connection && Object.keys(patchBody(form, before)).length === 0 && !login.connector_key
  return (
    <div>
      <ol aria-label="Steps" className="mb-4 flex gap-2 text-xs">
        {[['settings', '1. Settings'], ['test', '2. Test and save']].map(([s, label]) => (
          <li key={s} aria-current={step === s ? 'step' : undefined}
            className={`rounded-full px-2 py-0.5 ${step === s ? 'bg-brand-600 text-white' : 'bg-slate-100 text-slate-700'}`}>{label}</li>
        ))}
      </ol>
      {step === 'settings' ? (
        <form onSubmit={next} className="space-y-3">
          <TextField label="Connection name" name="name" value={form.name} onChange={set('name')} required autoFocus error={errs.field.name} />
          <SelectField label="System type" name="system_type" value={form.system_type} onChange={(v) => set('system_type')(v as ConnectionForm['system_type'])}
            options={[{ value: 'S4HANA', label: 'SAP S/4HANA' }, { value: 'ECC', label: 'SAP ECC' }]} error={errs.field.system_type} />
          <TextField label="Connector URL" name="connector_url" value={form.connector_url} onChange={set('connector_url')}
            placeholder="https://connector.example.com" error={errs.field.connector_url}
            hint="The sapagent connector in front of the SAP system. Empty: the built-in simulated system (development servers only, or with Simulated checked)." />
          <SimulatedCheckbox checked={form.simulated} onChange={set('simulated')} />
          <SelectField label="Environment" name="environment" value={form.environment} onChange={(v) => set('environment')(v as ConnectionForm['environment'])}
            options={[{ value: 'development', label: 'Development' }, { value: 'test', label: 'Test' }, { value: 'production', label: 'Production' }]}
            error={errs.field.environment} hint="Production connections get the stricter URL rules (https, no loopback)." />
          <SelectField label="Credential mode" name="credential_mode" value={form.credential_mode} onChange={(v) => set('credential_mode')(v as ConnectionForm['credential_mode'])}
            options={[...(connection ? [] : [{ value: '', label: "Server default (production: each user's own login)" }]), ...CREDENTIAL_MODES.map((m) => ({ value: m.value, label: m.label }))]}
            error={errs.field.credential_mode}
            hint={(CREDENTIAL_MODES.find((m) => m.value === form.credential_mode)?.help ?? 'What members without their own SAP login may do.') + ' A member with their own login always calls SAP as themselves.'} />
          <fieldset className="space-y-3 rounded-md border border-slate-200 p-3">
            <legend className="px-1 text-sm font-medium">Sync schedule (optional)</legend>
            <TextField label="Full sync (cron)" name="sync_full_cron" value={form.sync_full_cron} onChange={set('sync_full_cron')}
              placeholder={SYNC_DEFAULTS.sync_full_cron} error={errs.field.sync_full_cron} hint={`Five fields: minute hour day month weekday. Default ${SYNC_DEFAULTS.sync_full_cron} (Sundays 02:00).`} />
            <TextField label="Delta sync (cron)" name="sync_delta_cron" value={form.sync_delta_cron} onChange={set('sync_delta_cron')}
              placeholder={SYNC_DEFAULTS.sync_delta_cron} error={errs.field.sync_delta_cron} hint={`Default ${SYNC_DEFAULTS.sync_delta_cron} (daily 03:00).`} />
            <TextField label="Time zone" name="sync_timezone" value={form.sync_timezone} onChange={set('sync_timezone')}
              placeholder={SYNC_DEFAULTS.sync_timezone} error={errs.field.sync_timezone} hint="An IANA name such as Europe/Berlin. Default UTC." />
          </fieldset>
          <ErrorBanner error={errs.banner} />
          <div className="flex justify-end gap-2">
            <Button variant="secondary" onClick={onCancel}>Cancel</Button>
            <Button type="submit" disabled={!form.name.trim()}>Next: test connection</Button>
          </div>
        </form>
      ) : (
        <form onSubmit={(e) => { e.preventDefault(); void runTest() }} className="space-y-3">
          <p className="text-sm text-slate-700">
            Test <strong>{form.name}</strong> ({form.connector_url.trim() || 'simulated'}) before saving. The connector key and SAP login below are used for this test only and are never stored by it;
            the connector key is stored as a write-only secret when you save.
          </p>
          <TextField label="Connector key" name="connector_key" type="password" autoComplete="new-password" value={login.connector_key} onChange={setL('connector_key')}
            hint={connection ? 'Leave empty to keep the stored key.' : 'Optional: the simulated system needs none.'} />
          <TextField label="SAP user (test only)" name="sap_user" autoComplete="off" value={login.sap_user} onChange={setL('sap_user')} />
          <TextField label="SAP password (test only)" name="sap_password" type="password" autoComplete="new-password" value={login.sap_password} onChange={setL('sap_password')} />
          {result && <CheckList result={result} />}
          <ErrorBanner error={errs.banner} />
          <div className="flex flex-wrap justify-end gap-2">
            <Button variant="secondary" disabled={!!busy} onClick={() => { setError(null); setStep('settings') }}>Back</Button>
            <Button type="submit" variant="secondary" disabled={!!busy}>{busy === 'testing' ? 'Testing…' : 'Run test'}</Button>
            <Button disabled={!!busy || noChange} onClick={save}>{busy === 'saving' ? 'Saving…' : connection ? 'Save changes' : 'Save connection'}</Button>
          </div>
        </form>
      )}
    </div>
  )
}

function SimulatedCheckbox({ checked, onChange }: { checked: boolean; onChange: (v: boolean) => void }) {
  return (
    <div>
      <label className="inline-flex items-center gap-2 text-sm font-medium text-slate-800">
        <input type="checkbox" name="simulated" checked={checked} onChange={(e) => onChange(e.target.checked)} aria-describedby="simulated-hint" />
        Simulated SAP system
      </label>
      <p id="simulated-hint" className="text-xs text-slate-600">The built-in simulated landscape answers for this connection; it has no connector URL.</p>
    </div>
  )
}
