// The settings screens' API: SWR keys, shapes (from the generated schema) and calls of the
// tenancy and connection routes (docs/api.md).
import { api, type BodyOf, type ResponseOf } from '../api/client'
import { keys } from '../api/keys'
import type { Connection, Member, Org, Workspace } from '../api/types'
import type { DeletionStarted } from './deletion'

export const settingsKeys = {
  members: (wsId: string) => `/api/workspaces/${wsId}/members`,
  secrets: (wsId: string, connId: string) => `/api/workspaces/${wsId}/connections/${connId}/secrets`,
  credentials: '/api/user/sap-credentials',
  toolPolicy: (wsId: string) => `/api/workspaces/${wsId}/tool-policy`,
  health: (wsId: string) => `/api/workspaces/${wsId}/connector-health`,
  org: (orgId: string) => `/api/orgs/${orgId}`,
  orgMembers: (orgId: string) => `/api/orgs/${orgId}/members`,
}

export type SecretName = ResponseOf<'getWorkspacesByIdConnectionsByConnIdSecrets'>['data'][number]
export type SapCredential = ResponseOf<'getUserSapCredentials'>['data'][number]
export type ConnectorHealth = ResponseOf<'getWorkspacesByIdConnectorHealth'>['data'][number]
export type CheckResult = ResponseOf<'postWorkspacesByIdTestConnection'>
export type Check = CheckResult['checks'][number]
export type PolicyView = ResponseOf<'getWorkspacesByIdToolPolicy'>
type ConnectionBody = BodyOf<'postWorkspacesByIdConnections'>

export type ToolPolicy = BodyOf<'putWorkspacesByIdToolPolicy'>['policy']

/** Time as the reader's locale shows it. */
export function when(iso: string): string {
  const d = new Date(iso)
  return isNaN(d.getTime()) ? iso : d.toLocaleString()
}

/** Renames a workspace or changes its approval rules (admin). */
export const updateWorkspace = (wsId: string, patch: BodyOf<'patchWorkspacesById'>) =>
  api<Workspace>(keys.workspace(wsId), { method: 'PATCH', body: patch })

export const setToolPolicy = (wsId: string, policy: ToolPolicy) =>
  api<PolicyView>(settingsKeys.toolPolicy(wsId), { method: 'PUT', body: { policy } })

export const renameOrg = (orgId: string, name: string) => api<Org>(settingsKeys.org(orgId), { method: 'PATCH', body: { name } })

/** Starts deleting a workspace or an organization (path: its API path). */
export const startDeletion = (path: string) => api<DeletionStarted>(path, { method: 'DELETE' })

/** Adds a member to a list (or sets the role of one already there). */
export const addMember = (listPath: string, user: string, role: string) =>
  api<Member>(listPath, { method: 'POST', body: { user_id: user, role } })
export const setOrgMemberRole = (orgId: string, user: string, role: string) =>
  api<Member>(`${settingsKeys.orgMembers(orgId)}/${encodeURIComponent(user)}`, { method: 'PATCH', body: { role } })
export const removeMember = (memberPath: string) => api<void>(memberPath, { method: 'DELETE' })

const connectionPath = (wsId: string, connId: string) => `/api/workspaces/${wsId}/connections/${connId}`

export const createConnection = (wsId: string, body: ConnectionBody) =>
  api<Connection>(`/api/workspaces/${wsId}/connections`, { method: 'POST', body })
export const updateConnection = (wsId: string, connId: string, patch: ConnectionBody) =>
  api<Connection>(connectionPath(wsId, connId), { method: 'PATCH', body: patch })
export const deleteConnection = (wsId: string, connId: string) => api<void>(connectionPath(wsId, connId), { method: 'DELETE' })

/** Checks a saved connection as the caller. */
export const testConnection = (wsId: string, connId: string) =>
  api<CheckResult>(`/api/workspaces/${wsId}/test-connection`, { method: 'POST', body: { connection_id: connId } })
/** Checks unsaved settings (admin; nothing is stored). */
export const previewConnection = (wsId: string, body: BodyOf<'postWorkspacesByIdTestConnectionPreview'>) =>
  api<CheckResult>(`/api/workspaces/${wsId}/test-connection-preview`, { method: 'POST', body })

export const setSecret = (wsId: string, connId: string, name: string, value: string) =>
  api<ResponseOf<'putWorkspacesByIdConnectionsByConnIdSecretsByName'>>(`${settingsKeys.secrets(wsId, connId)}/${encodeURIComponent(name)}`, { method: 'PUT', body: { value } })
export const deleteSecret = (wsId: string, connId: string, name: string) =>
  api<void>(`${settingsKeys.secrets(wsId, connId)}/${encodeURIComponent(name)}`, { method: 'DELETE' })

export const setSapLogin = (connId: string, sapUser: string, password: string) =>
  api<SapCredential>(`${settingsKeys.credentials}/${connId}`, { method: 'PUT', body: { sap_user: sapUser, password } })
export const deleteSapLogin = (connId: string) => api<void>(`${settingsKeys.credentials}/${connId}`, { method: 'DELETE' })
