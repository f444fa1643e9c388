// Tool calls waiting for a decision: approve or reject each (with an optional reason) or all at
// once; buttons only for the people the workspace's rules let decide, "waiting for …" for others.
import { memo, useId, useState } from 'react'
import { ApiError } from '../api/client'
import { Button, ErrorBanner } from '../ui/controls'
import type { Allowed } from './approvalRules'
import type { PendingApproval } from './reducer'
import { prettyJSON } from './ToolCard'

export interface Decision {
  tool_call_id: string
  approved: boolean
  reason?: string
}

interface CardProps {
  approval: PendingApproval
  allowed: Allowed
  reason: string
  onReason: (v: string) => void
  onDecide: (approved: boolean) => void
  busy: boolean
  error: unknown
}

function ApprovalCard({ approval, allowed, reason, onReason, onDecide, busy, error }: CardProps) {
  const id = useId()
  const after = approval.mode === 'confirm_after_execution'
  return (
    <section aria-label={`Approval for ${approval.tool}`} className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm">
      <h3 className="font-medium">
        <span className="font-mono">{approval.tool}</span>{' '}
        {after ? 'ran and waits for your review' : 'waits for approval before it runs'}
      </h3>
      {approval.requested_by && <p className="text-xs text-slate-700">Requested by {approval.requested_by}</p>}
      <details className="mt-1" open>
        <summary className="cursor-pointer text-xs font-medium text-slate-700">Arguments</summary>
        <pre tabIndex={0} className="max-h-48 overflow-auto whitespace-pre-wrap break-words rounded bg-white p-2 font-mono text-xs">{prettyJSON(approval.arguments)}</pre>
      </details>
      {after && approval.result?.content && (
        <details className="mt-1">
          <summary className="cursor-pointer text-xs font-medium text-slate-700">Result to review</summary>
          <pre tabIndex={0} className="max-h-48 overflow-auto whitespace-pre-wrap break-words rounded bg-white p-2 font-mono text-xs">{approval.result.content}</pre>
        </details>
      )}
      {allowed.note && <p className="mt-2 text-xs text-slate-800">{allowed.note}</p>}
      {(allowed.approve || allowed.reject) && (
        <div className="mt-2 space-y-2">
          <div>
            <label htmlFor={id} className="block text-xs font-medium text-slate-800">Reason (optional)</label>
            <input id={id} value={reason} onChange={(e) => onReason(e.target.value)} maxLength={1000}
              className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1 text-sm" />
          </div>
          <div className="flex gap-2">
            {allowed.approve && <Button onClick={() => onDecide(true)} disabled={busy}>Approve</Button>}
            {allowed.reject && <Button variant="danger" onClick={() => onDecide(false)} disabled={busy}>Reject</Button>}
          </div>
        </div>
      )}
      <ErrorBanner error={error} className="mt-2" />
    </section>
  )
}

/** The pending approvals above the composer. `decide` sends one request for all decisions. */
export const ApprovalPanel = memo(function ApprovalPanel({ approvals, allowedFor, decide }: {
  approvals: PendingApproval[]
  allowedFor: (a: PendingApproval) => Allowed
  decide: (ds: Decision[]) => Promise<ApiError | null>
}) {
  const [reasons, setReasons] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<Record<string, unknown>>({})
  const [allError, setAllError] = useState<unknown>(null)
  if (!approvals.length) return null

  const decision = (a: PendingApproval, approved: boolean): Decision => {
    const reason = reasons[a.tool_call_id]?.trim()
    return reason ? { tool_call_id: a.tool_call_id, approved, reason } : { tool_call_id: a.tool_call_id, approved }
  }
  async function run(ds: Decision[], errorKey: string | null) {
    setBusy(true)
    const err = await decide(ds)
    setBusy(false)
    if (errorKey) setErrors((e) => ({ ...e, [errorKey]: err }))
    else setAllError(err)
  }
  const approvable = approvals.filter((a) => allowedFor(a).approve)
  const rejectable = approvals.filter((a) => allowedFor(a).reject)

  return (
    <section aria-label="Pending approvals" className="space-y-2 border-t border-slate-200 bg-white px-4 py-3">
      <h2 className="text-sm font-semibold">{approvals.length === 1 ? 'A tool call needs a decision' : `${approvals.length} tool calls need a decision`}</h2>
      {approvals.length > 1 && (approvable.length > 1 || rejectable.length > 1) && (
        <div className="flex gap-2">
          {approvable.length > 1 && <Button variant="secondary" disabled={busy} onClick={() => run(approvable.map((a) => decision(a, true)), null)}>Approve all</Button>}
          {rejectable.length > 1 && <Button variant="secondary" disabled={busy} onClick={() => run(rejectable.map((a) => decision(a, false)), null)}>Reject all</Button>}
        </div>
      )}
      <ErrorBanner error={allError} />
      <div className="max-h-[40vh] space-y-2 overflow-y-auto">
        {approvals.map((a) => (
          <ApprovalCard key={a.tool_call_id} approval={a} allowed={allowedFor(a)} busy={busy}
            reason={reasons[a.tool_call_id] ?? ''} onReason={(v) => setReasons((r) => ({ ...r, [a.tool_call_id]: v }))}
            onDecide={(approved) => run([decision(a, approved)], a.tool_call_id)} error={errors[a.tool_call_id]} />
        ))}
      </div>
    </section>
  )
})
