// One tool call: its status, arguments (pretty JSON), result preview and, for outputs stored
// by reference (claim check), the full output on demand.
import { memo, useState } from 'react'
import { Button, ErrorBanner } from '../ui/controls'
import { toolOutput } from './api'
import { formatSize } from './files'
import type { ToolView } from './reducer'

export function prettyJSON(text: string | undefined): string {
  if (!text) return ''
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

const statusText: Record<ToolView['status'], string> = {
  awaiting_approval: 'Waiting for approval',
  approved: 'Approved',
  queued: 'Queued…',
  running: 'Running…',
  done: 'Done',
  error: 'Failed',
  rejected: 'Rejected',
  unknown: 'Requested',
}

const statusClass: Record<ToolView['status'], string> = {
  awaiting_approval: 'bg-amber-100 text-amber-900',
  approved: 'bg-sky-100 text-sky-900',
  queued: 'bg-slate-100 text-slate-700',
  running: 'bg-sky-100 text-sky-900',
  done: 'bg-emerald-100 text-emerald-900',
  error: 'bg-red-100 text-red-900',
  rejected: 'bg-slate-200 text-slate-800',
  unknown: 'bg-slate-100 text-slate-700',
}

export const ToolCard = memo(function ToolCard({ agentId, callId, name, view }: { agentId: string; callId: string; name: string; view: ToolView }) {
  const [full, setFull] = useState<string | null>(null)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const args = prettyJSON(view.arguments)
  const result = full ?? view.error ?? view.result

  async function showFull() {
    setLoading(true)
    setError(null)
    try {
      const r = await toolOutput(agentId, callId)
      setFull(typeof r === 'string' ? r : (r?.content ?? ''))
    } catch (e) {
      setError(e)
    } finally {
      setLoading(false)
    }
  }

  return (
    <section aria-label={`Tool call ${name}`} className="my-2 rounded-md border border-slate-200 bg-slate-50 text-sm">
      <header className="flex flex-wrap items-center gap-2 px-3 py-2">
        <span aria-hidden className="text-slate-500">⚙</span>
        <span className="font-mono font-medium">{name}</span>
        <span className={`rounded px-1.5 py-0.5 text-xs ${statusClass[view.status]}`}>{statusText[view.status]}</span>
        {view.status === 'queued' && (
          <span className="text-xs text-slate-600">
            waiting for a free script sandbox{view.position ? ` (${view.position === 1 ? 'next' : `about ${view.position} in line`})` : ''}
          </span>
        )}
        {view.decided_by && <span className="text-xs text-slate-600">by {view.decided_by}</span>}
      </header>
      {view.reason && <p className="px-3 pb-2 text-xs text-slate-700">Reason: {view.reason}</p>}
      {args && (
        <details className="border-t border-slate-200 px-3 py-1">
          <summary className="cursor-pointer py-1 text-xs font-medium text-slate-700">Arguments</summary>
          <pre tabIndex={0} className="max-h-60 overflow-auto whitespace-pre-wrap break-words rounded bg-white p-2 font-mono text-xs">{args}</pre>
        </details>
      )}
      {result !== undefined && result !== '' && (
        <details className="border-t border-slate-200 px-3 py-1" open={view.status === 'error' || full !== null}>
          <summary className="cursor-pointer py-1 text-xs font-medium text-slate-700">
            {view.status === 'error' ? 'Error' : full !== null ? 'Full output' : 'Result preview'}
            {view.stored && view.size ? ` (${formatSize(view.size)} in all)` : ''}
          </summary>
          <pre tabIndex={0} className="max-h-80 overflow-auto whitespace-pre-wrap break-words rounded bg-white p-2 font-mono text-xs">{result}</pre>
          {view.stored && full === null && (
            <div className="py-1">
              <Button variant="secondary" onClick={showFull} disabled={loading}>{loading ? 'Loading…' : 'Show full output'}</Button>
            </div>
          )}
          <ErrorBanner error={error} className="my-1" />
        </details>
      )}
    </section>
  )
})
