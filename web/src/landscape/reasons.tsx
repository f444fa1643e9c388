// How a Clean Core reason reads: which SAP object the code uses and how, the object's state,
// the level it costs and why.
import type { ConversionItem, ObjectRef, Reason } from './types'

/** The object a reason is about and how it is used, whichever form the analysis stored. */
export function reasonUsage(r: Reason): { type: string; name: string; kind: string; line?: number } {
  return { type: r.usage?.type ?? r.type ?? '', name: r.usage?.name ?? r.name ?? '', kind: r.usage?.kind ?? r.kind ?? '', line: r.line }
}

export function conversionObject(c: ConversionItem): ObjectRef {
  return { type: c.object?.type ?? c.type ?? '', name: c.object?.name ?? c.name ?? '' }
}

export function ReasonLine({ r }: { r: Reason }) {
  const u = reasonUsage(r)
  return (
    <span className="text-xs">
      <span className="font-semibold">{r.level}</span> · {u.kind}{' '}
      <span className="font-mono">{u.type} {u.name}</span>
      {r.state && <> · state <span className="font-mono">{r.state}</span></>}
      {r.deprecated && <> · deprecated</>}
      {r.why && <span className="block text-slate-700">{r.why}</span>}
    </span>
  )
}

export function ObjectList({ items, concept }: { items: ObjectRef[] | null | undefined; concept?: string }) {
  if (!items?.length && !concept) return <span className="text-xs text-slate-500">—</span>
  return (
    <ul className="text-xs">
      {(items ?? []).map((s) => <li key={s.type + s.name} className="font-mono">{s.type} {s.name}</li>)}
      {concept && <li>concept: {concept}</li>}
    </ul>
  )
}
