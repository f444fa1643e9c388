// Who may decide a tool call (docs/api.md, "Who decides a tool call"): the requester by default;
// workspace admins (and org owners/admins) too with `admins_may_approve`; with `four_eyes` a
// write that has not run yet needs a second person: its requester may only reject it (also when
// the call was requested under four eyes and the workspace has switched it off since).
import type { PendingApproval } from './reducer'

export interface Decider {
  user: string
  workspaceRole: string // 'admin' | 'member' | '' (org owner/admin without membership)
  orgRole?: string // 'owner' | 'admin' | 'member'
  adminsMayApprove: boolean
  fourEyes: boolean
}

export interface Allowed {
  approve: boolean
  reject: boolean
  /** Why the buttons are missing or limited, for the card. */
  note?: string
}

export function allowedDecisions(a: PendingApproval, d: Decider): Allowed {
  const isAdmin = d.workspaceRole === 'admin' || d.orgRole === 'owner' || d.orgRole === 'admin'
  const requester = a.requested_by ?? ''
  const mine = requester === '' || requester === d.user
  if ((d.fourEyes || a.four_eyes) && a.mode === 'confirm_before_execution') {
    if (mine && requester !== '') return { approve: false, reject: true, note: 'Four-eyes rule: another member of the workspace must approve this call.' }
    return { approve: true, reject: true }
  }
  if (mine || (d.adminsMayApprove && isAdmin)) return { approve: true, reject: true }
  return { approve: false, reject: false, note: `Waiting for ${requester}` }
}
