// My SAP logins: the signed-in user's own SAP user and password per connection of this
// workspace. Passwords are write-only; an invalidated login shows why.
import { useState, type FormEvent } from 'react'
import useSWR from 'swr'
import type { Page } from '../api/client'
import { keys } from '../api/keys'
import type { Connection } from '../api/types'
import { Button, Card, ErrorBanner, Spinner, TextField } from '../ui/controls'
import { credentialModeLabel } from './connectionForm'
import { credentialFields, splitError } from './fieldErrors'
import { deleteSapLogin, setSapLogin, settingsKeys, when, type SapCredential } from './api'

export function SapLoginsTab({ wsId }: { wsId: string }) {
  const conns = useSWR<Page<Connection>>(keys.connections(wsId))
  const creds = useSWR<Page<SapCredential>>(settingsKeys.credentials)
  const error = conns.error ?? creds.error
  return (
    <Card title="My SAP logins">
      <p className="mb-3 text-sm text-slate-700">
        Tools call SAP as the person whose message led to them. Store your own SAP user for a connection and SAP calls you cause run as you;
        without one you get what the connection's credential mode allows. Passwords are encrypted and never shown again.
      </p>
      {error && <ErrorBanner error={error} />}
      {(!conns.data || !creds.data) && !error && <Spinner />}
      {conns.data?.data.length === 0 && <p className="text-sm text-slate-600">This workspace has no connections yet.</p>}
      {conns.data && creds.data && (
        <ul className="space-y-3">
          {conns.data.data.map((c) => (
            <li key={c.id}>
              <LoginForm connection={c} credential={creds.data!.data.find((x) => x.connection_id === c.id)} onChange={() => creds.mutate()} />
            </li>
          ))}
        </ul>
      )}
    </Card>
  )
}

function LoginForm({ connection: c, credential, onChange }: { connection: Connection; credential?: SapCredential; onChange: () => Promise<unknown> }) {
  const [sapUser, setSapUser] = useState(credential?.sap_user ?? '')
  const [password, setPassword] = useState('')
  const [busy, setBusy] = useState<'' | 'saving' | 'removing'>('')
  const [saved, setSaved] = useState(false)
  const [error, setError] = useState<unknown>(null)

  async function save(e: FormEvent) {
    e.preventDefault()
    setBusy('saving')
    setSaved(false)
    setError(null)
    try {
      const cred = await setSapLogin(c.id, sapUser, password)
      setPassword('')
      setSapUser(cred.sap_user)
      setSaved(true)
      await onChange()
    } catch (err) {
      setError(err)
    } finally {
      setBusy('')
    }
  }

  async function remove() {
    setBusy('removing')
    setSaved(false)
    setError(null)
    try {
      await deleteSapLogin(c.id)
      setSapUser('')
      await onChange()
    } catch (err) {
      setError(err)
    } finally {
      setBusy('')
    }
  }

  const errs = splitError(error, credentialFields)
  return (
    <section aria-label={`SAP login for ${c.name}`} className="rounded-md border border-slate-200 p-3">
      <h3 className="font-medium">{c.name}</h3>
      <p className="mb-2 text-xs text-slate-600">Without your own login: {credentialModeLabel(c.credential_mode)}.</p>
      <p className="mb-2 text-sm">
        {!credential ? 'No login stored.' : credential.invalidated
          ? <span className="text-red-800">Your login {credential.sap_user} was invalidated: {credential.invalidated_reason || 'enter it again'}. Enter the password again.</span>
          : <>Stored: SAP user <strong>{credential.sap_user}</strong>, updated {when(credential.updated_at)}.</>}
      </p>
      <form onSubmit={save} className="grid gap-3 sm:grid-cols-2">
        <TextField label={`SAP user for ${c.name}`} name="sap_user" autoComplete="username" value={sapUser} onChange={setSapUser} required error={errs.field.sap_user} />
        <TextField label={`SAP password for ${c.name}`} name="password" type="password" autoComplete="current-password" value={password} onChange={setPassword} required error={errs.field.password} />
        <ErrorBanner error={errs.banner} className="sm:col-span-2" />
        <div className="flex items-center gap-2 sm:col-span-2">
          <Button type="submit" aria-label={`Save login for ${c.name}`} disabled={!!busy || !sapUser.trim() || !password}>{busy === 'saving' ? 'Saving…' : 'Save login'}</Button>
          {credential && <Button variant="secondary" aria-label={`Remove login for ${c.name}`} disabled={!!busy} onClick={remove}>{busy === 'removing' ? 'Removing…' : 'Remove login'}</Button>}
          <span role="status" className="text-xs text-slate-600">{saved && 'Saved.'}</span>
        </div>
      </form>
    </section>
  )
}
