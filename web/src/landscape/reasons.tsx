// How a Clean Core reason reads: which SAP object the code uses and how, the object's state,
// the level it costs and why.
import type { ObjectRef, Reason } from './types'

export function ReasonLine({ r }: { r: Reason }) {
  return (
    <span className="text-xs">
      <span className="font-semibold">{r.level}</span> · {r.usage.kind}{' '}
      <span className="font-mono">{r.usage.type} {r.usage.name}</span>
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
