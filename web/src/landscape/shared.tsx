// Building blocks the landscape tabs share: the connection picker, cursor paging with
// "Load more", and the loading / empty / error states (409 no_index offers a sync).
import { useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react'
import useSWR from 'swr'
import useSWRInfinite from 'swr/infinite'
import { Link, useNavigate } from 'react-router'
import { ApiError, type Page } from '../api/client'
import { keys } from '../api/keys'
import type { Connection } from '../api/types'
import { Button, ErrorBanner, SelectField, Spinner } from '../ui/controls'
import { startSync } from './api'
import { withCursor } from './paths'
import { LandscapeContext } from './context'

export function useConnections(wsId: string) {
  const { data, error, isLoading } = useSWR<Page<Connection>>(keys.connections(wsId))
  return { connections: data?.data ?? [], error, isLoading }
}

/**
 * The connection a tab shows: the one picked (kept in the URL), else the first one (other than
 * `avoid`, for the right side of a diff). Not written to the URL, so two pickers that default
 * in the same render do not race.
 */
export function useChosenConnection(wsId: string, picked: string, avoid?: string): string {
  const { connections } = useConnections(wsId)
  if (picked && connections.some((c) => c.id === picked)) return picked
  if (picked && connections.length === 0) return picked
  return (connections.find((c) => c.id !== avoid) ?? connections[0])?.id ?? ''
}

/** Picks one connection of the workspace. */
export function ConnectionPicker({ wsId, label = 'Connection', value, onChange, name = 'connection' }: {
  wsId: string; label?: string; value: string; onChange: (id: string) => void; name?: string
}) {
  const { connections, error, isLoading } = useConnections(wsId)
  if (error) return <ErrorBanner error={error} />
  if (isLoading) return <Spinner label="Loading connections" />
  if (connections.length === 0) {
    return <p className="text-sm text-slate-700">This workspace has no SAP connection yet. Add one in the workspace settings.</p>
  }
  return (
    <div className="w-64">
      <SelectField label={label} name={name} value={value} onChange={onChange}
        options={connections.map((c) => ({ value: c.id, label: `${c.name} (${c.system_type})` }))} />
    </div>
  )
}

/** Cursor paging over a list route: pages are fetched one after the other with "Load more". */
export function useCursorList<T, P extends Page<T> = Page<T>>(path: string | null) {
  const res = useSWRInfinite<P>((i, prev) => {
    if (!path) return null
    if (i === 0) return path
    if (!prev?.has_more || !prev.next_cursor) return null
    return withCursor(path, prev.next_cursor)
  }, { revalidateFirstPage: false })
  const version = useContext(LandscapeContext)?.version ?? 0
  const seen = useRef(version)
  const { mutate, setSize } = res
  useEffect(() => {
    if (seen.current === version) return
    seen.current = version
    void mutate()
  }, [version, mutate])
  const pages = res.data ?? []
  const items = pages.flatMap((p) => p.data ?? [])
  const last = pages[pages.length - 1]
  // Stable, so an effect that pages on its own can depend on it.
  const loadMore = useCallback(() => setSize((n) => n + 1), [setSize])
  const loadingMore = res.isLoading || (res.size > 0 && res.data !== undefined && typeof res.data[res.size - 1] === 'undefined')
  return {
    pages, items, first: pages[0], error: res.error, isLoading: res.isLoading, loadingMore,
    hasMore: !!last?.has_more && !!last.next_cursor,
    loadMore,
    mutate: res.mutate,
  }
}

export function LoadMore({ hasMore, loading, onClick, label = 'Load more' }: { hasMore: boolean; loading: boolean; onClick: () => void; label?: string }) {
  if (!hasMore) return null
  return (
    <div className="mt-3">
      <Button variant="secondary" onClick={onClick} disabled={loading}>{loading ? 'Loading…' : label}</Button>
    </div>
  )
}

/** Whether an error is the API's 409 no_index (the connection was never synced). */
export function isNoIndex(err: unknown) {
  return err instanceof ApiError && err.code === 'no_index'
}

/**
 * "No index yet": admins start a full sync of the connection right here and go to the sync
 * tab to watch it; members are sent to the sync tab.
 */
export function NoIndex({ wsId, connectionId }: { wsId: string; connectionId?: string }) {
  const ctx = useContext(LandscapeContext)
  const navigate = useNavigate()
  const [busy, setBusy] = useState(false)
  const [err, setErr] = useState<unknown>(null)
  async function start() {
    if (!connectionId) return // the button shows only with a connection
    setBusy(true)
    setErr(null)
    try {
      await startSync(wsId, connectionId, 'full')
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 'sync_running')) {
        setErr(e)
        setBusy(false)
        return
      }
    }
    navigate(`/w/${wsId}/landscape/sync`)
  }
  return (
    <div role="status" className="space-y-2 rounded-md border border-amber-300 bg-amber-50 px-3 py-3 text-sm text-amber-900">
      <p>No index yet: start a sync.</p>
      {ctx?.isAdmin && connectionId ? (
        <Button onClick={start} disabled={busy}>{busy ? 'Starting…' : 'Start a sync'}</Button>
      ) : (
        <Link to={`/w/${wsId}/landscape/sync`}
          className="inline-flex rounded-md bg-brand-600 px-3 py-1.5 text-sm font-medium text-white hover:bg-brand-700">
          Go to syncs
        </Link>
      )}
      <ErrorBanner error={err} />
    </div>
  )
}

/** Loading, error (no_index included) and empty states around a list. */
export function ListState({ wsId, connectionId, isLoading, error, empty, emptyText, loadingLabel = 'Loading', children }: {
  wsId: string; connectionId?: string; isLoading: boolean; error: unknown; empty: boolean; emptyText: string; loadingLabel?: string; children: ReactNode
}) {
  if (isLoading) return <Spinner label={loadingLabel} />
  if (error) return isNoIndex(error) ? <NoIndex wsId={wsId} connectionId={connectionId} /> : <ErrorBanner error={error} />
  if (empty) return <p className="text-sm text-slate-600">{emptyText}</p>
  return <>{children}</>
}

export function formatTime(t: string | null | undefined) {
  if (!t) return 'never'
  const d = new Date(t)
  return isNaN(d.getTime()) ? t : d.toLocaleString()
}

export function formatNumber(n: number | null | undefined) {
  return (n ?? 0).toLocaleString()
}

export function formatDuration(ms: number | null | undefined) {
  if (ms === null || ms === undefined) return '—'
  if (ms < 1000) return `${ms} ms`
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(1)} s`
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`
}

/** A status as a small coloured label (the text carries the meaning, colour only repeats it). */
export function StatusBadge({ status }: { status: string }) {
  const colour: Record<string, string> = {
    ready: 'bg-green-100 text-green-900', succeeded: 'bg-green-100 text-green-900',
    running: 'bg-blue-100 text-blue-900', syncing: 'bg-blue-100 text-blue-900', cancelling: 'bg-blue-100 text-blue-900',
    failed: 'bg-red-100 text-red-900', cancelled: 'bg-slate-200 text-slate-800', skipped: 'bg-slate-200 text-slate-800',
    none: 'bg-slate-200 text-slate-800',
  }
  return <span className={`inline-block rounded px-1.5 py-0.5 text-xs font-medium ${colour[status] ?? 'bg-slate-200 text-slate-800'}`}>{status}</span>
}

export const tableClass = 'w-full border-collapse text-left text-sm'
export const thClass = 'border-b border-slate-300 px-2 py-1.5 font-semibold text-slate-800'
export const tdClass = 'border-b border-slate-100 px-2 py-1.5 align-top'
export const captionClass = 'caption-top pb-2 text-left text-sm font-semibold text-slate-800'
