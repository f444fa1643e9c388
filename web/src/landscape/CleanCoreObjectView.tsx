// One object's Clean Core analysis: its level, every reason, and for ECC the conversion view
// (deprecated usages and their S/4HANA successors). The name is the rest of the route, so
// namespaced names (/ACME/CL_X) need no escaping.
import useSWR from 'swr'
import { Link, useLocation, useParams } from 'react-router'
import { ErrorBanner, Spinner } from '../ui/controls'
import { useLandscape } from './context'
import { landscapePaths } from './paths'
import { conversionObject, ObjectList, reasonUsage } from './reasons'
import { captionClass, isNoIndex, NoIndex, tableClass, tdClass, thClass } from './shared'
import type { CleanCoreObject } from './types'

export function CleanCoreObjectView() {
  const { wsId } = useLandscape()
  const { connId = '', type = '', '*': name = '' } = useParams()
  const { search } = useLocation()
  const { data, error, isLoading } = useSWR<CleanCoreObject>(connId && type && name ? landscapePaths.cleanCoreObject(wsId, connId, type, name) : null)
  const back = `/w/${wsId}/landscape/clean-core${search}`
  return (
    <section aria-labelledby="cco-h" className="space-y-4">
      <Link to={back} className="text-sm text-brand-700 underline">← Back to Clean Core</Link>
      <h2 id="cco-h" className="text-base font-semibold">
        <span className="text-slate-600">{type}</span> <span className="font-mono">{name}</span>
      </h2>
      {isLoading && <Spinner label="Loading the analysis" />}
      {error && (isNoIndex(error) ? <NoIndex wsId={wsId} connectionId={connId} /> : <ErrorBanner error={error} />)}
      {data && (
        <>
          <dl className="flex flex-wrap gap-6 text-sm">
            <div><dt className="text-xs text-slate-600">Level</dt><dd className="text-2xl font-bold">{data.level}</dd></div>
            <div><dt className="text-xs text-slate-600">Package</dt><dd className="font-mono">{data.package || '—'}</dd></div>
            <div><dt className="text-xs text-slate-600">Reasons</dt><dd>{data.reasons?.length ?? 0}</dd></div>
            <div><dt className="text-xs text-slate-600">Index generation</dt><dd>{data.generation}</dd></div>
          </dl>
          <div className="overflow-x-auto">
            <table className={tableClass}>
              <caption className={captionClass}>Every reason for level {data.level}</caption>
              <thead>
                <tr>{['Level', 'Usage', 'Used object', 'Line', 'State', 'Why', 'Successors'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
              </thead>
              <tbody>
                {(data.reasons ?? []).length === 0 && <tr><td colSpan={7} className={tdClass}>No reasons: the object uses released APIs only.</td></tr>}
                {(data.reasons ?? []).map((r, i) => {
                  const u = reasonUsage(r)
                  return (
                  <tr key={i}>
                    <td className={`${tdClass} font-semibold`}>{r.level}</td>
                    <td className={tdClass}>{u.kind}</td>
                    <td className={`${tdClass} font-mono`}>{u.type} {u.name}</td>
                    <td className={tdClass}>{u.line ?? '—'}</td>
                    <td className={tdClass}>{r.state}{r.deprecated && ' (deprecated)'}</td>
                    <td className={tdClass}>{r.why}</td>
                    <td className={tdClass}><ObjectList items={r.successors} concept={r.successorConcept} /></td>
                  </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
          <div className="overflow-x-auto">
            <table className={tableClass}>
              <caption className={captionClass}>ECC conversion: deprecated usages and their S/4HANA successors</caption>
              <thead>
                <tr>{['Used object', 'State', 'Deprecated', 'Successors'].map((h) => <th key={h} scope="col" className={thClass}>{h}</th>)}</tr>
              </thead>
              <tbody>
                {(data.conversion ?? []).length === 0 && <tr><td colSpan={4} className={tdClass}>No conversion findings.</td></tr>}
                {(data.conversion ?? []).map((c, i) => (
                  <tr key={i}>
                    <td className={`${tdClass} font-mono`}>{conversionObject(c).type} {conversionObject(c).name}</td>
                    <td className={tdClass}>{c.state}</td>
                    <td className={tdClass}>{c.deprecated ? 'yes' : 'no'}</td>
                    <td className={tdClass}><ObjectList items={c.successors} concept={c.successorConcept} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  )
}
