// Overview: one card per connection from GET /dashboard — index status, last syncs, object and
// custom code figures, by type, top packages and the Clean Core A–D counts.
import useSWR from 'swr'
import { Link } from 'react-router'
import { Card } from '../ui/controls'
import { useLandscape } from './context'
import { landscapePaths } from './paths'
import { captionClass, formatNumber, formatTime, ListState, StatusBadge, tableClass, tdClass, thClass } from './shared'
import { levels, type Dashboard } from './types'
import { LevelChart } from './LevelChart'

export function OverviewTab() {
  const { wsId } = useLandscape()
  const { data, error, isLoading } = useSWR<{ data: Dashboard[] }>(landscapePaths.dashboard(wsId))
  const list = data?.data ?? []
  return (
    <section aria-labelledby="overview-h" className="space-y-4">
      <h2 id="overview-h" className="text-base font-semibold">Overview</h2>
      <ListState wsId={wsId} isLoading={isLoading} error={error} empty={list.length === 0} loadingLabel="Loading the dashboard"
        emptyText="This workspace has no SAP connection yet. Add one in the workspace settings.">
        <div className="grid gap-4 xl:grid-cols-2">
          {list.map((d) => <ConnectionCard key={d.connection_id} d={d} wsId={wsId} />)}
        </div>
      </ListState>
    </section>
  )
}

function ConnectionCard({ d, wsId }: { d: Dashboard; wsId: string }) {
  const noIndex = d.status !== 'ready'
  return (
    <Card title={`${d.name} (${d.system_type})`}>
      <dl className="mb-3 grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-3">
        <Fact label="Index"><StatusBadge status={d.sync_status === 'syncing' ? 'syncing' : d.status} />{d.generation > 0 && <span className="ml-1 text-xs text-slate-600">generation {d.generation}</span>}</Fact>
        <Fact label="Last full sync">{formatTime(d.last_full_sync_at)}</Fact>
        <Fact label="Last delta sync">{formatTime(d.last_delta_sync_at)}</Fact>
        {!noIndex && <>
          <Fact label="Objects">{formatNumber(d.objects)}</Fact>
          <Fact label="Custom objects">{formatNumber(d.custom_objects)}</Fact>
          <Fact label="Custom code lines">{formatNumber(d.custom_code?.lines)} <span className="text-xs text-slate-600">in {formatNumber(d.custom_code?.objects)} objects</span></Fact>
          <Fact label="Relationships">{formatNumber(d.relationships)}</Fact>
        </>}
      </dl>
      {noIndex ? (
        <p className="text-sm">
          No index yet: start a sync.{' '}
          <Link className="font-medium text-brand-700 underline" to={`/w/${wsId}/landscape/sync`}>Start a sync</Link>
        </p>
      ) : (
        <div className="grid gap-4 md:grid-cols-2">
          <LevelChart title={`Clean Core levels of ${d.name}`}
            data={levels.map((l) => ({ level: l, objects: d.clean_core?.[l] ?? 0 }))} compact />
          <table className={tableClass}>
            <caption className={captionClass}>Objects by type</caption>
            <thead><tr><th scope="col" className={thClass}>Type</th><th scope="col" className={`${thClass} text-right`}>Objects</th><th scope="col" className={`${thClass} text-right`}>Custom</th></tr></thead>
            <tbody>
              {(d.by_type ?? []).map((t) => (
                <tr key={t.type}><th scope="row" className={`${tdClass} font-mono font-normal`}>{t.type}</th><td className={`${tdClass} text-right`}>{formatNumber(t.objects)}</td><td className={`${tdClass} text-right`}>{formatNumber(t.custom)}</td></tr>
              ))}
            </tbody>
          </table>
          <table className={`${tableClass} md:col-span-2`}>
            <caption className={captionClass}>Top packages</caption>
            <thead><tr><th scope="col" className={thClass}>Package</th><th scope="col" className={`${thClass} text-right`}>Objects</th><th scope="col" className={`${thClass} text-right`}>Custom</th></tr></thead>
            <tbody>
              {(d.by_package ?? []).length === 0 && <tr><td colSpan={3} className={tdClass}>No packages.</td></tr>}
              {(d.by_package ?? []).map((p) => (
                <tr key={p.name}><th scope="row" className={`${tdClass} font-mono font-normal`}>{p.name || '(none)'}</th><td className={`${tdClass} text-right`}>{formatNumber(p.objects)}</td><td className={`${tdClass} text-right`}>{formatNumber(p.custom)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  )
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs text-slate-600">{label}</dt>
      <dd>{children}</dd>
    </div>
  )
}
