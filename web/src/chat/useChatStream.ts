// The chat's connection: one resumable WebSocket per open conversation, frames folded by the
// reducer once per animation frame (a 50 tokens/s reply is then one render per frame, not one
// per delta), and commands (message, approve, stop) answered by their ack / command_error.
import { useCallback, useEffect, useReducer, useRef } from 'react'
import { ApiError } from '../api/client'
import { EventStream } from '../api/stream'
import type { AgentFrame } from './events.gen'
import { postCommand } from './api'
import { chatReducer, initialState } from './reducer'

/** What a command got: the REST route's status and body, whichever way it travelled. */
export interface CommandResult {
  http_status: number
  result: Record<string, unknown> | null
}

const commandTimeoutMs = 20_000

export function newId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** The message of a failed command's body ({error, code}). */
export function commandError(r: CommandResult): ApiError {
  const body = (r.result ?? {}) as { error?: string; code?: string }
  return new ApiError(r.http_status, body.code ?? `http_${r.http_status}`, body.error ?? `request failed (${r.http_status})`)
}

export function useChatStream(agentId: string) {
  const [state, dispatch] = useReducer(chatReducer, initialState)
  const streamRef = useRef<EventStream<AgentFrame> | null>(null)
  const waiting = useRef(new Map<string, (r: CommandResult) => void>())

  useEffect(() => {
    let queue: AgentFrame[] = []
    let raf = 0
    let timer = 0
    const flush = () => {
      raf = 0
      window.clearTimeout(timer)
      timer = 0
      if (!queue.length) return
      const events = queue
      queue = []
      dispatch({ type: 'local/batch', events })
    }
    const schedule = () => {
      if (raf || timer) return
      // rAF does not run in a hidden tab; a timer keeps a background tab in step.
      if (document.hidden) timer = window.setTimeout(flush, 200)
      else raf = requestAnimationFrame(flush)
    }
    const pending = waiting.current
    const stream = new EventStream<AgentFrame>({
      path: `/api/agents/${agentId}/ws`,
      onFrame: (f) => {
        if (f.type === 'ack' || f.type === 'command_error') {
          const done = pending.get(f.request_id)
          pending.delete(f.request_id)
          // result is the REST route's body: an object, or null.
          done?.({ http_status: Number(f.http_status) || (f.type === 'ack' ? 200 : 500), result: (f.result as Record<string, unknown> | null) ?? null })
          return
        }
        queue.push(f)
        schedule()
      },
      onState: (s, detail) => {
        flush() // frames before the state change stay before it
        dispatch({ type: 'local/socket', state: s, detail })
      },
    })
    streamRef.current = stream
    return () => {
      streamRef.current = null
      stream.close()
      if (raf) cancelAnimationFrame(raf)
      window.clearTimeout(timer)
      for (const done of pending.values()) done({ http_status: 0, result: { error: 'the conversation was closed', code: 'closed' } })
      pending.clear()
    }
  }, [agentId])

  /** Sends a command over the socket; falls back to the REST route when it is not open. */
  const command = useCallback(
    async (type: 'message' | 'approve' | 'stop', body: Record<string, unknown>, restPath: string): Promise<CommandResult> => {
      const requestId = newId()
      const viaSocket = new Promise<CommandResult>((resolve) => {
        waiting.current.set(requestId, resolve)
        window.setTimeout(() => {
          if (waiting.current.delete(requestId)) resolve({ http_status: 0, result: { error: 'the server did not answer in time; try again', code: 'timeout' } })
        }, commandTimeoutMs)
      })
      if (streamRef.current?.send({ type, request_id: requestId, ...body })) return viaSocket
      waiting.current.delete(requestId)
      try {
        const result = await postCommand(restPath, body)
        return { http_status: 200, result: result ?? null }
      } catch (e) {
        const err = e instanceof ApiError ? e : new ApiError(0, 'network', String(e))
        return { http_status: err.status, result: { error: err.message, code: err.code } }
      }
    },
    [],
  )

  return { state, dispatch, command }
}
