// One entry of the conversation: a stored message (Markdown for the assistant), the reply being
// streamed (plain text, so each frame's delta costs one text update) or a message the user sent
// that the server has not stored yet (sending, queued or failed).
import { memo, useState } from 'react'
import { Markdown } from '../ui/Markdown'
import { MarkdownBlocks } from './MarkdownBlocks'
import { Button } from '../ui/controls'
import { formatSize, openFile } from './files'
import { toolView, type ChatMessage, type Outgoing, type Part, type PartialReply, type ToolState } from './reducer'
import { ToolCard } from './ToolCard'

export function FileChip({ id, name, size }: { id: string; name: string; size?: number }) {
  const [error, setError] = useState('')
  return (
    <span className="inline-flex items-center gap-1">
      <button type="button" onClick={() => openFile(id, name).catch((e: Error) => setError(e.message))}
        className="inline-flex items-center gap-1 rounded-full border border-slate-300 bg-white px-2 py-0.5 text-xs text-slate-800 hover:bg-slate-100"
        aria-label={`Download ${name}`}>
        <span aria-hidden>📎</span>{name}{size !== undefined && <span className="text-slate-500">{formatSize(size)}</span>}
      </button>
      {error && <span role="alert" className="text-xs text-red-700">{error}</span>}
    </span>
  )
}

function Thinking({ text, active = false }: { text: string; active?: boolean }) {
  return (
    <details className="mb-2 rounded-md border border-slate-200 bg-slate-50 px-3 py-1 text-sm" open={active || undefined}>
      <summary className="cursor-pointer py-1 text-xs font-medium text-slate-700">{active ? 'Thinking…' : 'Thinking'}</summary>
      <div className="whitespace-pre-wrap pb-2 text-xs text-slate-700">{text}</div>
    </details>
  )
}

interface RowProps {
  message: ChatMessage
  agentId: string
  results: Map<string, Part>
  tools: Record<string, ToolState>
}

export const MessageBubble = memo(function MessageBubble({ message: m, agentId, results, tools }: RowProps) {
  const parts = m.parts ?? []
  if (m.role === 'user') {
    const files = parts.filter((p) => p.type === 'file' && p.file_id)
    return (
      <article aria-label="You" className="flex justify-end px-4 py-2">
        <div className="max-w-[80%] rounded-lg bg-brand-600 px-3 py-2 text-sm text-white">
          <div className="whitespace-pre-wrap break-words">{m.content}</div>
          {files.length > 0 && (
            <div className="mt-2 flex flex-wrap gap-1">
              {files.map((f) => <FileChip key={f.file_id} id={f.file_id!} name={f.name ?? 'file'} size={f.size} />)}
            </div>
          )}
        </div>
      </article>
    )
  }
  if (m.role === 'summary') {
    const s = parts.find((p) => p.type === 'summary')
    return (
      <article aria-label="Summary of earlier turns" className="px-4 py-2">
        <details className="rounded-md border border-dashed border-slate-300 px-3 py-1 text-sm">
          <summary className="cursor-pointer py-1 text-xs text-slate-700">Earlier turns summarized{s?.turns ? ` (${s.turns} turns)` : ''}</summary>
          <Markdown text={m.content} className="text-sm" />
        </details>
      </article>
    )
  }
  const reasoning = parts.find((p) => p.type === 'reasoning')
  const calls = parts.filter((p) => p.type === 'tool_call' && p.id)
  return (
    <article aria-label="Assistant" className="px-4 py-2">
      <div className="max-w-[95%] text-sm">
        {reasoning?.text && <Thinking text={reasoning.text} />}
        {m.content && <MarkdownBlocks text={m.content} />}
        {calls.map((c) => (
          <ToolCard key={c.id} agentId={agentId} callId={c.id!} name={c.name ?? 'tool'} view={toolView(c, results, tools[c.id!])} />
        ))}
        {m.status === 'stopped' && <p className="mt-1 text-xs italic text-slate-600">Stopped</p>}
      </div>
    </article>
  )
})

// Streaming text in paragraphs: finished ones are memoized, so each frame updates (and lays
// out) only the last paragraph instead of the whole growing reply.
const TextBlock = memo(function TextBlock({ text }: { text: string }) {
  return <p className="mb-2 whitespace-pre-wrap break-words">{text}</p>
})

function StreamingText({ text, ended }: { text: string; ended: boolean }) {
  const blocks = text.split(/\n{2,}/)
  const last = blocks.pop() ?? ''
  return (
    <div>
      {blocks.map((b, i) => <TextBlock key={i} text={b} />)}
      <p className="whitespace-pre-wrap break-words">
        {last}
        {!ended && <span aria-hidden className="ml-0.5 inline-block h-4 w-1.5 animate-pulse bg-slate-400 align-text-bottom" />}
      </p>
    </div>
  )
}

export const StreamingBubble = memo(function StreamingBubble({ partial: p, retryAttempt }: { partial: PartialReply; retryAttempt?: number }) {
  return (
    // aria-busy: screen readers wait for the finished message instead of every delta.
    <article aria-label="Assistant (writing)" aria-busy="true" className="px-4 py-2">
      <div className="max-w-[95%] text-sm">
        {retryAttempt && <p className="text-xs text-slate-600">Retrying (attempt {retryAttempt})…</p>}
        {(p.reasoning || p.thinking) && <Thinking text={p.reasoning} active={p.thinking} />}
        {p.incomplete && (
          <p className="text-xs italic text-slate-600">The start of this reply will appear when it completes.</p>
        )}
        <StreamingText text={(p.incomplete ? '… ' : '') + p.text} ended={p.ended} />
      </div>
    </article>
  )
})

const outgoingLabel = { sending: 'Sending…', queued: 'Queued: sent when the current turn ends', sent: 'Sent', failed: 'Not sent' } as const

export const OutgoingBubble = memo(function OutgoingBubble({ item, onRetry, onDiscard }: { item: Outgoing; onRetry: (o: Outgoing) => void; onDiscard: (id: string) => void }) {
  return (
    <article aria-label={`You (${outgoingLabel[item.state]})`} className="flex justify-end px-4 py-2">
      <div className={`max-w-[80%] rounded-lg px-3 py-2 text-sm ${item.state === 'failed' ? 'border border-red-300 bg-red-50 text-slate-900' : 'bg-brand-100 text-slate-900'}`}>
        <div className="whitespace-pre-wrap break-words">{item.content}</div>
        {item.attachments.length > 0 && (
          <div className="mt-1 flex flex-wrap gap-1 text-xs">
            {item.attachments.map((a) => <span key={a.id} className="rounded-full border border-slate-300 bg-white px-2 py-0.5">📎 {a.name}</span>)}
          </div>
        )}
        <p className="mt-1 text-xs text-slate-700">{outgoingLabel[item.state]}</p>
        {item.state === 'failed' && (
          <div className="mt-1 space-y-1">
            <p role="alert" className="text-xs text-red-800">{item.error}</p>
            <div className="flex gap-2">
              <Button variant="secondary" onClick={() => onRetry(item)}>Retry</Button>
              <Button variant="ghost" onClick={() => onDiscard(item.client_message_id)}>Discard</Button>
            </div>
          </div>
        )}
      </div>
    </article>
  )
})
