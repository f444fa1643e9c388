// A running sync's progress as an accessible progress bar: aria-valuenow is the percentage of
// the current phase when the connector announced a total, otherwise the bar is indeterminate
// and the text says how many items are done. A run waiting for SAP says so above the bar.
import { phaseLabel, phasePercent, progressText, waitingText, type LiveRun } from './progress'
import { formatTime } from './shared'

export function SyncProgress({ run, label }: { run: LiveRun; label: string }) {
  const pct = phasePercent(run)
  return (
    <div className="space-y-1">
      {run.waiting && (
        <p role="status" className="rounded border border-amber-300 bg-amber-50 px-2 py-1 text-sm text-amber-900">{waitingText(run.waiting, formatTime)}</p>
      )}
      <div className="flex justify-between text-xs text-slate-700">
        <span>{run.mode && <span className="font-medium">{run.mode} · </span>}{phaseLabel(run.phase)}</span>
        <span>{run.total ? `${run.done.toLocaleString()} / ${run.total.toLocaleString()}` : `${run.done.toLocaleString()} items`}{pct !== undefined && ` · ${pct}%`}</span>
      </div>
      <div role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100}
        aria-valuenow={pct} aria-valuetext={progressText(run)}
        className="h-2.5 w-full overflow-hidden rounded-full bg-slate-200">
        {pct !== undefined
          ? <div className="h-full rounded-full bg-brand-600 transition-[width]" style={{ width: `${pct}%` }} />
          : <div className="h-full w-1/3 animate-pulse rounded-full bg-brand-600" />}
      </div>
    </div>
  )
}
