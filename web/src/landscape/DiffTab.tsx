// Diff of two connections' indexes: counts per kind and the objects of one kind (changed, only
// on the left, only on the right). Pages follow next_cursor while has_more, since a page of a
// sparse diff may be empty.
import { useEffect, useState } from 'react'
import { Tabs } from 'radix-ui'
import type { Page } from '../api/client'
import { Spinner } from '../ui/controls'
import { useLandscape } from './context'
import { diffStatusText, shouldFetchNext } from './diffPaging'
import { query } from './paths'
import { ConnectionPicker, formatNumber, ListState, LoadMore, tableClass, tdClass, thClass, useChosenConnection, useCursorList } from './shared'
import type { DiffCounts, DiffItem, DiffKind, DiffSide } from './types'
import { useSearchState } from './useSearchState'

type DiffPage = Page<DiffItem> & { counts: DiffCounts; left: { name: string }; right: { name: string } }

const kinds: { kind: DiffKind; label: string }[] = [
  { kind: 'changed', label: 'Changed' },
  { kind: 'only_left', label: 'Only left' },
  { kind: 'only_right', label: 'Only right' },
]
const step = 50

export function DiffTab() {
  const { wsId } = useLandscape()
  const [f, setF] = useSearchState(['left', 'right', 'kind'] as const)
  const kind = (kinds.find((k) => k.kind === f.kind)?.kind ?? 'changed') as DiffKind
  const left = useChosenConnection(wsId, f.left)
  const right = useChosenConnection(wsId, f.right, left)
  const same = !!left && left === right
  const path = left && right && !same
    ? `/api/workspaces/${wsId}/dashboard/diff${query({ left, right, kind, limit: step })}`
    : null
  const list = useCursorList<DiffItem, DiffPage>(path)
  const [target, setTarget] = useState(step)
  useEffect(() => setTarget(step), [path])
  const lastPage = list.pages[list.pages.length - 1]
  const paging = { loaded: list.items.length, target, hasMore: list.hasMore, loading: list.loadingMore || list.isLoading }
  const fetchNext = shouldFetchNext(paging)
  const { loadMore } = list
  // Pages until the target is loaded: each page ends loading, which asks again.
  useEffect(() => {
    if (fetchNext) void loadMore()
  }, [fetchNext, loadMore])
  const counts = list.first?.counts
  const status = diffStatusText({ ...paging, lastPageEmpty: !!lastPage && (lastPage.data?.length ?? 0) === 0 })

  return (
    <section aria-labelledby="diff-h" className="space-y-4">
      <h2 id="diff-h" className="text-base font-semibold">Diff between connections</h2>
      <div className="flex flex-wrap items-end gap-4">
        <ConnectionPicker wsId={wsId} label="Left connection" name="left" value={left} onChange={(v) => setF({ left: v })} />
        <ConnectionPicker wsId={wsId} label="Right connection" name="right" value={right} onChange={(v) => setF({ right: v })} />
      </div>
      {same && <p role="alert" className="text-sm text-red-800">Pick two different connections: a diff needs a second connection.</p>}
      {path && (
        <Tabs.Root value={kind} onValueChange={(v) => setF({ kind: v })}>
          <Tabs.List aria-label="Kind of difference" className="mb-3 flex gap-1 border-b border-slate-200">
            {kinds.map((k) => (
              <Tabs.Trigger key={k.kind} value={k.kind}
                className="border-b-2 border-transparent px-3 py-1.5 text-sm data-[state=active]:border-brand-600 data-[state=active]:font-semibold">
                {k.label}{counts && <span className="ml-1 rounded bg-slate-100 px-1 text-xs">{formatNumber(counts[k.kind])}</span>}
              </Tabs.Trigger>
            ))}
          </Tabs.List>
          {counts && <p className="mb-2 text-xs text-slate-600">{formatNumber(counts.same)} objects are the same on both sides.</p>}
          {kinds.map((k) => (
            <Tabs.Content key={k.kind} value={k.kind}>
              {k.kind === kind && (
                <ListState wsId={wsId} isLoading={list.isLoading} error={list.error} empty={false} emptyText="" loadingLabel="Comparing">
                  <DiffTable items={list.items} kind={kind} left={list.first?.left.name ?? 'Left'} right={list.first?.right.name ?? 'Right'} />
                  {status && <p role="status" className="mt-2 text-sm text-slate-700">{status}</p>}
                  {paging.loading && list.items.length > 0 && paging.loaded < target && <Spinner label="Loading more differences" />}
                  <LoadMore hasMore={list.hasMore && paging.loaded >= target} loading={paging.loading} onClick={() => setTarget(list.items.length + step)} />
                </ListState>
              )}
            </Tabs.Content>
          ))}
        </Tabs.Root>
      )}
    </section>
  )
}

function sideText(s: DiffSide | null) {
  if (!s) return '—'
  return [s.package, s.release_state].filter(Boolean).join(' · ') || '(no package)'
}

function DiffTable({ items, kind, left, right }: { items: DiffItem[]; kind: DiffKind; left: string; right: string }) {
  if (items.length === 0) return null
  return (
    <div className="overflow-x-auto">
      <table className={tableClass}>
        <caption className="sr-only">{kinds.find((k) => k.kind === kind)?.label} objects between {left} and {right}</caption>
        <thead>
          <tr>
            <th scope="col" className={thClass}>Object</th>
            <th scope="col" className={thClass}>{left}</th>
            <th scope="col" className={thClass}>{right}</th>
            {kind === 'changed' && <th scope="col" className={thClass}>What differs</th>}
          </tr>
        </thead>
        <tbody>
          {items.map((d) => (
            <tr key={d.object_type + '/' + d.object_name}>
              <th scope="row" className={`${tdClass} font-mono font-normal`}>
                <span className="text-xs text-slate-600">{d.object_type}</span> {d.object_name}{d.custom && <span className="ml-1 text-xs text-slate-600">(custom)</span>}
              </th>
              <td className={tdClass}>{sideText(d.left)}{d.left?.title && <span className="block text-xs text-slate-600">{d.left.title}</span>}</td>
              <td className={tdClass}>{sideText(d.right)}{d.right?.title && <span className="block text-xs text-slate-600">{d.right.title}</span>}</td>
              {kind === 'changed' && <td className={tdClass}>{(d.fields ?? []).join(', ') || '—'}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
