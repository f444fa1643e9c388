import { describe, expect, it } from 'vitest'
import { describeDeletion, isDeletionStatusUrl } from './deletion'

describe('describeDeletion', () => {
  it('names each step and counts workspaces of an org', () => {
    expect(describeDeletion(undefined)).toBe('Starting the deletion')
    expect(describeDeletion({ step: 'deleting_files', done: false, workspaces: 0, workspaces_done: 0 })).toBe('Deleting files')
    expect(describeDeletion({ step: 'deleting_workspaces', done: false, workspaces: 3, workspaces_done: 1 })).toBe('Deleting workspaces (1 of 3)')
    expect(describeDeletion({ step: 'sweeping_events', done: true, workspaces: 0, workspaces_done: 0 })).toBe('Done')
    expect(describeDeletion({ step: 'new_step', done: false, workspaces: 0, workspaces_done: 0 })).toBe('new_step')
  })
})

describe('isDeletionStatusUrl', () => {
  it('accepts only deletion status routes', () => {
    expect(isDeletionStatusUrl('/api/deletions/workspace/0b8f7a9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b')).toBe(true)
    expect(isDeletionStatusUrl('/api/deletions/org/0b8f7a9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b')).toBe(true)
    expect(isDeletionStatusUrl('https://evil.example/api/deletions/org/x')).toBe(false)
    expect(isDeletionStatusUrl('/api/workspaces/0b8f7a9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b')).toBe(false)
  })
})
