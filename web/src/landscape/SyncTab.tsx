// Syncs: each connection's index with a start (full / delta) and, while a run is going, its
// live progress from the workspace topic and a cancel button; the runs list; the schedules.
import { useState } from 'react'
import useSWR from 'swr'
import { ApiError } from '../api/client'
import { Button, Card, ErrorBanner } from '../ui/controls'
import { cancelSyncRun, scheduleAction, startSync } from './api'
import { useLandscape } from './context'
import { landscapePaths, query } from './paths'
import { fromStoredProgress, phaseLabel, waitingText, withStoredWaiting, type LiveRun } from './progress'
import { captionClass, formatDuration, formatTime, ListState, LoadMore, StatusBadge, tableClass, tdClass, thClass, useCursorList } from './shared'
import { SyncProgress } from './SyncProgress'
import type { IndexStatus, Schedule, SyncRun } from './types'

export function SyncTab() {
  return (
    <div className="space-y-6">
      <IndexSection />
      <RunsSection />
      <SchedulesSection />
    </div>
  )
}

/** The live run of a connection: from the socket when it spoke, else the stored progress. */
function useRunningRun(ix: IndexStatus): LiveRun | null {
  const { runs } = useLandscape()
  const live = Object.values(runs).filter((r) => r.connectionId === ix.connection_id)
  const running = live.find((r) => r.status === 'running')
  if (running) return withStoredWaiting(running, ix.last_run)
  // A run that ended over the socket is over even while GET /index still says syncing.
  const stored = fromStoredProgress(ix.connection_id, ix.index?.progress)
  if (ix.status === 'syncing' && ix.last_run?.status === 'running') {
    const runId = ix.last_run.id
    if (live.some((r) => r.runId === runId && r.status !== 'running')) return null
    const run: LiveRun = stored && stored.runId === runId ? stored : { runId, connectionId: ix.connection_id, mode: ix.last_run.mode, phase: '', done: 0, total: 0, status: 'running' }
    return withStoredWaiting(run, ix.last_run)
  }
  return null
}

function IndexSection() {
  const { wsId } = useLandscape()
  // Polls while a sync runs, in case the live stream is down; the socket usually is faster.
  const { data, error, isLoading } = useSWR<{ data: IndexStatus[] }>(landscapePaths.index(wsId), {
    refreshInterval: (d?: { data: IndexStatus[] }) => (d?.data.some((s) => s.status === 'syncing') ? 5000 : 0),
  })
  const list = data?.data ?? []
  return (
    <section aria-labelledby="index-h" className="space-y-3">
      <h2 id="index-h" className="text-base font-semibold">Index by connection</h2>
      <ListState wsId={wsId} isLoading={isLoading} error={error} empty={list.length === 0} loadingLabel="Loading the index status"
        emptyText="This workspace has no SAP connection yet. Add one in the workspace settings.">
        <div className="grid gap-4 lg:grid-cols-2">
          {list.map((ix) => <IndexCard key={ix.connection_id} ix={ix} />)}
        </div>
      </ListState>
    </section>
  )
}

function IndexCard({ ix }: { ix: IndexStatus }) {
  const { wsId, isAdmin } = useLandscape()
  const { mutate } = useSWR(landscapePaths.index(wsId))
  const running = useRunningRun(ix)
  const [busy, setBusy] = useState<string | null>(null)
  const [err, setErr] = useState<unknown>(null)
  const [conflict, setConflict] = useState(false)

  async function start(mode: 'full' | 'delta') {
    setBusy(mode)
    setErr(null)
    setConflict(false)
    try {
      await startSync(wsId, ix.connection_id, mode)
      await mutate()
    } catch (e) {
      if (e instanceof ApiError && e.code === 'sync_running') {
        // The running run shows up with its progress once the status is read again.
        setConflict(true)
        await mutate()
      } else setErr(e)
    } finally {
      setBusy(null)
    }
  }

  async function cancel(runId: string) {
    setBusy('cancel')
    setErr(null)
    try {
      await cancelSyncRun(wsId, runId)
      await mutate()
    } catch (e) {
      setErr(e)
    } finally {
      setBusy(null)
    }
  }

  const last = ix.last_run
  return (
    <Card title={`${ix.name} (${ix.system_type})`}>
      <dl className="mb-3 grid grid-cols-2 gap-x-4 gap-y-1 text-sm">
        <div><dt className="text-xs text-slate-600">Index</dt><dd><StatusBadge status={ix.status} />{ix.index && ix.index.generation > 0 && <span className="ml-1 text-xs text-slate-600">generation {ix.index.generation}</span>}</dd></div>
        <div><dt className="text-xs text-slate-600">Last run</dt><dd>{last ? <>{last.mode} · <StatusBadge status={last.status} /> · {formatTime(last.started_at)}</> : 'none'}</dd></div>
        <div><dt className="text-xs text-slate-600">Last full sync</dt><dd>{formatTime(ix.index?.last_full_sync_at)}</dd></div>
        <div><dt className="text-xs text-slate-600">Last delta sync</dt><dd>{formatTime(ix.index?.last_delta_sync_at)}</dd></div>
      </dl>
      {last?.status === 'failed' && last.error && !running && <p className="mb-2 text-sm text-red-800">Last run failed: {last.error}</p>}
      {running && (
        <div className="mb-3 space-y-2 rounded-md border border-blue-200 bg-blue-50 p-3">
          <p className="text-sm">A {running.mode || 'sync'} run is in progress ({phaseLabel(running.phase)}).</p>
          <SyncProgress run={running} label={`Sync progress of ${ix.name}`} />
          {isAdmin && (
            <Button variant="secondary" onClick={() => cancel(running.runId)} disabled={busy !== null} aria-label={`Cancel sync of ${ix.name}`}>
              {busy === 'cancel' ? 'Cancelling…' : 'Cancel sync'}
            </Button>
          )}
        </div>
      )}
      {conflict && (
        <p role="status" className="mb-2 text-sm text-amber-900">A sync of this connection is already running: wait for it or cancel it.</p>
      )}
      {isAdmin ? (
        <div className="flex flex-wrap gap-2">
          <Button onClick={() => start('full')} disabled={busy !== null} aria-label={`Start full sync of ${ix.name}`}>
            {busy === 'full' ? 'Starting…' : 'Start full sync'}
          </Button>
          <Button variant="secondary" onClick={() => start('delta')} disabled={busy !== null} aria-label={`Start delta sync of ${ix.name}`}>
            {busy === 'delta' ? 'Starting…' : 'Start delta sync'}
          </Button>
        </div>
      ) : (
        <p className="text-xs text-slate-600">Workspace admins start and cancel syncs.</p>
      )}
      <ErrorBanner error={err} className="mt-2" />
    </Card>
  )
}

function RunsSection() {
  const { wsId, runs: live, isAdmin } = useLandscape()
  const list = useCursorList<SyncRun>(landscapePaths.syncRuns(wsId) + query({ limit: 20 }))
  const { data: conns } = useSWR<{ data: IndexStatus[] }>(landscapePaths.index(wsId))
  const nameOf = (id: string) => conns?.data.find((c) => c.connection_id === id)?.name ?? id.slice(0, 8)
  const [err, setErr] = useState<unknown>(null)

  async function cancel(runId: string) {
    setErr(null)
    try {
      await cancelSyncRun(wsId, runId)
      await list.mutate()
    } catch (e) {
      setErr(e)
    }
  }

  return (
    <section aria-labelledby="runs-h" className="space-y-3">
      <h2 id="runs-h" className="text-base font-semibold">Sync runs</h2>
      <ErrorBanner error={err} />
      <ListState wsId={wsId} isLoading={list.isLoading} error={list.error} empty={list.items.length === 0} loadingLabel="Loading sync runs"
        emptyText="No sync has run yet.">
        <div className="overflow-x-auto">
          <table className={tableClass}>
            <caption className="sr-only">Sync runs, newest first</caption>
            <thead>
              <tr>
                {['Started', 'Connection', 'Mode', 'Trigger', 'Status', 'Duration', 'Details'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}
              </tr>
            </thead>
            <tbody>
              {list.items.map((r) => {
                const lr = live[r.id]
                const status = lr && lr.status !== 'running' ? lr.status : r.status
                const waiting = status === 'running' ? (lr ? withStoredWaiting(lr, r).waiting : r.waiting) : null
                return (
                  <tr key={r.id}>
                    <td className={tdClass}>{formatTime(r.started_at)}</td>
                    <td className={tdClass}>{nameOf(r.connection_id)}</td>
                    <td className={tdClass}>{r.mode}</td>
                    <td className={tdClass}>{r.trigger}{r.requested_by && <span className="block text-xs text-slate-600">{r.requested_by}</span>}</td>
                    <td className={tdClass}><StatusBadge status={status} /></td>
                    <td className={tdClass}>{formatDuration(r.duration_ms ?? (r.finished_at ? Date.parse(r.finished_at) - Date.parse(r.started_at) : null))}</td>
                    <td className={tdClass}>
                      {status === 'running' && lr && <span className="text-xs">{phaseLabel(lr.phase)}: {lr.done.toLocaleString()}{lr.total ? ` / ${lr.total.toLocaleString()}` : ''}</span>}
                      {waiting && <span className="block text-xs text-amber-900">{waitingText(waiting, formatTime)}</span>}
                      {(lr?.error || r.error) && <span className="text-xs text-red-800">{lr?.error || r.error}</span>}
                      {status === 'running' && isAdmin && (
                        <Button variant="ghost" className="ml-2" onClick={() => cancel(r.id)} aria-label={`Cancel run started ${formatTime(r.started_at)}`}>Cancel</Button>
                      )}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
        <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} label="Load more runs" />
      </ListState>
    </section>
  )
}

function SchedulesSection() {
  const { wsId, isAdmin } = useLandscape()
  const { data, error, isLoading, mutate } = useSWR<{ data: Schedule[] }>(landscapePaths.schedules(wsId))
  const { data: conns } = useSWR<{ data: IndexStatus[] }>(landscapePaths.index(wsId))
  const nameOf = (id: string) => conns?.data.find((c) => c.connection_id === id)?.name ?? id.slice(0, 8)
  const [err, setErr] = useState<unknown>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const list = data?.data ?? []

  async function act(s: Schedule, action: 'pause' | 'unpause' | 'trigger') {
    setBusy(s.id + action)
    setErr(null)
    setDone(null)
    try {
      await scheduleAction(wsId, s.connection_id, s.mode, action)
      await mutate()
      setDone(`${nameOf(s.connection_id)} ${s.mode} schedule: ${action === 'trigger' ? 'triggered' : action === 'pause' ? 'paused' : 'resumed'}.`)
    } catch (e) {
      setErr(e)
    } finally {
      setBusy(null)
    }
  }

  return (
    <section aria-labelledby="sched-h" className="space-y-3">
      <h2 id="sched-h" className="text-base font-semibold">Schedules</h2>
      <ErrorBanner error={err} />
      {done && <p role="status" className="text-sm text-green-800">{done}</p>}
      <ListState wsId={wsId} isLoading={isLoading} error={error} empty={list.length === 0} loadingLabel="Loading schedules" emptyText="No schedules.">
        <div className="overflow-x-auto">
          <table className={tableClass}>
            <caption className={captionClass + ' sr-only'}>Sync schedules</caption>
            <thead>
              <tr>{['Connection', 'Mode', 'Cron', 'Time zone', 'State', 'Next runs', 'Actions'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
            </thead>
            <tbody>
              {list.map((s) => {
                const who = `${nameOf(s.connection_id)} ${s.mode} schedule`
                return (
                  <tr key={s.id}>
                    <td className={tdClass}>{nameOf(s.connection_id)}</td>
                    <td className={tdClass}>{s.mode}</td>
                    <td className={`${tdClass} font-mono`}>{s.cron}</td>
                    <td className={tdClass}>{s.time_zone || 'UTC'}</td>
                    <td className={tdClass}>
                      {s.missing ? 'missing' : s.paused ? 'paused' : 'active'}
                      {s.note && <span className="block text-xs text-slate-600">{s.note}</span>}
                    </td>
                    <td className={tdClass}>
                      <ul className="text-xs">{(s.next_runs ?? []).slice(0, 3).map((t) => <li key={t}>{formatTime(t)}</li>)}</ul>
                    </td>
                    <td className={tdClass}>
                      {isAdmin ? (
                        <div className="flex flex-wrap gap-1">
                          {s.paused
                            ? <Button variant="secondary" disabled={busy !== null} onClick={() => act(s, 'unpause')} aria-label={`Resume ${who}`}>Resume</Button>
                            : <Button variant="secondary" disabled={busy !== null} onClick={() => act(s, 'pause')} aria-label={`Pause ${who}`}>Pause</Button>}
                          <Button variant="secondary" disabled={busy !== null} onClick={() => act(s, 'trigger')} aria-label={`Run now: ${who}`}>Run now</Button>
                        </div>
                      ) : <span className="text-xs text-slate-600">admins only</span>}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      </ListState>
    </section>
  )
}
