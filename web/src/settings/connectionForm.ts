// The connection wizard's form and the request bodies it sends (api/connections.go,
// api/sap.go): pure functions, unit-tested.
import type { BodyOf } from '../api/client'
import type { Connection } from '../api/types'

export interface ConnectionForm {
  name: string
  system_type: 'ECC' | 'S4HANA'
  connector_url: string
  environment: 'development' | 'test' | 'production'
  simulated: boolean
  credential_mode: '' | Connection['credential_mode'] // '': the server's default
  sync_full_cron: string
  sync_delta_cron: string
  sync_timezone: string
}

/** What the wizard's test step adds: used for the preview only, never stored by it. */
export interface TestLogin {
  connector_key: string
  sap_user: string
  sap_password: string
}

/** The schema's defaults (migration 012), shown as placeholders. */
export const SYNC_DEFAULTS = { sync_full_cron: '0 2 * * 0', sync_delta_cron: '0 3 * * *', sync_timezone: 'UTC' }

export const emptyForm: ConnectionForm = {
  name: '', system_type: 'S4HANA', connector_url: '', environment: 'development', simulated: false,
  credential_mode: '', sync_full_cron: '', sync_delta_cron: '', sync_timezone: '',
}

export function formOf(c: Connection): ConnectionForm {
  return {
    name: c.name, system_type: c.system_type, connector_url: c.connector_url,
    environment: (c.environment || 'development') as ConnectionForm['environment'], simulated: c.simulated,
    credential_mode: c.credential_mode, sync_full_cron: c.sync_full_cron, sync_delta_cron: c.sync_delta_cron,
    sync_timezone: c.sync_timezone,
  }
}

/** POST body: empty optional fields are left out so the server's defaults apply. */
export function createBody(f: ConnectionForm): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: f.name.trim(), system_type: f.system_type, connector_url: f.connector_url.trim(), environment: f.environment,
  }
  // Unchecked is left out: a development server then simulates a connection without a URL,
  // and a production server refuses it (connector_url_required) instead of simulating silently.
  if (f.simulated) body.simulated = true
  if (f.credential_mode) body.credential_mode = f.credential_mode
  for (const k of ['sync_full_cron', 'sync_delta_cron', 'sync_timezone'] as const) {
    if (f[k].trim()) body[k] = f[k].trim()
  }
  return body
}

/** PATCH body: only what changed, so an untouched field never trips a rule it already passed. */
export function patchBody(f: ConnectionForm, before: ConnectionForm): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const trimmed = (v: unknown) => (typeof v === 'string' ? v.trim() : v)
  for (const k of Object.keys(f) as (keyof ConnectionForm)[]) {
    if (trimmed(f[k]) !== trimmed(before[k])) body[k] = trimmed(f[k])
  }
  // An unchanged "simulated" is not sent: a new URL clears it on the server by itself.
  return body
}

/** POST test-connection-preview body: the unsaved settings plus the test login. */
export function previewBody(f: ConnectionForm, login: TestLogin): BodyOf<'postWorkspacesByIdTestConnectionPreview'> {
  return {
    system_type: f.system_type, connector_url: f.connector_url.trim(), environment: f.environment, simulated: f.simulated,
    connector_key: login.connector_key, sap_user: login.sap_user.trim(), sap_password: login.sap_password,
  }
}

export const CHECK_LABELS: Record<string, string> = {
  connect_and_logon: 'Connect and log on',
  system_type: 'System type matches',
  read_table: 'Read a table (T000)',
  function_metadata: 'Read function metadata',
  repository_search: 'Search the repository',
}

export const CREDENTIAL_MODES: { value: Connection['credential_mode']; label: string; help: string }[] = [
  { value: 'user_login_required', label: "Each user's own SAP login", help: 'Members without their own SAP login cannot call SAP on this connection.' },
  { value: 'technical_user_reads', label: 'Technical user reads; writes need own login', help: 'Members without their own login read as the technical user; their writes are refused.' },
  { value: 'technical_user_all', label: 'Technical user reads and writes', help: 'Members without their own login read and write as the technical user (refused on production servers).' },
]

export function credentialModeLabel(m: string): string {
  return CREDENTIAL_MODES.find((c) => c.value === m)?.label ?? m
}
