import { describe, expect, it } from 'vitest'
import type { Connection } from '../api/types'
import { createBody, emptyForm, formOf, patchBody, previewBody } from './connectionForm'

const conn: Connection = {
  id: 'c1', workspace_id: 'w1', name: 'ERP', system_type: 'ECC', connector_url: '', environment: 'development',
  simulated: true, credential_mode: 'technical_user_all', sync_full_cron: '0 2 * * 0', sync_delta_cron: '0 3 * * *',
  sync_timezone: 'UTC', created_at: '', updated_at: '',
}

describe('createBody', () => {
  it('leaves out empty optional fields and an unchecked simulated', () => {
    expect(createBody({ ...emptyForm, name: ' ERP ' })).toEqual({
      name: 'ERP', system_type: 'S4HANA', connector_url: '', environment: 'development',
    })
  })
  it('sends what was set', () => {
    const b = createBody({ ...emptyForm, name: 'x', simulated: true, credential_mode: 'technical_user_reads', sync_delta_cron: ' */15 * * * * ', sync_timezone: 'Europe/Berlin' })
    expect(b).toMatchObject({ simulated: true, credential_mode: 'technical_user_reads', sync_delta_cron: '*/15 * * * *', sync_timezone: 'Europe/Berlin' })
    expect(b).not.toHaveProperty('sync_full_cron')
  })
})

describe('patchBody', () => {
  it('sends only changed fields', () => {
    const before = formOf(conn)
    expect(patchBody(before, before)).toEqual({})
    expect(patchBody({ ...before, name: 'ERP 2', sync_timezone: 'Europe/Berlin' }, before)).toEqual({ name: 'ERP 2', sync_timezone: 'Europe/Berlin' })
  })
  it('lets a new URL clear simulated on the server', () => {
    const before = formOf(conn)
    expect(patchBody({ ...before, connector_url: 'https://sap.example.com' }, before)).toEqual({ connector_url: 'https://sap.example.com' })
    expect(patchBody({ ...before, connector_url: 'https://sap.example.com', simulated: false }, before)).toEqual({ connector_url: 'https://sap.example.com', simulated: false })
  })
})

describe('previewBody', () => {
  it('carries the unsaved settings and the test login', () => {
    expect(previewBody({ ...emptyForm, connector_url: ' https://c.example ' }, { connector_key: 'k', sap_user: ' U ', sap_password: 'p' })).toEqual({
      system_type: 'S4HANA', connector_url: 'https://c.example', environment: 'development', simulated: false,
      connector_key: 'k', sap_user: 'U', sap_password: 'p',
    })
  })
})
