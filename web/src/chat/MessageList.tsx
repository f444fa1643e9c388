// The conversation, virtualized: only the rows in view (and a few around) are in the DOM, each
// measured as it renders (dynamic heights). The list sticks to the bottom while new text
// arrives unless the user scrolled up; a button brings them back.
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react'
import { useVirtualizer } from '@tanstack/react-virtual'
import { Button } from '../ui/controls'
import { MessageBubble, OutgoingBubble, StreamingBubble } from './MessageBubble'
import { toolResultsByCall, type ChatMessage, type Outgoing, type PartialReply, type ToolState } from './reducer'

type Row =
  | { kind: 'message'; key: string; message: ChatMessage }
  | { kind: 'partial'; key: string; partial: PartialReply }
  | { kind: 'outgoing'; key: string; item: Outgoing }

interface Props {
  agentId: string
  messages: ChatMessage[]
  partials: PartialReply[]
  outgoing: Outgoing[]
  tools: Record<string, ToolState>
  retryAttempt?: number
  onRetry: (o: Outgoing) => void
  onDiscard: (id: string) => void
  emptyText: string
  /** Loads messages before the first one held; resolves with how many were added. */
  loadOlder?: () => Promise<number>
}

const nearBottomPx = 48

export const MessageList = memo(function MessageList({ agentId, messages, partials, outgoing, tools, retryAttempt, onRetry, onDiscard, emptyText, loadOlder }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  const [atBottom, setAtBottom] = useState(true)

  // Tool results are shown in the card of the call; they get no row of their own.
  const messageRows = useMemo<Row[]>(
    () => messages.filter((m) => m.role !== 'tool').map((m) => ({ kind: 'message', key: m.id, message: m })),
    [messages],
  )
  const results = useMemo(() => toolResultsByCall(messages), [messages])
  const rows = useMemo<Row[]>(
    () => [
      ...messageRows,
      ...partials.map((p): Row => ({ kind: 'partial', key: 'p:' + p.message_id, partial: p })),
      ...outgoing.map((o): Row => ({ kind: 'outgoing', key: 'o:' + o.client_message_id, item: o })),
    ],
    [messageRows, partials, outgoing],
  )

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 96,
    overscan: 6,
    getItemKey: (i) => rows[i].key,
    useFlushSync: false,
  })

  // Follow the newest text while the user is at the bottom (after each render and re-measure).
  const total = virtualizer.getTotalSize()
  useLayoutEffect(() => {
    const el = scrollRef.current
    if (el && stick.current && rows.length) el.scrollTop = el.scrollHeight
  })

  const onScroll = useCallback(() => {
    const el = scrollRef.current
    if (!el) return
    const near = el.scrollHeight - el.scrollTop - el.clientHeight < nearBottomPx
    stick.current = near
    setAtBottom(near)
  }, [])

  const [loadingOlder, setLoadingOlder] = useState(false)
  const [olderError, setOlderError] = useState('')
  async function older() {
    if (!loadOlder) return
    setLoadingOlder(true)
    setOlderError('')
    stick.current = false
    try {
      const added = await loadOlder()
      // Keep the message that was first in view where the reader left it.
      if (added > 0) requestAnimationFrame(() => virtualizer.scrollToIndex(added, { align: 'start' }))
    } catch (e) {
      setOlderError(e instanceof Error ? e.message : String(e))
    } finally {
      setLoadingOlder(false)
    }
  }

  const toBottom = () => {
    stick.current = true
    setAtBottom(true)
    virtualizer.scrollToIndex(rows.length - 1, { align: 'end' })
  }

  return (
    <div className="relative min-h-0 flex-1">
      <div ref={scrollRef} onScroll={onScroll} role="log" aria-live="polite" aria-relevant="additions" aria-label="Conversation"
        tabIndex={0} className="h-full overflow-y-auto py-2">
        {loadOlder && (
          <div className="flex flex-col items-center gap-1 py-2">
            <Button variant="secondary" onClick={older} disabled={loadingOlder}>{loadingOlder ? 'Loading…' : 'Load earlier messages'}</Button>
            {olderError && <p role="alert" className="text-xs text-red-700">{olderError}</p>}
          </div>
        )}
        {rows.length === 0 && <p className="px-6 py-10 text-center text-sm text-slate-600">{emptyText}</p>}
        <div className="relative w-full" style={{ height: total }}>
          {virtualizer.getVirtualItems().map((v) => {
            const row = rows[v.index]
            return (
              <div key={v.key} data-index={v.index} ref={virtualizer.measureElement}
                className="absolute left-0 top-0 w-full" style={{ transform: `translateY(${v.start}px)` }}>
                {row.kind === 'message' && <MessageBubble message={row.message} agentId={agentId} results={results} tools={tools} />}
                {row.kind === 'partial' && <StreamingBubble partial={row.partial} retryAttempt={retryAttempt} />}
                {row.kind === 'outgoing' && <OutgoingBubble item={row.item} onRetry={onRetry} onDiscard={onDiscard} />}
              </div>
            )
          })}
        </div>
      </div>
      {!atBottom && rows.length > 0 && (
        <Button variant="secondary" className="absolute bottom-3 right-6 shadow" onClick={toBottom}>Scroll to latest</Button>
      )}
    </div>
  )
})
