// The shell's API: creating the organizations and workspaces it lists (docs/api.md).
import { api } from '../api/client'
import type { Org, Workspace } from '../api/types'

export const createOrg = (name: string) => api<Org>('/api/orgs', { method: 'POST', body: { name } })

export const createWorkspace = (orgId: string, name: string) =>
  api<Workspace>('/api/workspaces', { method: 'POST', body: { org_id: orgId, name } })
