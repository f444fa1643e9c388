// The checks of a connection test, each with ok or its error.
import { CHECK_LABELS } from './connectionForm'
import type { CheckResult } from './api'

export function CheckList({ result }: { result: CheckResult }) {
  return (
    <div role="status" aria-label="Connection test result" className="rounded-md border border-slate-200 p-3">
      <p className={`mb-2 text-sm font-medium ${result.ok ? 'text-green-800' : 'text-red-800'}`}>
        {result.ok ? 'All checks passed.' : 'Some checks failed.'}
      </p>
      <ul className="space-y-1 text-sm">
        {result.checks.map((c) => (
          <li key={c.name} className="flex flex-wrap gap-x-2">
            <span aria-hidden className={c.ok ? 'text-green-700' : 'text-red-700'}>{c.ok ? '✓' : '✗'}</span>
            <span className="font-medium">{CHECK_LABELS[c.name] ?? c.name}:</span>
            <span className={c.ok ? 'text-green-800' : 'text-red-800'}>{c.ok ? 'ok' : 'error'}</span>
            <span className="text-slate-600">{c.ok ? c.info : c.error} ({c.ms} ms)</span>
          </li>
        ))}
      </ul>
    </div>
  )
}
