// The workspace topic (GET /api/workspaces/:id/ws, docs/events.md): sync_started,
// sync_progress, sync_waiting, sync_resumed and sync_finished of every connection, folded into
// live runs. The stream
// resumes with its cursor after a drop, so no progress frame is applied twice.
import { useEffect, useRef, useState } from 'react'
import { EventStream, type StreamFrame, type StreamState } from '../api/stream'
import { applySyncEvent, type LiveRuns, type SyncEvent } from './progress'

export interface WorkspaceEventHandlers {
  /** A run ended (any status): lists and figures should be read again. */
  onSyncFinished?: (e: SyncEvent) => void
  /** A run started, or the stream began afresh (init): what the page shows may be stale. */
  onResync?: () => void
}

export function useWorkspaceEvents(wsId: string | undefined, handlers: WorkspaceEventHandlers = {}) {
  const [runs, setRuns] = useState<LiveRuns>({})
  const [state, setState] = useState<StreamState>('connecting')
  const [detail, setDetail] = useState<string | undefined>()
  const handlersRef = useRef(handlers)
  handlersRef.current = handlers

  useEffect(() => {
    if (!wsId) return
    setRuns({})
    let inits = 0
    const stream = new EventStream({
      path: `/api/workspaces/${wsId}/ws`,
      onFrame: (f: StreamFrame) => {
        if (f.type === 'init') {
          // The first init is the page's start; a later one means events may have been missed.
          if (inits++ > 0) handlersRef.current.onResync?.()
          return
        }
        if (!f.type.startsWith('sync_')) return
        const e = f as unknown as SyncEvent
        setRuns((s) => applySyncEvent(s, e))
        if (f.type === 'sync_finished') handlersRef.current.onSyncFinished?.(e)
        if (f.type === 'sync_started') handlersRef.current.onResync?.()
      },
      onState: (s, d) => {
        setState(s)
        setDetail(d)
      },
    })
    return () => stream.close()
  }, [wsId])

  return { runs, state, detail }
}
