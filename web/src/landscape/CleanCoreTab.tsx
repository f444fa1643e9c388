// Clean Core: the A–D distribution of a connection's custom objects (chart and table), the
// objects with findings filtered by level and package, their worst reasons and successors.
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { Button, SelectField, TextField } from '../ui/controls'
import { useLandscape } from './context'
import { LevelChart } from './LevelChart'
import { query } from './paths'
import { ConnectionPicker, formatNumber, ListState, LoadMore, tableClass, tdClass, thClass, useChosenConnection, useCursorList } from './shared'
import { ObjectList, ReasonLine } from './reasons'
import { levels, type CleanCoreSummary, type Finding, type Level } from './types'
import { useSearchState } from './useSearchState'
import type { Page } from '../api/client'

type CleanCorePage = Page<Finding> & { summary: CleanCoreSummary; system_type: string }

export function CleanCoreTab() {
  const { wsId } = useLandscape()
  const [f, setF] = useSearchState(['connection', 'level', 'package'] as const)
  const conn = useChosenConnection(wsId, f.connection)
  const [pkgDraft, setPkgDraft] = useState(f.package)
  const path = conn
    ? `/api/workspaces/${wsId}/clean-core${query({ connection_id: conn, level: f.level, package: f.package, limit: 50 })}`
    : null
  const list = useCursorList<Finding, CleanCorePage>(path)
  const summary = list.first?.summary

  function applyPackage(e: FormEvent) {
    e.preventDefault()
    setF({ package: pkgDraft.trim().toUpperCase() })
  }

  return (
    <section aria-labelledby="cc-h" className="space-y-4">
      <h2 id="cc-h" className="text-base font-semibold">Clean Core</h2>
      <div className="flex flex-wrap items-end gap-4">
        <ConnectionPicker wsId={wsId} value={conn} onChange={(v) => setF({ connection: v })} />
        <div className="w-40">
          <SelectField label="Level" name="level" value={f.level} onChange={(v) => setF({ level: v })}
            options={[{ value: '', label: 'All levels' }, ...levels.map((l) => ({ value: l, label: `Level ${l}` }))]} />
        </div>
        <form onSubmit={applyPackage} className="flex items-end gap-2" role="search" aria-label="Filter by package">
          <div className="w-48"><TextField label="Package" name="package" value={pkgDraft} onChange={setPkgDraft} placeholder="e.g. ZSALES" /></div>
          <Button type="submit" variant="secondary">Apply</Button>
          {f.package && <Button variant="ghost" onClick={() => { setPkgDraft(''); setF({ package: '' }) }}>Clear package</Button>}
        </form>
      </div>
      {path && (
        <ListState wsId={wsId} connectionId={conn} isLoading={list.isLoading} error={list.error} empty={false} emptyText="" loadingLabel="Loading the Clean Core analysis">
          {summary && (
            <LevelChart title={`Clean Core distribution${f.package ? ` of package ${f.package}` : ''} (${formatNumber(summary.objects)} objects)`}
              data={summary.levels.map((l) => ({ level: l.level, objects: l.objects, share: l.share }))}
              selected={f.level} onSelect={(l: Level) => setF({ level: f.level === l ? '' : l })} />
          )}
          <FindingsTable wsId={wsId} connection={conn} search={new URLSearchParams({ connection: conn, ...(f.level && { level: f.level }), ...(f.package && { package: f.package }) }).toString()} items={list.items} />
          <LoadMore hasMore={list.hasMore} loading={list.loadingMore} onClick={list.loadMore} label="Load more objects" />
        </ListState>
      )}
    </section>
  )
}

function FindingsTable({ wsId, connection, search, items }: { wsId: string; connection: string; search: string; items: Finding[] }) {
  if (items.length === 0) return <p className="text-sm text-slate-600">No objects with findings for this filter.</p>
  return (
    <div className="overflow-x-auto">
      <table className={tableClass}>
        <caption className="pb-2 text-left text-sm font-semibold">Custom objects and their Clean Core level</caption>
        <thead>
          <tr>{['Object', 'Package', 'Level', 'Top reasons', 'Successors'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
        </thead>
        <tbody>
          {items.map((o) => (
            <tr key={o.object_type + '/' + o.object_name}>
              <th scope="row" className={`${tdClass} font-normal`}>
                <Link className="font-mono text-brand-700 underline"
                  to={{ pathname: `/w/${wsId}/landscape/clean-core/${connection}/${encodeURIComponent(o.object_type)}/${o.object_name.split('/').map(encodeURIComponent).join('/')}`, search }}>
                  <span className="text-xs text-slate-600">{o.object_type}</span> {o.object_name}
                </Link>
              </th>
              <td className={`${tdClass} font-mono`}>{o.package}</td>
              <td className={`${tdClass} font-semibold`}>{o.level}</td>
              <td className={tdClass}>
                <ul className="space-y-1">{(o.top_reasons ?? []).map((r, i) => <li key={i}><ReasonLine r={r} /></li>)}</ul>
                {o.reasons > (o.top_reasons?.length ?? 0) && <span className="text-xs text-slate-600">{o.reasons} reasons in all</span>}
              </td>
              <td className={tdClass}><ObjectList items={o.successors} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
