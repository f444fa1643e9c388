import { describe, expect, it } from 'vitest'
import { ApiError } from '../api/client'
import { connectionFields, credentialFields, explainMemberError, fieldOf, memberFields, nameFields, scheduleField, splitError } from './fieldErrors'

const e = (code: string, msg: string, status = 400) => new ApiError(status, code, msg)

describe('fieldOf', () => {
  it('maps URL codes to the connector URL', () => {
    for (const code of ['blocked_url', 'connector_url_required', 'simulated_with_url', 'invalid_url'])
      expect(fieldOf(e(code, 'x'), connectionFields)).toBe('connector_url')
  })
  it('maps credential mode codes', () => {
    expect(fieldOf(e('credential_mode_not_allowed', 'a production server …'), connectionFields)).toBe('credential_mode')
    expect(fieldOf(e('invalid_credential_mode', 'credential_mode must be …'), connectionFields)).toBe('credential_mode')
  })
  it('uses the field named at the start of the message for generic codes', () => {
    expect(fieldOf(e('missing_field', 'name is required'), connectionFields)).toBe('name')
    expect(fieldOf(e('too_long', 'name is longer than 100 characters'), nameFields)).toBe('name')
    expect(fieldOf(e('missing_field', 'name and system_type are required'), connectionFields)).toBe('name')
    expect(fieldOf(e('too_long', 'sap_user is longer than 40 characters'), credentialFields)).toBe('sap_user')
    expect(fieldOf(e('invalid_field', 'user_id contains control characters'), memberFields)).toBe('user_id')
  })
  it('leaves unrelated errors to the banner', () => {
    expect(fieldOf(e('forbidden', 'this needs the workspace admin role', 403), connectionFields)).toBeUndefined()
    expect(fieldOf(e('invalid_field', 'sap_user (40), sap_password (200) … is too long'), connectionFields)).toBeUndefined()
    expect(fieldOf(new Error('boom'), connectionFields)).toBeUndefined()
    expect(fieldOf(e('conflict', 'member conflicts …', 409), memberFields)).toBeUndefined()
  })
  it('puts not_org_member next to the user with a hint', () => {
    const s = splitError(e('not_org_member', 'the user must be a member of the workspace\'s organization first', 409), memberFields)
    expect(Object.keys(s.field)).toEqual(['user_id'])
    expect(s.field.user_id).toMatch(/Organization settings/)
    expect(s.banner).toBeNull()
  })
})

describe('scheduleField', () => {
  const values = { sync_full_cron: '0 2 * * 0', sync_delta_cron: '* * *' }
  it('finds the cron field whose value the message quotes', () => {
    expect(scheduleField('bad schedule: cron "* * *" must have five fields (minute hour …)', values)).toBe('sync_delta_cron')
    expect(fieldOf(e('invalid_schedule', 'bad schedule: cron "0 2 * * 0" has an invalid field "x"'), connectionFields, values)).toBe('sync_full_cron')
  })
  it('maps time zone errors', () => {
    expect(fieldOf(e('invalid_schedule', 'bad schedule: unknown time zone "Mars/Base"'), connectionFields, values)).toBe('sync_timezone')
  })
  it('leaves an unmatched schedule error to the banner', () => {
    expect(fieldOf(e('invalid_schedule', 'bad schedule: temporal refused'), connectionFields, values)).toBeUndefined()
  })
})

describe('explainMemberError', () => {
  it('adds the one-owner rule to a conflict and keeps other errors', () => {
    const c = explainMemberError(e('conflict', 'member conflicts with an existing one or would leave the organization without an owner', 409)) as ApiError
    expect(c.code).toBe('conflict')
    expect(c.message).toMatch(/make another member owner first/)
    const f = e('forbidden', 'only owners grant or change the owner role', 403)
    expect(explainMemberError(f)).toBe(f)
  })
})
