// Shapes of the API's resources the pages share (docs/api.md).
export interface Org {
  id: string
  name: string
  role: 'owner' | 'admin' | 'member'
  created_by: string
  created_at: string
}

export interface Workspace {
  id: string
  org_id: string
  name: string
  role: 'admin' | 'member' | ''
  settings: Record<string, unknown>
  admins_may_approve: boolean
  four_eyes: boolean
  max_tool_policy: 'ask_every_time' | 'run_reads_only' | 'run_everything'
  created_by: string
  created_at: string
}

// A conversation, as the event protocol's init frame carries it too (generated from Go).
export type { Agent } from '../chat/events.gen'

export interface Member {
  user_id: string
  role: string
  created_at: string
}

export interface Connection {
  id: string
  workspace_id: string
  name: string
  system_type: 'ECC' | 'S4HANA'
  connector_url: string
  environment: string
  simulated: boolean
  credential_mode: 'user_login_required' | 'technical_user_reads' | 'technical_user_all'
  sync_full_cron: string
  sync_delta_cron: string
  sync_timezone: string
  created_at: string
  updated_at: string
}
