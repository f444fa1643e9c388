// SWR keys shared between pages, so a change in one place (a new title, a new agent) can
// refresh what another shows with mutate(key).
export const keys = {
  orgs: '/api/orgs?limit=500',
  workspaces: (orgId: string) => `/api/workspaces?org_id=${orgId}&limit=500`,
  workspace: (wsId: string) => `/api/workspaces/${wsId}`,
  agents: (wsId: string, archived = false) => `/api/agents?workspace_id=${wsId}&limit=500${archived ? '&archived=true' : ''}`,
  agent: (agentId: string) => `/api/agents/${agentId}`,
  connections: (wsId: string) => `/api/workspaces/${wsId}/connections?limit=500`,
}
