// The action log: every tool call of the workspace's agents — who asked, who approved, the
// tool, its input, output summary, duration and outcome — newest first, paged.
import { Link } from 'react-router'
import { useLandscape } from './context'
import { query } from './paths'
import { formatDuration, formatTime, ListState, LoadMore, StatusBadge, tableClass, tdClass, thClass, useCursorList } from './shared'
import type { Action } from './types'

export function ActionsTab() {
  const { wsId } = useLandscape()
  const list = useCursorList<Action>(`/api/workspaces/${wsId}/actions${query({ limit: 50 })}`)
  return (
    <section aria-labelledby="actions-h" className="space-y-3">
      <h2 id="actions-h" className="text-base font-semibold">Action log</h2>
      <ListState wsId={wsId} isLoading={list.isLoading} error={list.error} empty={list.items.length === 0} loadingLabel="Loading the action log"
        emptyText="No tool calls yet.">
        <div className="overflow-x-auto">
          <table className={tableClass}>
            <caption className="sr-only">Tool calls of this workspace's agents, newest first</caption>
            <thead>
              <tr>{['Time', 'User', 'Approved by', 'Agent', 'Tool', 'Input', 'Output', 'Duration', 'Result'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
            </thead>
            <tbody>
              {list.items.map((a) => (
                <tr key={a.id}>
                  <td className={`${tdClass} whitespace-nowrap`}>{formatTime(a.created_at)}</td>
                  <td className={tdClass}>{a.user_id}</td>
                  <td className={tdClass}>{a.decided_by || <span className="text-slate-500">no approval needed</span>}</td>
                  <td className={tdClass}><Link className="text-brand-700 underline" to={`/w/${wsId}/chat/${a.agent_id}`}>{a.agent_id.slice(0, 8)}<span className="sr-only"> (open the conversation)</span></Link></td>
                  <td className={`${tdClass} font-mono`}>{a.tool}</td>
                  <td className={tdClass}><Clip text={a.input} label={`Input of ${a.tool}`} /></td>
                  <td className={tdClass}><Clip text={a.output_summary} label={`Output of ${a.tool}`} /></td>
                  <td className={`${tdClass} whitespace-nowrap`}>{formatDuration(a.duration_ms)}</td>
                  <td className={tdClass}>
                    <StatusBadge status={a.success ? 'succeeded' : 'failed'} />
                    {a.error && <span className="block text-xs text-red-800">{a.error}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} label="Load more actions" />
      </ListState>
    </section>
  )
}

/** Long text (tool input, up to 4 KB) folded to its start, the whole of it on demand. */
function Clip({ text, label }: { text: string; label: string }) {
  if (!text) return <span className="text-slate-500">—</span>
  if (text.length <= 80) return <code className="break-all text-xs">{text}</code>
  return (
    <details>
      <summary className="cursor-pointer break-all text-xs"><code>{text.slice(0, 80)}…</code><span className="sr-only"> {label}: show all</span></summary>
      <pre tabIndex={0} className="mt-1 max-h-64 max-w-md overflow-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 text-xs">{text}</pre>
    </details>
  )
}
