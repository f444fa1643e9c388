// The REST client: every call carries the signed-in user's token in the Authorization header
// (never in a URL), and every failure becomes an ApiError with the API's {error, code}.
import { getToken, signalUnauthorized } from '../auth/token'
import type { operations } from './schema.gen'

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly retryAfter?: number
  constructor(status: number, code: string, message: string, retryAfter?: number) {
    super(message)
    this.status = status
    this.code = code
    this.retryAfter = retryAfter
  }
}

export interface ApiOptions {
  method?: string
  body?: unknown // JSON-encoded unless it is FormData
  headers?: Record<string, string>
  signal?: AbortSignal
}

export async function api<T>(path: string, opts: ApiOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers }
  const token = getToken()
  if (token) headers.Authorization = `Bearer ${token}`
  let body: BodyInit | undefined
  if (opts.body instanceof FormData) body = opts.body
  else if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json'
    body = JSON.stringify(opts.body)
  }
  let res: Response
  try {
    res = await fetch(path, { method: opts.method ?? 'GET', headers, body, signal: opts.signal })
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e
    throw new ApiError(0, 'network', 'The server cannot be reached. Check your connection and try again.')
  }
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let data: unknown = undefined
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = text
    }
  }
  if (!res.ok) {
    const err = (data ?? {}) as { error?: string; code?: string }
    const retry = Number(res.headers.get('Retry-After')) || undefined
    if (res.status === 401) signalUnauthorized()
    throw new ApiError(res.status, err.code ?? 'http_' + res.status, err.error ?? res.statusText, retry)
  }
  return data as T
}

/** SWR's fetcher: the key is the API path. */
export const fetcher = <T>(path: string) => api<T>(path)

/** A list page as the API returns it. */
export interface Page<T> {
  data: T[]
  next_cursor: string | null
  has_more: boolean
}

// Types of the API's answers and bodies, from web/src/api/schema.gen.ts (generated from
// schemas/openapi.json: npm run gen:api). Operations are named by their operationId there.
type Success<R> = R extends { 200: infer S } ? S : R extends { 201: infer S } ? S : R extends { 202: infer S } ? S : never
type JsonOf<S> = S extends { content: { 'application/json': infer J } } ? J : undefined

/** The JSON body of an operation's success answer. */
export type ResponseOf<Op extends keyof operations> = JsonOf<Success<operations[Op]['responses']>>

/** An operation's JSON request body. */
export type BodyOf<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never
