// SWR keys and shapes of the settings routes (docs/api.md) that only these screens use.
export const settingsKeys = {
  members: (wsId: string) => `/api/workspaces/${wsId}/members`,
  secrets: (wsId: string, connId: string) => `/api/workspaces/${wsId}/connections/${connId}/secrets`,
  credentials: '/api/user/sap-credentials',
  toolPolicy: (wsId: string) => `/api/workspaces/${wsId}/tool-policy`,
  health: (wsId: string) => `/api/workspaces/${wsId}/connector-health`,
  org: (orgId: string) => `/api/orgs/${orgId}`,
  orgMembers: (orgId: string) => `/api/orgs/${orgId}/members`,
}

export interface SecretName {
  name: string
  updated_at: string
  invalidated: boolean
  invalidated_reason?: string
}

export interface SapCredential {
  connection_id: string
  connection_name: string
  workspace_id: string
  sap_user: string
  updated_at: string
  invalidated: boolean
  invalidated_reason?: string
}

export interface ConnectorHealth {
  connection_id: string
  name: string
  reachable: boolean
  latency_ms: number
  system_id?: string
  system_type?: string
  release?: string
  error?: string
}

export interface Check {
  name: string
  ok: boolean
  ms: number
  error?: string
  info?: string
}

export interface CheckResult {
  ok: boolean
  checks: Check[]
}

export type ToolPolicy = 'ask_every_time' | 'run_reads_only' | 'run_everything'

/** Time as the reader's locale shows it. */
export function when(iso: string): string {
  const d = new Date(iso)
  return isNaN(d.getTime()) ? iso : d.toLocaleString()
}
