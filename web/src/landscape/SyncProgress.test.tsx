// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest'
import { cleanup, render, screen } from '@testing-library/react'
import { SyncProgress } from './SyncProgress'
import type { LiveRun } from './progress'

afterEach(cleanup)

const run: LiveRun = { runId: 'r1', connectionId: 'c1', mode: 'full', phase: 'probe', done: 0, total: 0, status: 'running' }

describe('SyncProgress', () => {
  it('says what a waiting run waits for', () => {
    render(<SyncProgress run={{ ...run, waiting: { reason: 'SYSTEM_UNAVAILABLE: RFC destination down', phase: 'probe', attempt: 4, since: '2026-11-27T10:00:00Z' } }} label="Sync progress of ECC" />)
    const line = screen.getByRole('status')
    expect(line.textContent).toContain('Waiting for SAP: SYSTEM_UNAVAILABLE: RFC destination down, attempt 4, since ')
    expect(line.textContent).toContain(new Date('2026-11-27T10:00:00Z').toLocaleString())
    expect(screen.getByRole('progressbar', { name: 'Sync progress of ECC' })).toBeTruthy()
  })

  it('shows no waiting line for a run that moves', () => {
    render(<SyncProgress run={{ ...run, waiting: null, phase: 'custom_objects', done: 10, total: 100 }} label="Sync progress of ECC" />)
    expect(screen.queryByRole('status')).toBeNull()
  })
})
