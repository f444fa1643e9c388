// Generated docs of a connection: the list (by kind) and one doc rendered as Markdown, with its
// ```mermaid fences (the ER diagrams) drawn by mermaid.
import useSWR from 'swr'
import { Link, useParams } from 'react-router'
import { Markdown } from '../ui/Markdown'
import { ErrorBanner, SelectField, Spinner } from '../ui/controls'
import { useLandscape } from './context'
import { MermaidDiagram } from './MermaidDiagram'
import { splitMermaid } from './mermaidBlocks'
import { landscapePaths, namePath, query } from './paths'
import { ConnectionPicker, formatTime, isNoIndex, ListState, LoadMore, NoIndex, useChosenConnection, useCursorList } from './shared'
import type { DocEntry } from './types'
import { useSearchState } from './useSearchState'

const kindLabels: Record<string, string> = {
  package: 'Package', object: 'Object', er_diagram: 'ER diagram', business_process: 'Business process',
}

export function DocsTab() {
  const { wsId } = useLandscape()
  const { '*': rest = '' } = useParams()
  const [f, setF] = useSearchState(['connection', 'kind'] as const)
  const conn = useChosenConnection(wsId, f.connection)
  const slash = rest.indexOf('/')
  const open = slash > 0 ? { kind: rest.slice(0, slash), subject: rest.slice(slash + 1) } : null
  const path = conn ? `/api/workspaces/${wsId}/docs${query({ connection_id: conn, kind: f.kind, limit: 100 })}` : null
  const list = useCursorList<DocEntry>(path)
  const search = new URLSearchParams({ connection: conn, ...(f.kind && { kind: f.kind }) }).toString()

  return (
    <section aria-labelledby="docs-h" className="space-y-4">
      <h2 id="docs-h" className="text-base font-semibold">Generated docs</h2>
      <div className="flex flex-wrap items-end gap-4">
        <ConnectionPicker wsId={wsId} value={conn} onChange={(v) => setF({ connection: v })} />
        <div className="w-48">
          <SelectField label="Kind" name="kind" value={f.kind} onChange={(v) => setF({ kind: v })}
            options={[{ value: '', label: 'All kinds' }, ...Object.entries(kindLabels).map(([value, label]) => ({ value, label }))]} />
        </div>
      </div>
      {path && (
        <div className="grid gap-6 lg:grid-cols-[18rem_1fr]">
          <nav aria-label="Generated docs" className="space-y-2">
            <ListState wsId={wsId} connectionId={conn} isLoading={list.isLoading} error={list.error} empty={list.items.length === 0} loadingLabel="Loading docs"
              emptyText="No docs yet: a sync writes them after indexing.">
              <ul className="space-y-1">
                {list.items.map((d) => {
                  const active = open?.kind === d.kind && open.subject === d.subject
                  return (
                    <li key={d.kind + '/' + d.subject}>
                      <Link to={{ pathname: `/w/${wsId}/landscape/docs/${d.kind}/${namePath(d.subject)}`, search }}
                        aria-current={active ? 'page' : undefined}
                        className={`block rounded px-2 py-1 text-sm ${active ? 'bg-brand-50 font-semibold text-brand-800' : 'hover:bg-slate-100'}`}>
                        {d.title || d.subject}
                        <span className="block text-xs text-slate-600">{kindLabels[d.kind] ?? d.kind} · <span className="font-mono">{d.subject}</span></span>
                      </Link>
                    </li>
                  )
                })}
              </ul>
              <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} label="Load more docs" />
            </ListState>
          </nav>
          <div>
            {open ? <DocView wsId={wsId} conn={conn} kind={open.kind} subject={open.subject} />
              : <p className="text-sm text-slate-600">Choose a doc from the list.</p>}
          </div>
        </div>
      )}
    </section>
  )
}

function DocView({ wsId, conn, kind, subject }: { wsId: string; conn: string; kind: string; subject: string }) {
  const { data, error, isLoading } = useSWR<DocEntry>(landscapePaths.doc(wsId, conn, kind, subject))
  if (isLoading) return <Spinner label="Loading the doc" />
  if (error) return isNoIndex(error) ? <NoIndex wsId={wsId} connectionId={conn} /> : <ErrorBanner error={error} />
  if (!data) return null
  const title = data.title || data.subject
  return (
    <article aria-labelledby="doc-title" className="rounded-lg border border-slate-200 bg-white p-4">
      <header className="mb-3 border-b border-slate-100 pb-2">
        <h3 id="doc-title" className="text-base font-semibold">{title}</h3>
        <p className="text-xs text-slate-600">
          {kindLabels[data.kind] ?? data.kind} · generation {data.generation} · {formatTime(data.updated_at)}{data.model && ` · written by ${data.model}`}
        </p>
      </header>
      {splitMermaid(data.markdown ?? '').map((p, i) =>
        p.kind === 'mermaid' ? <MermaidDiagram key={i} code={p.code} title={title} /> : <Markdown key={i} text={p.text} />,
      )}
    </article>
  )
}
