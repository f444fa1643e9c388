// The workspace topic (GET /api/workspaces/:id/ws, docs/events.md): sync_started,
// sync_progress, sync_waiting, sync_resumed and sync_finished of every connection, folded into
// live runs. The stream
// resumes with its cursor after a drop, so no progress frame is applied twice.
import { useEffect, useRef, useState } from 'react'
import { EventStream, type StreamState } from '../api/stream'
import type { SyncFinishedFrame, WorkspaceFrame } from '../chat/events.gen'
import { applySyncEvent, type LiveRuns } from './progress'

export interface WorkspaceEventHandlers {
  /** A run ended (any status): lists and figures should be read again. */
  onSyncFinished?: (e: SyncFinishedFrame) => void
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
    const stream = new EventStream<WorkspaceFrame>({
      path: `/api/workspaces/${wsId}/ws`,
      onFrame: (f) => {
        if (f.type === 'init') {
          // The first init is the page's start; a later one means events may have been missed.
          if (inits++ > 0) handlersRef.current.onResync?.()
          return
        }
        if (!f.type.startsWith('sync_')) return
        setRuns((s) => applySyncEvent(s, f))
        if (f.type === 'sync_finished') handlersRef.current.onSyncFinished?.(f)
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
