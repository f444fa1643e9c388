import { describe, expect, it } from 'vitest'
import { applySyncEvent, fromStoredProgress, phasePercent, progressText, waitingText, withStoredWaiting, type LiveRuns } from './progress'
import type { SyncRun } from './types'
import type { WorkspaceFrame } from '../chat/events.gen'

/** A frame as the tests write it: the fields a case is about, malformed ones included. */
const ev = (e: Record<string, unknown>) => e as unknown as WorkspaceFrame

const run = 'r1'
const conn = 'c1'

describe('applySyncEvent', () => {
  it('follows a run from start through progress to its end', () => {
    let s: LiveRuns = {}
    s = applySyncEvent(s, ev({ type: 'sync_started', run_id: run, connection_id: conn, mode: 'full' }))
    expect(s[run]).toMatchObject({ status: 'running', mode: 'full', connectionId: conn, done: 0, total: 0 })
    s = applySyncEvent(s, ev({ type: 'sync_progress', run_id: run, connection_id: conn, phase: 'custom_objects', done: 250, total: 1000 }))
    expect(s[run]).toMatchObject({ phase: 'custom_objects', done: 250, total: 1000, mode: 'full' })
    expect(phasePercent(s[run])).toBe(25)
    s = applySyncEvent(s, ev({ type: 'sync_finished', run_id: run, connection_id: conn, mode: 'full', status: 'succeeded' }))
    expect(s[run].status).toBe('succeeded')
  })

  it('takes progress of a run it did not see start (page opened mid-run)', () => {
    const s = applySyncEvent({}, ev({ type: 'sync_progress', run_id: run, connection_id: conn, mode: 'delta', phase: 'relationships', done: 5, total: 0 }))
    expect(s[run]).toMatchObject({ status: 'running', mode: 'delta', phase: 'relationships', done: 5 })
    expect(phasePercent(s[run])).toBeUndefined()
  })

  it('ignores a progress frame after the end', () => {
    let s = applySyncEvent({}, ev({ type: 'sync_finished', run_id: run, connection_id: conn, status: 'cancelled' }))
    s = applySyncEvent(s, ev({ type: 'sync_progress', run_id: run, connection_id: conn, phase: 'x', done: 9, total: 10 }))
    expect(s[run]).toMatchObject({ status: 'cancelled', done: 0 })
  })

  it('keeps errors, maps unknown statuses to failed and ignores other frames', () => {
    let s = applySyncEvent({}, ev({ type: 'sync_finished', run_id: run, connection_id: conn, status: 'weird', error: 'boom' }))
    expect(s[run]).toMatchObject({ status: 'failed', error: 'boom' })
    const before = s
    s = applySyncEvent(s, ev({ type: 'message', run_id: run }))
    s = applySyncEvent(s, ev({ type: 'sync_progress' }))
    expect(s).toBe(before)
  })

  it('treats bad numbers as zero', () => {
    const s = applySyncEvent({}, ev({ type: 'sync_progress', run_id: run, done: -3, total: Number.NaN }))
    expect(s[run]).toMatchObject({ done: 0, total: 0 })
  })
})

describe('phasePercent and progressText', () => {
  it('rounds and caps at 100', () => {
    expect(phasePercent({ done: 1, total: 3 })).toBe(33)
    expect(phasePercent({ done: 1500, total: 1000 })).toBe(100)
    expect(phasePercent({ done: 0, total: 10 })).toBe(0)
  })
  it('says where a run stands', () => {
    const r = { runId: run, connectionId: conn, mode: 'full', phase: 'custom_code', done: 500, total: 2000, status: 'running' as const }
    expect(progressText(r)).toBe('custom code: 500 of 2,000 items (25%)')
    expect(progressText({ ...r, total: 0, phase: '' })).toBe('starting: 500 items')
  })
})

describe('fromStoredProgress', () => {
  it('reads GET /index progress, or nothing without a run', () => {
    expect(fromStoredProgress(conn, { run_id: run, mode: 'full', phase: 'docs', done: 2, total: 4 })).toMatchObject({ runId: run, connectionId: conn, done: 2, total: 4 })
    expect(fromStoredProgress(conn, null)).toBeNull()
    expect(fromStoredProgress(conn, {})).toBeNull()
  })
})

describe('waiting for SAP', () => {
  const since = '2026-11-27T10:00:00Z'

  it('shows the wait, keeps it through progress frames and clears it on resume', () => {
    let s = applySyncEvent({}, ev({ type: 'sync_started', run_id: run, connection_id: conn, mode: 'full' }))
    s = applySyncEvent(s, ev({ type: 'sync_waiting', run_id: run, connection_id: conn, phase: 'probe', reason: 'SYSTEM_UNAVAILABLE: down', attempt: 3, since }))
    expect(s[run].waiting).toEqual({ reason: 'SYSTEM_UNAVAILABLE: down', phase: 'probe', attempt: 3, since })
    expect(waitingText(s[run].waiting!, (t) => t)).toBe(`Waiting for SAP: SYSTEM_UNAVAILABLE: down, attempt 3, since ${since}`)
    // Each retried attempt reports its position again before it fails: the wait stays.
    s = applySyncEvent(s, ev({ type: 'sync_progress', run_id: run, connection_id: conn, phase: 'probe', done: 0, total: 0 }))
    expect(s[run].waiting?.attempt).toBe(3)
    s = applySyncEvent(s, ev({ type: 'sync_resumed', run_id: run, connection_id: conn, phase: 'probe' }))
    expect(s[run].waiting).toBeNull()
  })

  it('ends the wait with the run and ignores a late wait', () => {
    let s = applySyncEvent({}, ev({ type: 'sync_waiting', run_id: run, connection_id: conn, phase: 'probe', reason: 'down', attempt: 2, since }))
    s = applySyncEvent(s, ev({ type: 'sync_finished', run_id: run, connection_id: conn, status: 'cancelled' }))
    expect(s[run]).toMatchObject({ status: 'cancelled', waiting: null })
    const after = applySyncEvent(s, ev({ type: 'sync_waiting', run_id: run, connection_id: conn, phase: 'probe', reason: 'down', attempt: 3, since }))
    expect(after).toBe(s)
  })

  it('takes the stored wait when the socket has not spoken of one', () => {
    const live = applySyncEvent({}, ev({ type: 'sync_progress', run_id: run, connection_id: conn, phase: 'probe', done: 0, total: 0 }))[run]
    const stored = { id: run, waiting: { reason: 'TIMEOUT: slow', phase: 'probe', attempt: 7, since } } as unknown as SyncRun
    expect(withStoredWaiting(live, stored).waiting?.attempt).toBe(7)
    expect(withStoredWaiting({ ...live, waiting: null }, stored).waiting).toBeNull()
    expect(withStoredWaiting(live, { ...stored, id: 'other' }).waiting).toBeUndefined()
  })
})
