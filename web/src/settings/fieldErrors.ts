// Which form field an API error concerns, so a form shows the API's message next to that field
// (docs/api.md error codes; the handlers in api/*.go). Pure, so it is unit-tested.
import { ApiError } from '../api/client'

/** Field name → the error codes that always concern it. */
export type FieldCodes = Record<string, readonly string[]>

// Codes whose message starts with the field's JSON name ("name is required", "sap_user is longer …").
const NAMED_BY_MESSAGE = ['missing_field', 'too_long', 'invalid_field']

/** The fields of a connection form and the codes that concern each (api/connections.go, api/sap.go). */
export const connectionFields: FieldCodes = {
  name: [],
  system_type: ['invalid_system_type'],
  connector_url: ['invalid_url', 'blocked_url', 'connector_url_required', 'simulated_with_url'],
  environment: ['invalid_environment'],
  credential_mode: ['credential_mode_not_allowed', 'invalid_credential_mode'],
  sync_full_cron: [],
  sync_delta_cron: [],
  sync_timezone: [],
}

/** A member form: 409 not_org_member concerns the user field (api/access.go). */
export const memberFields: FieldCodes = { user_id: ['not_org_member'], role: ['invalid_role'] }

export const secretFields: FieldCodes = { name: ['invalid_name'], value: ['invalid_value'] }

export const credentialFields: FieldCodes = { sap_user: [], password: ['invalid_password'] }

export const nameFields: FieldCodes = { name: [] }

/**
 * invalid_schedule names neither field, only the value ("… cron \"x\" has an invalid field …",
 * "… unknown time zone \"y\""): find the field whose current value the message quotes.
 */
export function scheduleField(message: string, values: Record<string, string> = {}): string | undefined {
  if (/time zone/i.test(message)) return 'sync_timezone'
  const quoted = /cron "((?:[^"\\]|\\.)*)"/.exec(message)?.[1]
  if (quoted === undefined) return undefined
  const v = quoted.trim()
  if ((values.sync_full_cron ?? '').trim() === v) return 'sync_full_cron'
  if ((values.sync_delta_cron ?? '').trim() === v) return 'sync_delta_cron'
  return undefined
}

/** The field an error concerns, or undefined when it belongs in the form's error banner. */
export function fieldOf(err: unknown, fields: FieldCodes, values?: Record<string, string>): string | undefined {
  if (!(err instanceof ApiError)) return undefined
  if (err.code === 'invalid_schedule') {
    const f = scheduleField(err.message, values)
    return f && f in fields ? f : undefined
  }
  for (const [field, codes] of Object.entries(fields)) {
    if (codes.includes(err.code)) return field
  }
  if (NAMED_BY_MESSAGE.includes(err.code)) {
    const first = /^([a-z_]+)\b/.exec(err.message)?.[1]
    if (first && first in fields) return first
  }
  return undefined
}

/** Splits an error into the message shown next to its field and the rest for the banner. */
export function splitError(err: unknown, fields: FieldCodes, values?: Record<string, string>): { field: Record<string, string>; banner: unknown } {
  const f = fieldOf(err, fields, values)
  if (f && err instanceof ApiError) return { field: { [f]: hintFor(err) }, banner: null }
  return { field: {}, banner: err ?? null }
}

/** The API's message, with a next step where the API's own words do not give one. */
export function hintFor(err: ApiError): string {
  if (err.code === 'not_org_member') return `${err.message}. Add them as a member in Organization settings, then add them here.`
  return err.message
}

/** A member change the API refused, with the rule that refused it where the message is generic. */
export function explainMemberError(err: unknown): unknown {
  if (err instanceof ApiError && err.code === 'conflict') {
    return new ApiError(err.status, err.code, `${err.message}. An organization always keeps one owner: make another member owner first.`, err.retryAfter)
  }
  return err
}
