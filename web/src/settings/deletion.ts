// Following a workspace or organization deletion (docs/api.md, "Deleting a workspace or an
// organization"): DELETE answers 202 with a status URL; its `step` walks to `done`.
import type { ResponseOf } from '../api/client'

export interface Deletion {
  deletion_id: string
  kind: 'workspace' | 'org'
  id: string
  step: string
  done: boolean
  agents: number
  files: number
  workspaces: number
  workspaces_done: number
}

export type DeletionStarted = ResponseOf<'deleteWorkspacesById'>

const STEPS: Record<string, string> = {
  hiding: 'Hiding it from everyone',
  stopping_conversations: 'Stopping conversations',
  deleting_events: 'Deleting event logs',
  deleting_files: 'Deleting files',
  deleting_workspaces: 'Deleting workspaces',
  deleting_rows: 'Deleting the stored data',
  sweeping_events: 'Sweeping the last events',
  done: 'Done',
}

/** A person-readable line for a deletion's state. */
export function describeDeletion(d: Pick<Deletion, 'step' | 'done' | 'workspaces' | 'workspaces_done'> | undefined): string {
  if (!d) return 'Starting the deletion'
  if (d.done) return STEPS.done
  const label = STEPS[d.step] ?? d.step
  if (d.step === 'deleting_workspaces' && d.workspaces > 0) return `${label} (${d.workspaces_done} of ${d.workspaces})`
  return label
}

/** Only the status routes of deletions are polled: a status URL is trusted only in that shape. */
export function isDeletionStatusUrl(url: string): boolean {
  return /^\/api\/deletions\/(workspace|org)\/[0-9a-f-]{36}$/.test(url)
}
