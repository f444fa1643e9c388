// Inventory: search a connection's indexed objects (name part, type, package, custom), page
// with "Load more", and read an object's ABAP source (from the index when it holds it).
import { useState, type FormEvent } from 'react'
import useSWR from 'swr'
import { Button, ErrorBanner, SelectField, Spinner, TextField } from '../ui/controls'
import { useLandscape } from './context'
import { query } from './paths'
import { ConnectionPicker, formatTime, ListState, LoadMore, tableClass, tdClass, thClass, useChosenConnection, useCursorList } from './shared'
import type { InventoryObject, Source } from './types'
import { useSearchState } from './useSearchState'

export function InventoryTab() {
  const { wsId } = useLandscape()
  const [f, setF] = useSearchState(['connection', 'q', 'type', 'package', 'custom'] as const)
  const [draft, setDraft] = useState({ q: f.q, type: f.type, package: f.package, custom: f.custom })
  const [open, setOpen] = useState<InventoryObject | null>(null)
  const conn = useChosenConnection(wsId, f.connection)
  const path = conn
    ? `/api/workspaces/${wsId}/dashboard/objects${query({ connection_id: conn, q: f.q, type: f.type, package: f.package, custom: f.custom, limit: 100 })}`
    : null
  const list = useCursorList<InventoryObject>(path)

  function search(e: FormEvent) {
    e.preventDefault()
    setOpen(null)
    setF({ q: draft.q.trim(), type: draft.type.trim().toUpperCase(), package: draft.package.trim().toUpperCase(), custom: draft.custom })
  }

  return (
    <section aria-labelledby="inv-h" className="space-y-4">
      <h2 id="inv-h" className="text-base font-semibold">Inventory</h2>
      <ConnectionPicker wsId={wsId} value={conn} onChange={(v) => { setOpen(null); setF({ connection: v }) }} />
      <form role="search" aria-label="Search objects" onSubmit={search} className="flex flex-wrap items-end gap-3">
        <div className="w-64"><TextField label="Object name contains" name="q" value={draft.q} onChange={(q) => setDraft({ ...draft, q })} placeholder="e.g. Z_SALES" /></div>
        <div className="w-28"><TextField label="Type" name="type" value={draft.type} onChange={(type) => setDraft({ ...draft, type })} placeholder="PROG" /></div>
        <div className="w-40"><TextField label="Package" name="package" value={draft.package} onChange={(p) => setDraft({ ...draft, package: p })} /></div>
        <div className="w-40">
          <SelectField label="Origin" name="custom" value={draft.custom} onChange={(custom) => setDraft({ ...draft, custom })}
            options={[{ value: '', label: 'All objects' }, { value: 'true', label: 'Custom only' }, { value: 'false', label: 'SAP standard only' }]} />
        </div>
        <Button type="submit">Search</Button>
      </form>
      {path && (
        <ListState wsId={wsId} connectionId={conn} isLoading={list.isLoading} error={list.error} empty={list.items.length === 0} loadingLabel="Searching objects"
          emptyText="No object matches this search.">
          <div className="overflow-x-auto">
            <table className={tableClass}>
              <caption className="pb-2 text-left text-sm font-semibold">Objects{list.items.length > 0 && ` (${list.items.length}${list.hasMore ? '+' : ''} shown)`}</caption>
              <thead>
                <tr>{['Type', 'Name', 'Package', 'Title', 'Release state', 'Custom', 'Source'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
              </thead>
              <tbody>
                {list.items.map((o) => (
                  <tr key={o.object_type + '/' + o.object_name} className={open === o ? 'bg-brand-50' : undefined}>
                    <td className={`${tdClass} font-mono`}>{o.object_type}</td>
                    <th scope="row" className={`${tdClass} font-mono font-normal`}>{o.object_name}</th>
                    <td className={`${tdClass} font-mono`}>{o.package}</td>
                    <td className={tdClass}>{o.title}</td>
                    <td className={tdClass}>{o.release_state}</td>
                    <td className={tdClass}>{o.custom ? 'yes' : 'no'}</td>
                    <td className={tdClass}>
                      <Button variant="ghost" aria-label={`Show source of ${o.object_type} ${o.object_name}`} onClick={() => setOpen(o)}>Source</Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} />
        </ListState>
      )}
      {open && <SourcePanel wsId={wsId} connection={conn} obj={open} onClose={() => setOpen(null)} />}
    </section>
  )
}

function SourcePanel({ wsId, connection, obj, onClose }: { wsId: string; connection: string; obj: InventoryObject; onClose: () => void }) {
  const { data, error, isLoading } = useSWR<Source>(`/api/workspaces/${wsId}/source${query({ connection_id: connection, type: obj.object_type, name: obj.object_name })}`)
  return (
    <section aria-label={`Source of ${obj.object_type} ${obj.object_name}`} className="rounded-lg border border-slate-200 bg-white p-4">
      <div className="mb-2 flex items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">Source of <span className="font-mono">{obj.object_type} {obj.object_name}</span></h3>
        <Button variant="ghost" onClick={onClose} aria-label="Close source">Close</Button>
      </div>
      {isLoading && <Spinner label="Loading source" />}
      <ErrorBanner error={error} />
      {data && (
        <>
          <p className="mb-2 text-xs text-slate-600">
            {data.lines.toLocaleString()} lines · {data.from === 'index' ? `from the index (generation ${data.generation}, indexed ${formatTime(data.indexed_at)})` : 'read live from SAP'}
          </p>
          <pre tabIndex={0} role="region" aria-label={`ABAP source of ${obj.object_name}`} className="max-h-[32rem] overflow-auto rounded-md bg-slate-900 p-3 text-xs text-slate-100">
            <code>{data.source}</code>
          </pre>
        </>
      )}
    </section>
  )
}
