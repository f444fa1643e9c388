import { describe, expect, it } from 'vitest'
import { allowedDecisions, type Decider } from './approvalRules'
import type { PendingApproval } from './reducer'

const write: PendingApproval = { tool_call_id: 'c1', tool: 'save_note', arguments: '{}', mode: 'confirm_before_execution', requested_by: 'alice' }
const ran: PendingApproval = { ...write, mode: 'confirm_after_execution' }
const base: Decider = { user: 'alice', workspaceRole: 'member', adminsMayApprove: false, fourEyes: false }

describe('who decides a tool call', () => {
  it('by default only the requester', () => {
    expect(allowedDecisions(write, base)).toEqual({ approve: true, reject: true })
    expect(allowedDecisions(write, { ...base, user: 'bob' })).toMatchObject({ approve: false, reject: false, note: 'Waiting for alice' })
    expect(allowedDecisions(write, { ...base, user: 'bob', workspaceRole: 'admin' })).toMatchObject({ approve: false, reject: false })
  })
  it('admins too with admins_may_approve (org owners/admins count as admins)', () => {
    const d = { ...base, adminsMayApprove: true }
    expect(allowedDecisions(write, { ...d, user: 'bob', workspaceRole: 'admin' })).toMatchObject({ approve: true, reject: true })
    expect(allowedDecisions(write, { ...d, user: 'bob', workspaceRole: '', orgRole: 'owner' })).toMatchObject({ approve: true, reject: true })
    expect(allowedDecisions(write, { ...d, user: 'bob' })).toMatchObject({ approve: false, reject: false })
  })
  it('four eyes: the requester may only reject a write; any other member may decide', () => {
    const d = { ...base, fourEyes: true }
    expect(allowedDecisions(write, d)).toMatchObject({ approve: false, reject: true })
    expect(allowedDecisions(write, { ...d, user: 'bob' })).toMatchObject({ approve: true, reject: true })
    // A call that already ran keeps the default rule.
    expect(allowedDecisions(ran, d)).toMatchObject({ approve: true, reject: true })
    expect(allowedDecisions(ran, { ...d, user: 'bob' })).toMatchObject({ approve: false, reject: false })
  })
  it('four eyes of the request holds after the workspace switched it off', () => {
    const requested = { ...write, four_eyes: true }
    expect(allowedDecisions(requested, { ...base, adminsMayApprove: true, workspaceRole: 'admin' })).toMatchObject({ approve: false, reject: true })
    expect(allowedDecisions(requested, { ...base, user: 'bob' })).toMatchObject({ approve: true, reject: true })
  })
})
