// API paths of the landscape routes. Object names may hold slashes (/ACME/CL_X): the route takes
// the rest of the path as the name, so each segment is escaped and the slashes are kept.

export function namePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/')
}

/** A query string of the non-empty values, in the given order. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue
    q.set(k, String(v))
  }
  const s = q.toString()
  return s ? '?' + s : ''
}

export const landscapePaths = {
  dashboard: (ws: string) => `/api/workspaces/${ws}/dashboard`,
  index: (ws: string) => `/api/workspaces/${ws}/index`,
  syncRuns: (ws: string) => `/api/workspaces/${ws}/sync-runs`,
  schedules: (ws: string) => `/api/workspaces/${ws}/sync-schedules`,
  cleanCoreObject: (ws: string, conn: string, type: string, name: string) =>
    `/api/workspaces/${ws}/clean-core/objects/${encodeURIComponent(type)}/${namePath(name)}${query({ connection_id: conn })}`,
  doc: (ws: string, conn: string, kind: string, subject: string) =>
    `/api/workspaces/${ws}/docs/${encodeURIComponent(kind)}/${namePath(subject)}${query({ connection_id: conn })}`,
}

/** The path of the next page: the first page's path with cursor= (replaced when present). */
export function withCursor(path: string, cursor: string | null): string {
  if (!cursor) return path
  const [base, qs = ''] = path.split('?')
  const q = new URLSearchParams(qs)
  q.set('cursor', cursor)
  return `${base}?${q.toString()}`
}
