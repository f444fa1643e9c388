// Live sync progress from the workspace topic (docs/sync.md "Events"): sync_started opens a run,
// sync_progress moves it (phase, done of total; total 0 = unknown), sync_waiting says it waits
// for SAP (the connector fails and the phase is retried), sync_resumed ends the wait,
// sync_finished closes it. Kept pure so it can be tested without a socket.
import type { WorkspaceFrame } from '../chat/events.gen'
import type { ProgressPayload, SyncRun, SyncWaiting } from './types'

export interface LiveRun {
  runId: string
  connectionId: string
  mode: string
  phase: string
  done: number
  total: number // 0: the connector did not announce a total
  status: 'running' | 'succeeded' | 'failed' | 'cancelled' | 'skipped'
  error?: string
  /** What the run waits for; null: known not to wait (resumed); undefined: not heard of. */
  waiting?: SyncWaiting | null
}

/** Live runs by run ID. */
export type LiveRuns = Record<string, LiveRun>

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)

/** Applies one workspace-topic frame; frames of other types leave the state as it is. */
export function applySyncEvent(state: LiveRuns, e: WorkspaceFrame): LiveRuns {
  if (e.type === 'init' || !e.run_id || !e.type.startsWith('sync_')) return state
  const prev = state[e.run_id]
  const base: LiveRun = prev ?? {
    runId: e.run_id, connectionId: e.connection_id ?? '', mode: e.mode ?? '', phase: '', done: 0, total: 0, status: 'running',
  }
  switch (e.type) {
    case 'sync_started':
      return { ...state, [e.run_id]: { ...base, mode: e.mode ?? base.mode, status: 'running' } }
    case 'sync_progress':
      if (prev && prev.status !== 'running') return state // a late frame after the end
      return {
        ...state,
        [e.run_id]: { ...base, mode: e.mode ?? base.mode, phase: e.phase ?? base.phase, done: num(e.done), total: num(e.total) },
      }
    case 'sync_waiting':
      if ((prev && prev.status !== 'running') || !e.reason) return state
      return {
        ...state,
        [e.run_id]: {
          ...base, phase: e.phase ?? base.phase,
          waiting: { reason: e.reason, phase: e.phase ?? base.phase, attempt: Math.max(1, num(e.attempt)), since: e.since ?? '' },
        },
      }
    case 'sync_resumed':
      if (prev && prev.status !== 'running') return state
      return { ...state, [e.run_id]: { ...base, waiting: null } }
    case 'sync_finished': {
      const status = (['succeeded', 'failed', 'cancelled', 'skipped'] as const).find((s) => s === e.status) ?? 'failed'
      return { ...state, [e.run_id]: { ...base, status, error: e.error || undefined, waiting: null } }
    }
    default:
      return state
  }
}

/** The stored progress of a run (GET /index's index.progress) as a live run. */
export function fromStoredProgress(connectionId: string, p: ProgressPayload | null | undefined): LiveRun | null {
  if (!p?.run_id) return null
  return { runId: p.run_id, connectionId, mode: p.mode ?? '', phase: p.phase ?? '', done: num(p.done), total: num(p.total), status: 'running' }
}

/**
 * A running run with the wait its stored row shows (GET /index's last_run.waiting) when the
 * socket has not spoken of one: a page opened during a wait shows it at once.
 */
export function withStoredWaiting(run: LiveRun, last: SyncRun | null | undefined): LiveRun {
  if (run.waiting !== undefined || !last || last.id !== run.runId || !last.waiting) return run
  return { ...run, waiting: last.waiting }
}

/** "Waiting for SAP: <reason>, attempt N, since <time>". */
export function waitingText(w: SyncWaiting, formatTime: (t: string) => string = (t) => new Date(t).toLocaleString()): string {
  return `Waiting for SAP: ${w.reason}, attempt ${w.attempt}, since ${w.since ? formatTime(w.since) : 'now'}`
}

/**
 * The percentage of the current phase that is done, 0–100, or undefined when the total is not
 * known (the progress bar is then indeterminate). done may pass total when the connector's
 * announcement was low: it is capped at 100.
 */
export function phasePercent(r: Pick<LiveRun, 'done' | 'total'>): number | undefined {
  if (!r.total) return undefined
  return Math.min(100, Math.round((r.done / r.total) * 100))
}

/** A phase name as people read it: custom_objects → "custom objects". */
export function phaseLabel(phase: string): string {
  return phase ? phase.replace(/_/g, ' ') : 'starting'
}

/** One line saying where a run stands, for the progress bar's aria-valuetext. */
export function progressText(r: LiveRun): string {
  const pct = phasePercent(r)
  const items = r.total ? `${r.done.toLocaleString()} of ${r.total.toLocaleString()} items` : `${r.done.toLocaleString()} items`
  return `${phaseLabel(r.phase)}: ${items}${pct === undefined ? '' : ` (${pct}%)`}`
}
