// Attachments: upload to POST /api/files, and open a stored file. Downloads need the
// Authorization header, so the bytes are fetched as a blob and opened from an object URL
// (the token never goes into a URL).
import { api, ApiError, type ResponseOf } from '../api/client'
import { getToken } from '../auth/token'

export type StoredFile = ResponseOf<'postFiles'>

export const acceptedFiles = 'application/pdf,image/png,image/jpeg,image/gif,image/webp,text/plain,text/markdown,text/csv,.md,.csv,.txt'

export function uploadFile(workspaceId: string, file: File, signal?: AbortSignal): Promise<StoredFile> {
  const body = new FormData()
  body.append('workspace_id', workspaceId)
  body.append('file', file)
  return api<StoredFile>('/api/files', { method: 'POST', body, signal })
}

export async function openFile(fileId: string, name: string): Promise<void> {
  const token = getToken()
  const res = await fetch(`/api/files/${encodeURIComponent(fileId)}/content`, { headers: token ? { Authorization: `Bearer ${token}` } : {} })
  if (!res.ok) {
    let msg = res.statusText
    let code = `http_${res.status}`
    try {
      const j = (await res.json()) as { error?: string; code?: string }
      msg = j.error ?? msg
      code = j.code ?? code
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, code, msg)
  }
  const url = URL.createObjectURL(await res.blob())
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.rel = 'noopener'
  document.body.appendChild(a)
  a.click()
  a.remove()
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${(n / 1024 / 1024).toFixed(1)} MB`
}
